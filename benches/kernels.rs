//! Benchmark (not a test): prints a table of JIT run time against the same
//! kernels compiled by `cc -O2` (benches/c/kernels.c), and compile latency
//! (source text to callable function) for every example.
//!
//! Run: `cargo bench --bench kernels`.

use adc::{ArgValue, ArrayValue};
use std::time::Instant;

const KERNELS: &str = r#"
const double LOG_2PI = 1.8378770664093453;
double gmm(double[] x, double[] weights, double[] mu, double[] sigma) {
    int k_count = len(mu);
    double total = 0.0;
    double lp[k_count];
    for (int n = 0; n < len(x); n++) {
        double best = -1e300;
        for (int k = 0; k < k_count; k++) {
            double z = (x[n] - mu[k]) / sigma[k];
            lp[k] = log(weights[k]) - log(sigma[k]) - 0.5 * (LOG_2PI + z * z);
            best = max(best, lp[k]);
        }
        double s = 0.0;
        for (int k = 0; k < k_count; k++) s += exp(lp[k] - best);
        total += best + log(s);
    }
    return total;
}
double sigmoid(double v) { return 1.0 / (1.0 + exp(-v)); }
double lstm(double[] w, double[] b, double[] x, double[] h, double[] c) {
    int hs = len(h);
    int xs = len(x);
    int cols = xs + hs;
    double s = 0.0;
    double gate[4];
    for (int k = 0; k < hs; k++) {
        for (int g = 0; g < 4; g++) {
            int row = g * hs + k;
            double acc = b[row];
            for (int j = 0; j < xs; j++) acc += w[row * cols + j] * x[j];
            for (int j = 0; j < hs; j++) acc += w[row * cols + xs + j] * h[j];
            gate[g] = acc;
        }
        double cn = sigmoid(gate[1]) * c[k] + sigmoid(gate[0]) * tanh(gate[2]);
        double hn = sigmoid(gate[3]) * tanh(cn);
        s += hn + 0.5 * cn;
    }
    return s;
}
double heat(inout double[] u, double alpha, int steps) {
    int n = len(u);
    double next[n];
    for (int t = 0; t < steps; t++) {
        next[0] = u[0];
        next[n - 1] = u[n - 1];
        for (int i = 1; i < n - 1; i++) next[i] = u[i] + alpha * (u[i - 1] - 2.0 * u[i] + u[i + 1]);
        for (int i = 0; i < n; i++) u[i] = next[i];
    }
    double e = 0.0;
    for (int i = 0; i < n; i++) e += u[i] * u[i];
    return e;
}
"#;

fn f64s(n: usize, f: impl Fn(usize) -> f64) -> ArgValue {
    ArgValue::Array(ArrayValue::F64((0..n).map(f).collect()))
}

fn best_of(reps: usize, mut run: impl FnMut()) -> f64 {
    let mut best = f64::MAX;
    for _ in 0..5 {
        let t = Instant::now();
        for _ in 0..reps {
            run();
        }
        best = best.min(t.elapsed().as_secs_f64() / reps as f64);
    }
    best
}

fn c_times() -> Option<Vec<(String, f64)>> {
    let dir = std::env::temp_dir().join("adc-bench");
    std::fs::create_dir_all(&dir).ok()?;
    let exe = dir.join("kernels_c");
    let src = concat!(env!("CARGO_MANIFEST_DIR"), "/benches/c/kernels.c");
    let ok = std::process::Command::new("cc")
        .args(["-O2", src, "-lm", "-o"])
        .arg(&exe)
        .status()
        .ok()?
        .success();
    if !ok {
        return None;
    }
    let out = std::process::Command::new(&exe).output().ok()?;
    Some(
        String::from_utf8_lossy(&out.stdout)
            .lines()
            .filter_map(|l| {
                let mut it = l.split_whitespace();
                Some((it.next()?.to_string(), it.next()?.parse().ok()?))
            })
            .collect(),
    )
}

fn main() {
    let jit = adc::compile_jit("kernels.ad", KERNELS, false).expect("kernels compile");
    let (n, k, hs, xs, hn, steps) = (100_000usize, 8usize, 64usize, 64usize, 1000usize, 200i64);
    let mut gmm_args = vec![
        f64s(n, |i| (i as f64).sin() * 3.0),
        f64s(k, |_| 1.0 / k as f64),
        f64s(k, |j| j as f64 - 4.0),
        f64s(k, |j| 0.5 + 0.1 * j as f64),
    ];
    let mut lstm_args = vec![
        f64s(4 * hs * (xs + hs), |i| 0.01 * (i as f64).sin()),
        f64s(4 * hs, |i| 0.001 * i as f64),
        f64s(xs, |i| (i as f64).cos()),
        f64s(hs, |i| 0.1 * (i as f64).sin()),
        f64s(hs, |i| 0.2 * (i as f64).cos()),
    ];
    let heat_init = |i: usize| (0.01 * i as f64).sin();
    let jit_times = [
        (
            "gmm",
            best_of(5, || {
                jit.call("gmm", &mut gmm_args).expect("gmm runs");
            }),
        ),
        (
            "lstm",
            best_of(200, || {
                jit.call("lstm", &mut lstm_args).expect("lstm runs");
            }),
        ),
        (
            "heat",
            best_of(5, || {
                let mut args = vec![
                    f64s(hn, heat_init),
                    ArgValue::Scalar(adc::Constant::F64(0.25)),
                    ArgValue::Scalar(adc::Constant::I64(steps)),
                ];
                jit.call("heat", &mut args).expect("heat runs");
            }),
        ),
    ];
    let c = c_times();
    println!("| kernel | adc JIT (ms) | cc -O2 (ms) | ratio |");
    println!("|---|---|---|---|");
    for (name, t) in jit_times {
        let ct = c
            .as_ref()
            .and_then(|c| c.iter().find(|(n, _)| n == name).map(|(_, t)| *t));
        match ct {
            Some(ct) => println!(
                "| {name} | {:.3} | {:.3} | {:.2} |",
                t * 1e3,
                ct * 1e3,
                t / ct
            ),
            None => println!("| {name} | {:.3} | (no cc) | - |", t * 1e3),
        }
    }
    println!();
    println!("| example | compile latency, source to callable (ms, best of 20) |");
    println!("|---|---|");
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/examples");
    let mut files: Vec<_> = std::fs::read_dir(dir)
        .expect("examples")
        .map(|e| e.expect("entry").path())
        .collect();
    files.sort();
    for path in files
        .iter()
        .filter(|p| p.extension().is_some_and(|e| e == "ad"))
    {
        let source = std::fs::read_to_string(path).expect("read example");
        let name = path
            .file_name()
            .and_then(|n| n.to_str())
            .unwrap_or("?")
            .to_string();
        let mut best = f64::MAX;
        for _ in 0..20 {
            let t = Instant::now();
            let j = adc::compile_jit(&name, &source, false).expect("compiles");
            best = best.min(t.elapsed().as_secs_f64());
            drop(j);
        }
        println!("| {name} | {:.2} |", best * 1e3);
    }
}
