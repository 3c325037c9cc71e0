//! Benchmark (not a test): time and peak memory of reverse-mode gradients
//! of long loops and deep recursion, taped and checkpointed (docs/derivatives.md#checkpointing), side by side with the primal.
//!
//! Each case runs in a child process of this binary (so that its peak
//! resident set, `VmHWM`, is its own): the child compiles the program,
//! reads `VmHWM` (the compiler's share), calls the function once and reads
//! it again. The table gives the call's time, the peak after the call and
//! the growth over the compiler's share, and the time over the primal's.
//!
//! Run: `cargo bench --bench memory`.

mod common;

use adc::{ArgValue, Constant};
use std::time::Instant;

const RECURRENCE: &str = "
[autodiff_reverse(df, Active, Const, Active)]
double f(double x, int n) {
    double s = x;
    @CK@ for (int i = 0; i < n; i++) s = sin(s) * x + 0.1;
    return s;
}";

const HEAT: &str = "
[autodiff_reverse(df, Active, Duplicated, Const, Active)]
double f(double k, double[] u0, int steps) {
    int m = len(u0);
    double u[m]; double v[m];
    for (int i = 0; i < m; i++) u[i] = u0[i];
    @CK@ for (int t = 0; t < steps; t++) {
        for (int i = 0; i < m; i++) v[i] = u[i];
        for (int i = 1; i < m - 1; i++) u[i] = v[i] + k * (v[i - 1] - 2.0 * v[i] + v[i + 1]);
    }
    double e = 0.0;
    for (int i = 0; i < m; i++) e += u[i] * u[i];
    return e;
}";

const RECURSION: &str = "
double p(double x, int n) { if (n == 0) return x; return sin(p(x, n - 1)) * 0.5 + x; }
[autodiff_reverse(df, Active, Const, Active)]
double f(double x, int n) { return p(x, n); }";

const DIVIDE_AND_CONQUER: &str = "
void dc(inout double[] u, int lo, int hi, double x) {
    if (hi - lo <= 1) { u[lo] = sin(u[lo] * x) + x; return; }
    int mid = (lo + hi) / 2;
    dc(u, lo, mid, x);
    dc(u, mid, hi, x);
    u[lo] = u[lo] + 0.5 * u[mid];
}
[autodiff_reverse(df, Active, Duplicated, Active)]
double f(double x, double[] a) {
    int n = len(a);
    double u[n];
    for (int i = 0; i < n; i++) u[i] = a[i];
    dc(u, 0, n, x);
    double s = 0.0;
    for (int i = 0; i < n; i++) s += u[i];
    return s;
}";

fn dc_args(grad: bool) -> Vec<ArgValue> {
    let mut a = vec![
        scalar(0.7),
        common::f64s(64_000, |i| ((i * 37) % 100) as f64 / 100.0),
    ];
    if grad {
        a.push(common::f64s(64_000, |_| 0.0));
        a.push(scalar(1.0));
    }
    a
}

struct Case {
    name: &'static str,
    source: String,
    /// The function called: `f` (primal) or `df` (gradient).
    entry: &'static str,
    args: fn(bool) -> Vec<ArgValue>,
}

fn scalar(x: f64) -> ArgValue {
    ArgValue::Scalar(Constant::F64(x))
}

fn int(n: i64) -> ArgValue {
    ArgValue::Scalar(Constant::I64(n))
}

fn recurrence_args(grad: bool) -> Vec<ArgValue> {
    let mut a = vec![scalar(0.5), int(10_000_000)];
    if grad {
        a.push(scalar(1.0));
    }
    a
}

fn heat_args(grad: bool) -> Vec<ArgValue> {
    let u0 = || common::f64s(1000, |i| (i % 7) as f64 * 0.1);
    let mut a = vec![scalar(0.2), u0()];
    if grad {
        a.push(common::f64s(1000, |_| 0.0));
    }
    a.push(int(20_000));
    if grad {
        a.push(scalar(1.0));
    }
    a
}

fn recursion_args(depth: i64, grad: bool) -> Vec<ArgValue> {
    let mut a = vec![scalar(0.3), int(depth)];
    if grad {
        a.push(scalar(1.0));
    }
    a
}

fn cases() -> Vec<Case> {
    let mut out = Vec::new();
    for (prog, src, args) in [
        (
            "recurrence 1e7",
            RECURRENCE,
            recurrence_args as fn(bool) -> Vec<ArgValue>,
        ),
        ("heat 1000x20000", HEAT, heat_args),
    ] {
        let k = if prog.starts_with("heat") {
            "[checkpoint(100)]"
        } else {
            "[checkpoint(1000)]"
        };
        out.push(Case {
            name: leak(format!("{prog}: primal")),
            source: src.replace("@CK@", ""),
            entry: "f",
            args,
        });
        for (label, ck) in [("taped", ""), (k, k), ("[checkpoint]", "[checkpoint]")] {
            out.push(Case {
                name: leak(format!("{prog}: gradient, {label}")),
                source: src.replace("@CK@", ck),
                entry: "df",
                args,
            });
        }
    }
    out.push(Case {
        name: "divide and conquer 64000: primal",
        source: DIVIDE_AND_CONQUER.into(),
        entry: "f",
        args: dc_args,
    });
    out.push(Case {
        name: "divide and conquer 64000: gradient",
        source: DIVIDE_AND_CONQUER.into(),
        entry: "df",
        args: dc_args,
    });
    for (depth, args) in [
        (
            3000,
            (|g| recursion_args(3000, g)) as fn(bool) -> Vec<ArgValue>,
        ),
        (30000, |g| recursion_args(30000, g)),
    ] {
        out.push(Case {
            name: leak(format!("recursion depth {depth}: primal")),
            source: RECURSION.into(),
            entry: "f",
            args,
        });
        out.push(Case {
            name: leak(format!("recursion depth {depth}: gradient")),
            source: RECURSION.into(),
            entry: "df",
            args,
        });
    }
    out
}

fn leak(s: String) -> &'static str {
    Box::leak(s.into_boxed_str())
}

/// `VmHWM` of this process, in kB.
fn peak_kb() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or(0)
}

/// In the child: compile, run once, print `seconds peak_kb compiler_kb`.
fn child(name: &str) {
    let case = cases()
        .into_iter()
        .find(|c| c.name == name)
        .expect("known case");
    let jit = adc::compile_jit("bench.ad", &case.source, &adc::CompileOptions::default())
        .unwrap_or_else(|f| panic!("{f}"));
    let mut args = (case.args)(case.entry == "df");
    let before = peak_kb();
    let t = Instant::now();
    jit.call(case.entry, &mut args)
        .unwrap_or_else(|e| panic!("{name}: {e}"));
    let secs = t.elapsed().as_secs_f64();
    println!("{secs} {} {before}", peak_kb());
}

fn main() {
    if let Ok(name) = std::env::var("ADC_MEMORY_CASE") {
        child(&name);
        return;
    }
    let exe = std::env::current_exe().expect("own path");
    println!("| case | time (s) | x primal | peak (MB) | over the compiler (MB) |");
    println!("|---|---|---|---|---|");
    let mut primal = 0.0;
    for case in cases() {
        let out = std::process::Command::new(&exe)
            .env("ADC_MEMORY_CASE", case.name)
            .output()
            .expect("run the case");
        let text = String::from_utf8_lossy(&out.stdout);
        let nums: Vec<f64> = text
            .split_whitespace()
            .filter_map(|w| w.parse().ok())
            .collect();
        let [secs, peak, compiler] = nums[..] else {
            println!(
                "| {} | failed: {} |",
                case.name,
                String::from_utf8_lossy(&out.stderr).trim()
            );
            continue;
        };
        if case.entry == "f" {
            primal = secs;
        }
        println!(
            "| {} | {secs:.3} | {:.1} | {:.0} | {:.0} |",
            case.name,
            secs / primal,
            peak / 1024.0,
            (peak - compiler) / 1024.0
        );
    }
}
