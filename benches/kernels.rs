//! Benchmark (not a test): prints a table of JIT run time of the example
//! kernels (`gmm_loglik`, `lstm_loss`, `heat_energy`) and of three kernels
//! of GradBench's shapes in benches/ad (`matmul`: ht's matrix-multiply nest;
//! `reproj`: ba's projection with 3-vectors; `rk4`: an ODE stepper) against
//! their C translations compiled by `cc -O2` (benches/c/kernels.c), and
//! compile latency (source text to callable function) for every example.
//! Both sides run in alternating rounds (`ADC_BENCH_ROUNDS`, default 3),
//! each side's least time over them.
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

/// benches/c/kernels.c compiled by `cc -O2`, or `None` without `cc`.
fn build_c() -> Option<std::path::PathBuf> {
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
    ok.then_some(exe)
}

/// One run of the C kernels: each kernel's best time.
fn c_times(exe: &std::path::Path) -> Option<Vec<(String, f64)>> {
    let out = std::process::Command::new(exe).output().ok()?;
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

/// Each name's least time over `runs`.
fn least<N: AsRef<str> + Clone>(runs: &[Vec<(N, f64)>]) -> Vec<(N, f64)> {
    let mut out: Vec<(N, f64)> = Vec::new();
    for (name, t) in runs.iter().flatten() {
        match out.iter_mut().find(|(n, _)| n.as_ref() == name.as_ref()) {
            Some((_, best)) => *best = best.min(*t),
            None => out.push((name.clone(), *t)),
        }
    }
    out
}

/// The kernels of benches/ad, on the inputs benches/c/kernels.c builds.
fn gradbench_shapes() -> Vec<(&'static str, f64)> {
    let load = |f: &str| {
        let path = format!("{}/benches/ad/{f}", env!("CARGO_MANIFEST_DIR"));
        let source = std::fs::read_to_string(&path).expect("read kernel");
        adc::compile_jit(f, &source, &adc::CompileOptions::default()).expect("kernel compiles")
    };
    let (mm, pr, ode) = (load("matmul.ad"), load("project.ad"), load("ode.ad"));
    let (n, points, state, steps) = (96usize, 20_000usize, 32usize, 2000i64);
    let a: Vec<f64> = (0..n * n).map(|i| (0.1 * i as f64).sin()).collect();
    let b: Vec<f64> = (0..n * n).map(|i| (0.2 * i as f64).cos()).collect();
    let mut o = vec![0.0; n * n];
    let cam: Vec<f64> = (0..11)
        .map(|i| {
            let extra = if i == 6 {
                400.0
            } else if i >= 9 {
                -0.1
            } else {
                0.0
            };
            0.1 + 0.05 * i as f64 + extra
        })
        .collect();
    let pts: Vec<f64> = (0..3 * points)
        .map(|i| (0.37 * i as f64).sin() + if i % 3 == 2 { 5.0 } else { 0.0 })
        .collect();
    let obs: Vec<f64> = (0..2 * points)
        .map(|i| 10.0 * (0.11 * i as f64).cos())
        .collect();
    let y0: Vec<f64> = (0..state).map(|i| 0.3 * (0.7 * i as f64).sin()).collect();
    let mut y = y0.clone();
    // SAFETY (the transmutes): the docs/embedding.md#the-c-signature-of-a-function C types of the kernels' signatures.
    type MatMul = extern "C" fn(*const f64, i64, *const f64, i64, *mut f64, i64, i64) -> f64;
    type Reproj = extern "C" fn(*const f64, i64, *const f64, i64, *const f64, i64) -> f64;
    type Rk4 = extern "C" fn(*mut f64, i64, f64, i64) -> f64;
    let mm_fn: MatMul = unsafe { std::mem::transmute(mm.raw_function("matmul").expect("matmul")) };
    let pr_fn: Reproj = unsafe { std::mem::transmute(pr.raw_function("reproj").expect("reproj")) };
    let ode_fn: Rk4 = unsafe { std::mem::transmute(ode.raw_function("rk4").expect("rk4")) };
    let len = |v: &[f64]| v.len() as i64;
    vec![
        (
            "matmul",
            best_of(20, || {
                let r = mm_fn(
                    a.as_ptr(),
                    len(&a),
                    b.as_ptr(),
                    len(&b),
                    o.as_mut_ptr(),
                    len(&o),
                    n as i64,
                );
                std::hint::black_box(r);
            }),
        ),
        (
            "project",
            best_of(20, || {
                let r = pr_fn(
                    cam.as_ptr(),
                    11,
                    pts.as_ptr(),
                    len(&pts),
                    obs.as_ptr(),
                    len(&obs),
                );
                std::hint::black_box(r);
            }),
        ),
        (
            "ode",
            best_of(5, || {
                y.copy_from_slice(&y0);
                std::hint::black_box(ode_fn(y.as_mut_ptr(), state as i64, 0.01, steps));
            }),
        ),
    ]
}

fn main() {
    let [gmm, lstm, heat] = KERNEL_FILES.map(|f| {
        let source =
            std::fs::read_to_string(format!("{}/{f}", examples_dir())).expect("read example");
        adc::compile_jit(f, &source, &adc::CompileOptions::default()).expect("example compiles")
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
    // The JIT side is called through its C-ABI entry points (docs/embedding.md#the-c-signature-of-a-function), as C code would call an `adc compile`d object: no checked-call
    // copies. SAFETY (the transmutes): these are the docs/embedding.md#the-c-signature-of-a-function types of the
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
    let mut jit_round = || -> Vec<(&'static str, f64)> {
        let times = [
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
        times.into_iter().chain(gradbench_shapes()).collect()
    };
    // Rounds alternate the two sides (this machine's speed changes from
    // one minute to the next, by up to 2x): each side's least time over
    // the rounds.
    let rounds: usize = std::env::var("ADC_BENCH_ROUNDS")
        .ok()
        .and_then(|r| r.parse().ok())
        .unwrap_or(3);
    let exe = build_c();
    let (mut jit_runs, mut c_runs) = (Vec::new(), Vec::new());
    for _ in 0..rounds.max(1) {
        jit_runs.push(jit_round());
        c_runs.extend(exe.as_deref().and_then(c_times));
    }
    let jit_times = least(&jit_runs);
    let c = (!c_runs.is_empty()).then(|| least(&c_runs));
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
            let j = adc::compile_jit(&name, &source, &adc::CompileOptions::default())
                .expect("compiles");
            best = best.min(t.elapsed().as_secs_f64());
            drop(j);
        }
        println!("| {name} | {:.2} |", best * 1e3);
    }
}
