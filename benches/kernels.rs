//! Benchmark (not a test): prints a table of JIT run time of the example
//! kernels (`gmm_loglik`, `lstm_loss`, `heat_energy`) against their C
//! translations compiled by `cc -O2` (benches/c/kernels.c), and compile latency
//! (source text to callable function) for every example.
//!
//! Run: `cargo bench --bench kernels`.

mod common;

use adc::ArgValue;
use common::{best_of, f64s};
use std::time::Instant;

/// The kernels are the example programs themselves.
const KERNEL_FILES: [&str; 3] = ["gmm.ad", "lstm.ad", "heat.ad"];

fn examples_dir() -> &'static str {
    concat!(env!("CARGO_MANIFEST_DIR"), "/examples")
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
    let [gmm, lstm, heat] = KERNEL_FILES.map(|f| {
        let source =
            std::fs::read_to_string(format!("{}/{f}", examples_dir())).expect("read example");
        adc::compile_jit(f, &source, false).expect("example compiles")
    });
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
                gmm.call("gmm_loglik", &mut gmm_args).expect("gmm runs");
            }),
        ),
        (
            "lstm",
            best_of(200, || {
                lstm.call("lstm_loss", &mut lstm_args).expect("lstm runs");
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
                heat.call("heat_energy", &mut args).expect("heat runs");
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
    let dir = examples_dir();
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
