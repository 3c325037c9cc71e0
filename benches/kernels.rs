//! Benchmark (not a test): prints a table of JIT run time of the example
//! kernels (`gmm_loglik`, `lstm_loss`, `heat_energy`) against their C
//! translations compiled by `cc -O2` (benches/c/kernels.c), and compile latency
//! (source text to callable function) for every example.
//!
//! Run: `cargo bench --bench kernels`.

mod common;

use common::best_of;
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
    let vec_of = |n: usize, f: &dyn Fn(usize) -> f64| -> Vec<f64> { (0..n).map(f).collect() };
    let mut x = vec_of(n, &|i| (i as f64).sin() * 3.0);
    let mut w = vec_of(k, &|_| 1.0 / k as f64);
    let mut mu = vec_of(k, &|j| j as f64 - 4.0);
    let mut sigma = vec_of(k, &|j| 0.5 + 0.1 * j as f64);
    let mut lstm_args = [
        vec_of(4 * hs * (xs + hs), &|i| 0.01 * (i as f64).sin()),
        vec_of(4 * hs, &|i| 0.001 * i as f64),
        vec_of(xs, &|i| (i as f64).cos()),
        vec_of(hs, &|i| 0.1 * (i as f64).sin()),
        vec_of(hs, &|i| 0.2 * (i as f64).cos()),
    ];
    let heat_init = vec_of(hn, &|i| (0.01 * i as f64).sin());
    let mut u = heat_init.clone();
    // The JIT side is called through its C-ABI entry points (LANGUAGE.md
    // §7), as C code would call an `adc compile`d object: no checked-call
    // copies. SAFETY (the transmutes): these are the §7 types of the
    // examples' signatures (an array is a pointer and a length).
    type Gmm = extern "C" fn(*mut f64, i64, *mut f64, i64, *mut f64, i64, *mut f64, i64) -> f64;
    type Lstm = extern "C" fn(
        *mut f64,
        i64,
        *mut f64,
        i64,
        *mut f64,
        i64,
        *mut f64,
        i64,
        *mut f64,
        i64,
    ) -> f64;
    type Heat = extern "C" fn(*mut f64, i64, f64, i64) -> f64;
    let raw = |j: &adc::JitModule, name: &str| j.raw_function(name).expect("function exists");
    let gmm_fn: Gmm = unsafe { std::mem::transmute(raw(&gmm, "gmm_loglik")) };
    let lstm_fn: Lstm = unsafe { std::mem::transmute(raw(&lstm, "lstm_loss")) };
    let heat_fn: Heat = unsafe { std::mem::transmute(raw(&heat, "heat_energy")) };
    let p = |v: &mut Vec<f64>| (v.as_mut_ptr(), v.len() as i64);
    let jit_times = [
        (
            "gmm",
            best_of(5, || {
                let ((a, an), (b, bn), (c, cn), (d, dn)) =
                    (p(&mut x), p(&mut w), p(&mut mu), p(&mut sigma));
                std::hint::black_box(gmm_fn(a, an, b, bn, c, cn, d, dn));
            }),
        ),
        (
            "lstm",
            best_of(200, || {
                let [lw, lb, lx, lh, lc] = &mut lstm_args;
                let ((a, an), (b, bn), (c, cn), (d, dn), (e, en)) =
                    (p(lw), p(lb), p(lx), p(lh), p(lc));
                std::hint::black_box(lstm_fn(a, an, b, bn, c, cn, d, dn, e, en));
            }),
        ),
        (
            "heat",
            best_of(5, || {
                u.copy_from_slice(&heat_init);
                let (a, an) = p(&mut u);
                std::hint::black_box(heat_fn(a, an, 0.25, steps));
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
