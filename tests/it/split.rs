//! Split-mode calls (issue 11): a call that stays a call in a reverse
//! derivative runs the callee's augmented forward half, which keeps its
//! tape, and later its reverse half. Each program's gradient must equal
//! the joint-mode gradient of the same program with `[checkpoint]` on its
//! callees (they re-run their primal in the reverse sweep). (That a
//! callee's `print` runs once per primal call is in `crates/cli/tests`.)

use crate::support;

use adc::{ArgValue, ArrayValue, Constant};

/// Programs with `@CK@` where a callee's attribute goes; entry
/// `f(double x, double[] a)`.
const SHAPES: &[(&str, &str)] = &[
    ("recursion", "@CK@ double p(double x, double[] a, int n) { if (n == 0) return x;
            return sin(p(x, a, n - 1)) * a[n % len(a)] + x; }
        double f(double x, double[] a) { return p(x, a, 40); }"),
    ("mutual_recursion", "@CK@ double ev(double x, int n) { if (n == 0) return x; return od(x * 1.1, n - 1) + sin(x); }
        @CK@ double od(double x, int n) { if (n == 0) return x * x; return ev(x * 0.9, n - 1) * cos(x); }
        double f(double x, double[] a) { double s = 0.0; for (int i = 0; i < 4; i++) s += ev(x + a[i], i + 3); return s; }"),
    ("inout_divide_and_conquer", "@CK@ void dc(inout double[] u, int lo, int hi, double x) {
            if (hi - lo <= 1) { u[lo] = sin(u[lo] * x) + x; return; }
            int mid = (lo + hi) / 2;
            dc(u, lo, mid, x); dc(u, mid, hi, x);
            u[lo] = u[lo] + 0.5 * u[mid]; }
        double f(double x, double[] a) { int n = len(a); double u[n];
            for (int i = 0; i < n; i++) u[i] = a[i];
            dc(u, 0, n, x);
            double s = 0.0; for (int i = 0; i < n; i++) s += u[i] * u[i]; return s; }"),
    ("data_dependent_loop", "@CK@ double g(double x, double[] a) { double s = 0.0; int k = 0;
            while (s < 3.0 && k < 100) { s += abs(a[k % len(a)]) * x; k++; }
            double t[len(a)]; for (int i = 0; i < len(a); i++) t[i] = a[i] * s;
            double r = 0.0; for (int i = 0; i < len(a); i++) r += t[i] * t[i]; return r + s; }
        double f(double x, double[] a) { double s = 0.0;
            for (int i = 0; i < 3; i++) s += g(x * double(i + 1), a) * a[i]; return s; }"),
    ("reads_an_array_the_caller_changes", "@CK@ double dot(double[] u, double[] v) { double s = 0.0;
            for (int i = 0; i < len(u); i++) s += u[i] * v[i]; return s; }
        double f(double x, double[] a) { int n = len(a); double u[n];
            for (int i = 0; i < n; i++) u[i] = a[i] * x;
            double s = 0.0;
            for (int k = 0; k < 3; k++) { s += dot(u, a) * s + dot(u, u); for (int i = 0; i < n; i++) u[i] = sin(u[i]) * x; }
            return s; }"),
    ("entry_values_used_in_reverse", "@CK@ double g(double x, double[] a, int n) { double c = exp(x); double s = 0.0;
            for (int i = 0; i < len(a); i++) s += a[i] * c * s + sin(c * x);
            if (n > 0) return g(s * 0.1, a, n - 1) * c;
            return s; }
        double f(double x, double[] a) { return g(x, a, 3); }"),
    ("writes_inout_scalar", "@CK@ void acc(inout double s, double x, int n) { for (int i = 0; i < n; i++) s = s * x + 1.0; }
        double f(double x, double[] a) { double s = a[0];
            for (int k = 0; k < 3; k++) acc(s, x * a[k], k + 2);
            return s; }"),
    // grad6 F1: `g`'s reverse half used the `elemref` of `w[0]` (passed
    // to `sc`'s `inout` scalar) from its forward half: E0999 "reference
    // crosses the turn". It is now made again from `w` and the index.
    ("elemref_across_the_turn", "@CK@ double k(double[] p, double[] q) { double s = 0.0;
            for (int i = 0; i + 1 < min(len(p), len(q)); i++) s += p[i] * q[i + 1]; return s; }
        @CK@ void sc(inout double s, double[] p) { s = s * p[0]; }
        @CK@ void g(inout double[] w) { int n = len(w); sc(w[0], w[1..]);
            double z = k(w[0..n - 1], w[0..n - 2]); w[n - 1] += 0.1 * z; }
        @CK@ void h(inout double[] w) { int n = len(w); g(w[0..n - 1]); g(w[1..]);
            double c = k(w[0..2], w[1..3]); g(w[0..n - 1]); w[0] += c; }
        double f(double x, double[] a) { int n = len(a); double t[n + 2];
            for (int i = 0; i < n; i++) t[i] = a[i] * x;
            h(t); h(t[1..]);
            double r = 0.0; for (int i = 0; i < n + 2; i++) r += t[i]; return r; }"),
    // `fast-path` of split halves (`opt/fast_path/halves.rs`): the
    // reverse half's entry pops values before its test (the join's
    // partials), which the continuation takes as parameters.
    ("early_return_after_pops", "@CK@ double p(double x, double[] a, int n) { double r;
            if (n == 0) r = x; else r = p(x * 0.9, a, n - 1) * a[n % len(a)]; return r * x; }
        double f(double x, double[] a) { return p(x, a, 5) + p(x, a, 0); }"),
    ("two_early_returns", "@CK@ double p(double x, double[] a, int n) { if (n == 0) return x; if (n == 1) return x * a[1];
            return sin(p(x, a, n - 1)) * a[n % len(a)] + cos(p(x * 0.5, a, n - 2)); }
        double f(double x, double[] a) { return p(x, a, 7); }"),
    ("early_return_on_the_else_edge", "@CK@ double p(double x, double[] a, int n) {
            if (n > 0) { return sin(p(x, a, n - 1)) * a[n % len(a)] + x; } return x * a[2]; }
        double f(double x, double[] a) { return p(x, a, 6) + p(x, a, 0); }"),
    ("base_case_writes_a_view", "@CK@ void p(inout double[] u, double x) { if (len(u) == 1) { u[0] = u[0] * x; return; }
            u[0] = u[0] * u[1] + x; p(u[1..], x * 0.7); u[0] = sin(u[0]) * u[1]; }
        double f(double x, double[] a) { int n = len(a); double u[n]; for (int i = 0; i < n; i++) u[i] = a[i];
            p(u, x); p(u[1..], x); double s = 0.0; for (int i = 0; i < n; i++) s += u[i] * double(i + 1); return s; }"),
    ("three_mutually_recursive", "@CK@ double r0(double x, double[] a) { if (len(a) == 0) return x; return r1(x * a[0], a[1..]); }
        @CK@ double r1(double x, double[] a) { if (len(a) == 0) return x * x; return r2(sin(x), a) * a[0]; }
        @CK@ double r2(double x, double[] a) { if (len(a) == 1) return x + a[0]; return r0(x, a[1..]) + x; }
        double f(double x, double[] a) { return r0(x, a) + r0(x, a[3..]); }"),
    ("recursion_in_a_checkpointed_loop", "@CK@ double p(double x, double[] a, int n) { if (n == 0) return x * a[0];
            return sin(p(x, a, n - 1)) * a[n % len(a)] + x; }
        double f(double x, double[] a) { double s = x;
            [checkpoint(2)] for (int i = 0; i < 7; i++) { s = p(s, a, i % 3) * 0.7 + a[i]; } return s; }"),
];

fn gradient(src: &str, x: f64, a: &[f64]) -> Vec<f64> {
    let full = format!("{src}\n[autodiff_reverse(df, Active, Duplicated, Active)]\ndouble entry(double x, double[] a) {{ return f(x, a); }}");
    let mut args = [
        ArgValue::Scalar(Constant::F64(x)),
        ArgValue::Array(ArrayValue::F64(a.to_vec())),
        ArgValue::Array(ArrayValue::F64(vec![0.0; a.len()])),
        ArgValue::Scalar(Constant::F64(1.0)),
    ];
    support::gradient_with_shadow(&full, &mut args, 2)
}

#[test]
fn split_calls_give_the_joint_gradient() {
    let a = [0.3, -0.7, 1.1, 0.25, -0.4, 0.8, 0.6];
    let mut failures = Vec::new();
    for (name, shape) in SHAPES {
        let split = gradient(&shape.replace("@CK@", ""), 0.8, &a);
        let joint = gradient(&shape.replace("@CK@", "[checkpoint]"), 0.8, &a);
        let close = split.len() == joint.len()
            && split
                .iter()
                .zip(&joint)
                .all(|(s, j)| (s - j).abs() <= 1e-12 * j.abs().max(1.0));
        if !close {
            failures.push(format!("{name}: split {split:?}, joint {joint:?}"));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// The reverse derivative calls the callee's halves (or their
/// continuations, `fast-path`), not its joint derivative.
#[test]
fn calls_use_the_two_halves() {
    let src = format!("{}\n[autodiff_reverse(df, Active, Duplicated, Active)]\ndouble entry(double x, double[] a) {{ return f(x, a); }}", SHAPES[0].1.replace("@CK@", ""));
    let mut m = adc::driver::frontend("split.ad", &src, &adc::CompileOptions::default())
        .unwrap_or_else(|f| panic!("{f}"));
    adc::driver::run_stages(&mut m, adc::Stage::Final).expect("stages run");
    let text = m.to_string();
    let df = &text[text.find("func @df").expect("df")..];
    let df = &df[..df.find("\n}").expect("end")];
    assert!(
        df.contains("__adc_aug_p(") && df.contains("__adc_rev_p("),
        "{df}"
    );
    assert!(!df.contains("__adc_vjp_p"), "{df}");
}

/// Between `unzip` and `transpose` a reverse request is still forward mode
/// and calls the split functions' placeholders (a forward to the callee,
/// or to its tangent function), so IR dumped there runs as the final IR:
/// the interpreter gives the primal and the tangent `grad . v`. (The
/// placeholders once returned zeros; the difftest's interpreter oracle
/// found it.) Not for callees that write arrays: the tangent placeholder
/// runs after the whole primal part, on the arrays as they are then (see
/// `ad/split.rs`).
#[test]
fn ir_after_unzip_computes_the_tangent() {
    use adc_ir::interp::{self, InterpArg};
    let a = [0.3, -0.7, 1.1, 0.25, -0.4, 0.8, 0.6];
    let v: Vec<f64> = (0..a.len()).map(|i| 0.1 * i as f64 - 0.2).collect();
    let arr = |xs: &[f64]| InterpArg::Array(xs.iter().map(|x| Constant::F64(*x)).collect());
    let mut failures = Vec::new();
    let mut split_calls = 0;
    for (name, shape) in SHAPES.iter().filter(|(_, s)| !s.contains("inout")) {
        let shape = shape.replace("@CK@", "");
        let grad = gradient(&shape, 0.8, &a);
        // (primal, d/dx, d/da..).
        let want: f64 = grad[1] + grad[2..].iter().zip(&v).map(|(g, v)| g * v).sum::<f64>();
        let src = format!("{shape}\n[autodiff_reverse(df, Active, Duplicated, Active)]\ndouble entry(double x, double[] a) {{ return f(x, a); }}");
        let mut m = adc::driver::frontend("split.ad", &src, &adc::CompileOptions::default())
            .unwrap_or_else(|f| panic!("{f}"));
        adc::driver::run_stages(&mut m, adc::Stage::Unzip).expect("stages run");
        split_calls += m.to_string().contains("call @__adc_aug_") as usize;
        let mut args = [
            InterpArg::Scalar(Constant::F64(0.8)),
            InterpArg::Scalar(Constant::F64(1.0)),
            arr(&a),
            arr(&v),
        ];
        let got = interp::call(&m, "df", &mut args, 1 << 26).expect("interpreter runs");
        let (Constant::F64(primal), Constant::F64(tangent)) = (got[0], got[1]) else {
            panic!("{name}: {got:?}")
        };
        if (primal - grad[0]).abs() > 1e-12 * grad[0].abs().max(1.0) {
            failures.push(format!("{name}: primal {primal}, want {}", grad[0]));
        }
        if (tangent - want).abs() > 1e-10 * want.abs().max(1.0) {
            failures.push(format!("{name}: tangent {tangent}, gradient . v {want}"));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    assert!(
        split_calls >= 3,
        "only {split_calls} shapes keep a split call"
    );
}

/// A reverse half that frees its shadow of a local array later
/// (`free.defer`) puts it on the list of the function that lent the tape:
/// split-mode halves work in their caller's state words (codegen's
/// `adopted_param`), so each of the five levels' shadows is freed once, at
/// `df`'s return (a second free would abort), and the gradient matches
/// central differences.
#[test]
fn deferred_frees_of_split_halves_go_to_the_lender() {
    let src = "
double g(double[] a, double x, int n) {
    int m = len(a);
    double t[m];
    for (int i = 0; i < m; i++) t[i] = a[i] * x;
    if (n == 0) return t[0] * x;
    double s = 0.0;
    for (int i = 0; i < m; i++) s += t[i] * t[i];
    return g(a, s * 0.25, n - 1) * t[m - 1];
}
[autodiff_reverse(df, Duplicated, Active, ActiveOnly)]
double f(double[] a, double x) { return g(a, x, 5); }";
    let mut m = adc::driver::frontend("defer.ad", src, &adc::CompileOptions::default())
        .unwrap_or_else(|f| panic!("{f}"));
    adc::driver::run_stages(&mut m, adc::Stage::Final).expect("stages run");
    let text = m.to_string();
    let rev = &text[text.find("func @__adc_rev_g(").expect("a reverse half")..];
    assert!(
        rev[..rev.find("\n}").expect("end")].contains("free.defer"),
        "{rev}"
    );
    let j = support::jit(src);
    let a = [0.9, -0.6, 1.1];
    for _ in 0..3 {
        let mut call = [
            support::arr(&a),
            support::arr(&[0.0; 3]),
            support::d(0.7),
            support::d(1.0),
        ];
        let dx = support::floats(&j, "df", &mut call)[0];
        let da = support::arg_floats(&call[1]);
        let f =
            |a: &[f64], x: f64| support::floats(&j, "f", &mut [support::arr(a), support::d(x)])[0];
        let h = 1e-6;
        support::assert_close(
            dx,
            (f(&a, 0.7 + h) - f(&a, 0.7 - h)) / (2.0 * h),
            1e-5,
            "d/dx",
        );
        for k in 0..3 {
            let (mut p, mut q) = (a, a);
            p[k] += h;
            q[k] -= h;
            let want = (f(&p, 0.7) - f(&q, 0.7)) / (2.0 * h);
            support::assert_close(da[k], want, 1e-5, &format!("d/da[{k}]"));
        }
    }
}

/// A load that fails in the early return of a split half that `fast-path`
/// copies into its callers (`df` itself at depth 0, the continuation at
/// depth 1) is the runtime error at the callee's line, as in the primal,
/// not a crash; deeper recursion, in bounds, gives the gradient of the
/// `[checkpoint]` twin.
#[test]
fn failing_copied_early_return_is_a_runtime_error() {
    let shape =
        "@CK@ double p(double x, double[] a, int n, int d) { if (n == 0) return a[6 - d] * x;
        return sin(p(x, a, n - 1, d)) * a[n % len(a)] + x; }
    double f(double x, double[] a) { int d = len(a) - 3; return p(x, a, d, d); }";
    let wrap = |s: &str| {
        format!("{s}\n[autodiff_reverse(df, Active, Duplicated, Active)]\ndouble entry(double x, double[] a) {{ return f(x, a); }}")
    };
    let src = wrap(&shape.replace("@CK@", ""));
    let mut m = adc::driver::frontend("split.ad", &src, &adc::CompileOptions::default())
        .unwrap_or_else(|f| panic!("{f}"));
    adc::driver::run_stages(&mut m, adc::Stage::Final).expect("stages run");
    assert!(m.to_string().contains("@__adc_cont___adc_aug_p("), "{m}");
    let a = [0.3, -0.7, 1.1, 0.25, -0.4, 0.8, 0.6];
    let split = support::jit(&src);
    let joint = support::jit(&wrap(&shape.replace("@CK@", "[checkpoint]")));
    // Depth d = len(a) - 3 reads a[6 - d]: out of bounds for d = 0 and 1.
    for n in 3..=a.len() {
        // The results, then the shadow of `a`.
        let run = |j: &adc::JitModule| {
            let mut args = [
                ArgValue::Scalar(Constant::F64(0.8)),
                ArgValue::Array(ArrayValue::F64(a[..n].to_vec())),
                ArgValue::Array(ArrayValue::F64(vec![0.0; n])),
                ArgValue::Scalar(Constant::F64(1.0)),
            ];
            j.call("df", &mut args).map(|out| {
                let mut g = support::f64s(&out);
                g.extend(support::arg_floats(&args[2]));
                g
            })
        };
        match (run(&split), run(&joint)) {
            (Ok(got), Ok(want)) if n >= 5 => {
                for (k, (g, w)) in got.iter().zip(&want).enumerate() {
                    support::assert_close(*g, *w, 1e-12, &format!("n={n}, component {k}"));
                }
            }
            (Err(adc::CallError::Runtime(e)), Err(adc::CallError::Runtime(f))) if n < 5 => {
                for msg in [e, f] {
                    assert!(
                        msg.starts_with("index out of bounds at") && msg.contains(":1:"),
                        "n={n}: {msg}"
                    );
                }
            }
            other => panic!("n={n}: {other:?}"),
        }
    }
}

/// An object file holds no code for adc's own functions that nothing
/// reaches: after `fast-path`, `df` calls `p`'s halves only through their
/// continuations, and `p`'s forward and whole reverse derivatives are
/// called by nobody (`unreached_internals` in codegen).
#[test]
fn object_files_leave_out_unreached_halves_and_derivatives() {
    let src = SHAPES[0].1.replace("@CK@", "").replace(
        "double f(",
        "[autodiff_reverse(df, Active, Duplicated, Active)] double f(",
    );
    let object = adc::driver::compile_object("p.ad", &src, "P_H", &adc::CompileOptions::default())
        .expect("compiles to an object file")
        .object;
    let defines = |name: &str| {
        let pat = format!("\0__adc_impl_{name}\0");
        object.windows(pat.len()).any(|w| w == pat.as_bytes())
    };
    assert!(
        defines("df") && defines("f"),
        "the program's functions are there"
    );
    assert!(
        defines("__adc_cont___adc_aug_p"),
        "the continuation df calls is there"
    );
    for unused in ["__adc_aug_p", "__adc_rev_p", "__adc_vjp_p"] {
        assert!(
            !defines(unused),
            "`{unused}` is compiled though nothing calls it"
        );
    }
    // The JIT keeps every function (callers may look any up by name).
    let j = support::jit(&src);
    let mut args = [
        ArgValue::Scalar(Constant::F64(0.8)),
        ArgValue::Array(ArrayValue::F64(vec![0.5, -0.25, 2.0])),
        ArgValue::Array(ArrayValue::F64(vec![0.0; 3])),
        ArgValue::Scalar(Constant::F64(1.0)),
    ];
    j.call("df", &mut args).expect("df runs in the JIT");
}
