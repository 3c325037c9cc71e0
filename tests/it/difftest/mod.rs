//! Random-program differential testing of derivatives (issue 10).
//!
//! `gen.rs` generates well-typed programs from a seed; `oracle.rs` checks
//! reverse against forward mode, forward mode against central
//! differences, vector mode of a width from 1 to 4 against width-less
//! calls (forward on every seed, reverse on one in six: `vector.rs`),
//! on every third seed the four second-order compositions against each
//! other, on every fourth a dense Jacobian (sometimes of a chunk width
//! from 1 to 5) against reverse gradients (`jacobian.rs`), on most of
//! those a sparse Jacobian against the dense one (`sparse.rs`), on every
//! sixth a dense Hessian against differences of the gradient
//! (`hessian.rs`) and a sparse Hessian against the dense one
//! (`sparse_hessian.rs`), and the IR interpreter against the JIT after
//! every pipeline stage (`interp.rs`). One seed in six also gets a random
//! element-shaped function whose sparse Jacobian takes the element path,
//! static or swept, checked against its dense Jacobian and its coloring
//! (`elements.rs`). One seed in five is a `float`
//! program, whose oracles all run at `float` precision (`precision.rs`).
//! The summary counts the programs of each kind. See `fixed_seeds` for
//! the part that runs in CI and `campaign` for long runs (`campaign.py`
//! survives programs that crash the process):
//!
//! ```text
//! ADC_DIFFTEST_SEEDS=100000 ADC_DIFFTEST_START=0 ADC_DIFFTEST_THREADS=2 \
//!   cargo test --release --test it -- --ignored --exact difftest::campaign --nocapture
//! ADC_DIFFTEST_SEED=123 cargo test --release --test it -- --ignored --exact difftest::show_seed --nocapture
//! ```

// `gen.rs` is loaded by `#[path]` (as a `mod.rs`-style file) because
// `fuzz/fuzz_targets/generated.rs` includes it the same way: its own
// `#[path]`s to `gen/` then mean the same in both.
pub mod elements;
#[path = "gen.rs"]
pub mod gen;
pub mod hessian;
pub mod interp;
pub mod jacobian;
pub mod oracle;
pub mod precision;
pub mod sparse;
pub mod sparse_hessian;
pub mod vector;

use oracle::Outcome;
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;

fn env_u64(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// Seeds of the fixed range that fail because of known, not yet fixed
/// compiler bugs (each with a test in `regressions/`).
const KNOWN: &[(u64, &str)] = &[];

pub type Run = (
    gen::Program,
    bool,
    Vec<(f64, f64, Vec<f64>)>,
    Outcome,
    elements::Counts,
);

pub fn run_seed(seed: u64) -> Run {
    let p = gen::generate(seed);
    let second = oracle::second_order(seed);
    let pts = oracle::points(seed, p.alen);
    let o = oracle::check(&p, second, &pts);
    let (o, el) = elements::check_seed(seed, o);
    (p, second, pts, o, el)
}

/// The oracles on seed `seed`'s program as the tester made it before
/// `float` programs and drawn widths (`double`, a width-3 forward
/// derivative, no reverse one, the Jacobian's width the compiler's): what
/// the saved seeds of `regressions/` were recorded as.
pub fn run_seed_as_double(seed: u64) -> Outcome {
    let mut p = gen::generate(seed);
    (p.single, p.width, p.rvec, p.jac_width) = (false, 3, false, None);
    let second = oracle::second_order(seed);
    oracle::check(&p, second, &oracle::points(seed, p.alen))
}

#[derive(Default)]
struct Stats {
    programs: u64,
    passed: u64,
    second_order: u64,
    fd_checked: u64,
    fd_skipped: u64,
    interp_checked: u64,
    /// Programs whose vector-mode derivatives have width 1, and those of
    /// them with a reverse one too.
    width1: u64,
    width1_reverse: u64,
    /// Dense Jacobians of chunk width 1.
    jac_width1: u64,
    /// `float` programs, and those of them with dense Jacobians (most
    /// with sparse ones too), with dense Hessians, and with sparse ones.
    single: u64,
    single_jacobian: u64,
    single_hessian: u64,
    single_sparse_hessian: u64,
    /// Element programs (`elements.rs`), those with a static loop, with
    /// a swept loop, and without the element path.
    elements: elements::Counts64,
    failures: BTreeMap<String, Vec<u64>>,
}

impl Stats {
    /// Counts the kinds of program `p` is.
    fn count(&mut self, p: &gen::Program) {
        let w1 = p.width == 1;
        self.width1 += w1 as u64;
        self.width1_reverse += (w1 && p.rvec) as u64;
        self.jac_width1 += (p.jacobian && p.jac_width == Some(1)) as u64;
        if p.single {
            self.single += 1;
            self.single_jacobian += p.jacobian as u64;
            self.single_hessian += hessian::enabled(p) as u64;
            self.single_sparse_hessian += sparse_hessian::enabled(p) as u64;
        }
    }

    fn summary(&self) -> String {
        let mut s = format!(
            "programs {}, passed {}, with second order {}, FD comparisons {} (skipped {}), interpreter at every stage {}\n",
            self.programs, self.passed, self.second_order, self.fd_checked, self.fd_skipped, self.interp_checked
        );
        s += &format!(
            "  vector width 1: {} (with reverse {}), Jacobian width 1: {}; float programs {} (with Jacobians {}, Hessians {}, sparse Hessians {})\n",
            self.width1, self.width1_reverse, self.jac_width1, self.single, self.single_jacobian, self.single_hessian, self.single_sparse_hessian
        );
        s += &self.elements.summary();
        for (k, v) in &self.failures {
            let first: Vec<String> = v.iter().take(10).map(|s| s.to_string()).collect();
            s += &format!(
                "  {k}: {} (seeds {}{})\n",
                v.len(),
                first.join(", "),
                if v.len() > 10 { ", ..." } else { "" }
            );
        }
        s
    }
}

/// Runs seeds `start..start + count` on `threads` threads; `on_fail` is
/// called (on the worker) with every failure.
fn drive(
    start: u64,
    count: u64,
    threads: usize,
    skip: &[u64],
    on_fail: &(dyn Fn(u64, &gen::Program, bool, &[(f64, f64, Vec<f64>)], &str, &str) + Sync),
    progress: &(dyn Fn(&Stats) + Sync),
    log: Option<&str>,
) -> Stats {
    oracle::quiet_panics();
    let next = AtomicU64::new(start);
    let stats = Mutex::new(Stats::default());
    let inflight: Mutex<Vec<Option<(u64, std::time::Instant)>>> = Mutex::new(vec![None; threads]);
    let log = log.map(|d| {
        let f = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(format!("{d}/results-{start}.tsv"))
            .expect("results log");
        (d.to_string(), Mutex::new(f))
    });
    let done = std::sync::atomic::AtomicBool::new(false);
    std::thread::scope(|sc| {
        if let Some((dir, _)) = &log {
            // A program that crashes the process cannot be caught; one that
            // hangs is reported by this watchdog, which ends the process
            // (the campaign script restarts after the in-flight seeds).
            let (inflight, done) = (&inflight, &done);
            // Seconds before an in-flight program counts as hung (raise
            // it on a loaded machine: a starved process is not a hang).
            let hang_secs = env_u64("ADC_DIFFTEST_HANG_SECS", 60);
            sc.spawn(move || {
                while !done.load(Ordering::Relaxed) {
                    std::thread::sleep(std::time::Duration::from_millis(500));
                    for (seed, t0) in inflight.lock().unwrap().iter().flatten() {
                        if t0.elapsed().as_secs() > hang_secs {
                            let _ = std::fs::write(
                                format!("{dir}/hang-{seed}.txt"),
                                oracle::module(&gen::generate(*seed), oracle::second_order(*seed)),
                            );
                            eprintln!("seed {seed} hangs");
                            std::process::exit(42);
                        }
                    }
                }
            });
        }
        let mut workers = Vec::new();
        for t in 0..threads {
            let (next, stats, inflight, log) = (&next, &stats, &inflight, &log);
            let w = std::thread::Builder::new()
                .name(format!("difftest-{t}"))
                .stack_size(256 << 20)
                .spawn_scoped(sc, move || loop {
                    let seed = next.fetch_add(1, Ordering::Relaxed);
                    if seed >= start + count {
                        break;
                    }
                    if skip.contains(&seed) {
                        continue;
                    }
                    if let Some((dir, _)) = log {
                        let _ = std::fs::write(
                            format!("{dir}/inflight-{start}-{t}.txt"),
                            seed.to_string(),
                        );
                        inflight.lock().unwrap()[t] = Some((seed, std::time::Instant::now()));
                    }
                    let (p, second, pts, o, el) = run_seed(seed);
                    if let Outcome::Fail { oracle, detail } = &o {
                        on_fail(seed, &p, second, &pts, oracle, detail);
                    }
                    if let Some((_, f)) = log {
                        // One line per seed: what `campaign.py` sums.
                        use std::io::Write;
                        let (fd_checked, fd_skipped, interp_checked) = match &o {
                            Outcome::Pass {
                                fd_checked,
                                fd_skipped,
                                interp_checked,
                            } => (*fd_checked, *fd_skipped, *interp_checked),
                            Outcome::Fail { .. } => (0, 0, 0),
                        };
                        let _ = writeln!(
                            f.lock().unwrap(),
                            "{seed}\t{}\t{}\t{fd_checked}\t{fd_skipped}\t{interp_checked}\t{}\t{}\t{}",
                            o.oracle().unwrap_or("pass"),
                            second as u8,
                            p.width,
                            p.single as u8,
                            el.columns(),
                        );
                        inflight.lock().unwrap()[t] = None;
                    }
                    let mut st = stats.lock().unwrap();
                    st.programs += 1;
                    st.second_order += second as u64;
                    st.count(&p);
                    st.elements.add(el);
                    match o {
                        Outcome::Pass {
                            fd_checked,
                            fd_skipped,
                            interp_checked,
                        } => {
                            st.passed += 1;
                            st.interp_checked += interp_checked as u64;
                            st.fd_checked += fd_checked as u64;
                            st.fd_skipped += fd_skipped as u64;
                        }
                        Outcome::Fail { oracle, .. } => {
                            st.failures.entry(oracle).or_default().push(seed)
                        }
                    }
                    if st.programs % 500 == 0 {
                        progress(&st);
                    }
                })
                .expect("spawn");
            workers.push(w);
        }
        for w in workers {
            w.join().expect("worker");
        }
        done.store(true, Ordering::Relaxed);
    });
    stats.into_inner().unwrap()
}

/// The seeds the suite runs: 64 in a debug build, as CI runs it (every
/// stage's IR verified; about 3 CPU-seconds a program), 120 in a release
/// build (`cargo test --release --test it -- difftest`, before landing a
/// change to derivative code). Campaigns run many more (`campaign`).
#[test]
fn fixed_seeds() {
    let count = env_u64(
        "ADC_DIFFTEST_SEEDS",
        if cfg!(debug_assertions) { 64 } else { 120 },
    );
    let start = env_u64("ADC_DIFFTEST_START", 0);
    let skip: Vec<u64> = KNOWN.iter().map(|k| k.0).collect();
    let report = Mutex::new(Vec::new());
    let stats = drive(
        start,
        count,
        2,
        &skip,
        &|seed, p, second, _pts, oracle, detail| {
            let src = oracle::module(p, second);
            report.lock().unwrap().push(format!(
                "seed {seed}: {oracle}\n{detail}\n{src}\n(rerun: ADC_DIFFTEST_SEED={seed} cargo test --test it -- --ignored --exact difftest::show_seed --nocapture)"
            ));
        },
        &|_| {},
        None,
    );
    eprintln!("{}", stats.summary());
    let report = report.into_inner().unwrap();
    assert!(
        report.is_empty(),
        "{}\n\n{}",
        report.join("\n\n"),
        stats.summary()
    );
    assert!(
        stats.interp_checked * 2 > stats.programs,
        "too few interpreter comparisons: {}",
        stats.summary()
    );
    assert!(
        stats.fd_checked > stats.programs,
        "too few finite-difference checks: {}",
        stats.summary()
    );
    // (One program in five is a `float` one, one in four has width 1.)
    assert!(
        stats.programs < 40 || (stats.single * 10 > stats.programs && stats.width1 > 0),
        "too few float or width-1 programs: {}",
        stats.summary()
    );
    // (One seed in six has an element program, two in five of those may
    // force the sweep.)
    assert!(
        stats.programs < 40 || (stats.elements.statics > 0 && stats.elements.swept > 0),
        "element programs do not take both the static and the swept path: {}",
        stats.summary()
    );
}

/// The interpreter oracle takes every stage's IR from one pipeline run
/// (`driver::stage_snapshots`); each must be what stopping there gives.
#[test]
fn stage_snapshots_match_stopping_at_each_stage() {
    // Six seeds: each runs the pipeline once per stage (the suite's time
    // budget; `fixed_seeds` runs every stage's snapshot through the
    // interpreter on all its seeds).
    for seed in 0..6u64 {
        let src = oracle::module(&gen::generate(seed), oracle::second_order(seed));
        let lowered = adc::driver::frontend("difftest.ad", &src, &adc::CompileOptions::default())
            .expect("generated programs compile");
        let snapshots = adc::driver::stage_snapshots(lowered.clone()).expect("stages run");
        // Every stage but `final` (the same module as `opt`), in order.
        let expected: Vec<adc::Stage> = adc::Stage::ALL
            .iter()
            .map(|&(_, stage)| stage)
            .filter(|&stage| stage != adc::Stage::Final)
            .collect();
        let got: Vec<adc::Stage> = snapshots.iter().map(|(stage, _)| *stage).collect();
        assert_eq!(got, expected, "seed {seed}");
        for (stage, m) in snapshots {
            let mut stopped = lowered.clone();
            adc::driver::run_stages(&mut stopped, stage).expect("stages run");
            assert_eq!(
                m.to_string(),
                stopped.to_string(),
                "seed {seed}, after {stage:?}"
            );
        }
    }
}

fn sanitize(s: &str) -> String {
    s.chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
        .collect()
}

/// Writes the shrunk program of a failure to `dir` (at most two per
/// oracle key).
fn record(
    dir: &str,
    written: &Mutex<BTreeMap<String, usize>>,
    seed: u64,
    p: &gen::Program,
    second: bool,
    pts: &[(f64, f64, Vec<f64>)],
    key: &str,
    detail: &str,
) {
    {
        let mut w = written.lock().unwrap();
        let n = w.entry(key.to_string()).or_default();
        if *n >= 2 {
            return;
        }
        *n += 1;
    }
    if key.starts_with("element") {
        // The element program is not shrunk: its detail holds its source.
        let _ = std::fs::create_dir_all(dir);
        let text: String = detail.lines().map(|l| format!("// {l}\n")).collect();
        let path = format!("{dir}/{}-seed{seed}.ad", sanitize(key));
        let src = elements::generate(seed).source;
        std::fs::write(
            &path,
            format!("// difftest finding: oracle `{key}`, seed {seed}\n{text}{src}"),
        )
        .unwrap_or_else(|e| panic!("{path}: {e}"));
        return;
    }
    let small = oracle::shrink(p, 300, &|c| {
        oracle::check(c, second, pts).oracle() == Some(key)
    });
    let detail = match oracle::check(&small, second, pts) {
        Outcome::Fail { detail, .. } => detail,
        _ => detail.to_string(),
    };
    let mut text = format!(
        "// difftest finding: oracle `{key}`, seed {seed} (shrunk from {} to {} statements)\n",
        p.count(),
        small.count()
    );
    for l in detail.lines() {
        text += &format!("// {l}\n");
    }
    text += &oracle::module(&small, second);
    let _ = std::fs::create_dir_all(dir);
    let path = format!("{dir}/{}-seed{seed}.ad", sanitize(key));
    std::fs::write(&path, text).unwrap_or_else(|e| panic!("{path}: {e}"));
}

/// A long run: `ADC_DIFFTEST_SEEDS` programs from `ADC_DIFFTEST_START` on
/// `ADC_DIFFTEST_THREADS` threads; failures shrunk into `ADC_DIFFTEST_OUT`
/// (default /work/difftest-findings), progress in `campaign-progress.txt`.
#[test]
#[ignore = "long campaign; run in release with ADC_DIFFTEST_SEEDS"]
fn campaign() {
    let count = env_u64("ADC_DIFFTEST_SEEDS", 1000);
    let start = env_u64("ADC_DIFFTEST_START", 0);
    let threads = env_u64("ADC_DIFFTEST_THREADS", 2) as usize;
    let dir =
        std::env::var("ADC_DIFFTEST_OUT").unwrap_or_else(|_| "/work/difftest-findings".into());
    let _ = std::fs::create_dir_all(&dir);
    let written = Mutex::new(BTreeMap::new());
    let t0 = std::time::Instant::now();
    let progress_file = format!("{dir}/campaign-progress-{start}.txt");
    let skip: Vec<u64> = std::env::var("ADC_DIFFTEST_SKIP")
        .unwrap_or_default()
        .split(',')
        .filter_map(|s| s.trim().parse().ok())
        .collect();
    let stats = drive(
        start,
        count,
        threads,
        &skip,
        &|seed, p, second, pts, key, detail| {
            record(&dir, &written, seed, p, second, pts, key, detail)
        },
        &|st| {
            let text = format!(
                "seeds {start}.., {:.0} s\n{}",
                t0.elapsed().as_secs_f64(),
                st.summary()
            );
            let _ = std::fs::write(&progress_file, text);
        },
        Some(&dir),
    );
    let text = format!(
        "seeds {start}..{}, {:.0} s\n{}",
        start + count,
        t0.elapsed().as_secs_f64(),
        stats.summary()
    );
    let _ = std::fs::write(&progress_file, &text);
    println!("{text}");
}

/// Prints the program of `ADC_DIFFTEST_SEED` and what the oracles say.
#[test]
#[ignore = "debugging aid"]
fn show_seed() {
    oracle::quiet_panics();
    let seed = env_u64("ADC_DIFFTEST_SEED", 0);
    let h = std::thread::Builder::new()
        .name("difftest-show".into())
        .stack_size(256 << 20)
        .spawn(move || {
            if std::env::var("ADC_DIFFTEST_PRINT_ONLY").is_ok() {
                let p = gen::generate(seed);
                println!("{}", oracle::module(&p, oracle::second_order(seed)));
                println!("// points {:?}", oracle::points(seed, p.alen));
                if elements::enabled(seed) {
                    println!("// element program\n{}", elements::generate(seed).source);
                }
                return;
            }
            let (p, second, pts, o, el) = run_seed(seed);
            println!("{}\npoints {pts:?}\n{o:?}", oracle::module(&p, second));
            if elements::enabled(seed) {
                println!(
                    "element program ({el:?}):\n{}",
                    elements::generate(seed).source
                );
            }
        })
        .unwrap();
    h.join().unwrap();
}
