//! Nested derivatives in every order (forward or reverse over forward or
//! reverse) of functions with loops, branches, `?:`, `min`/`max`, early
//! returns, `break`/`continue`, `while`, calls, recursion, local arrays and
//! checkpointed loops.
//! For each shape the four second derivatives must agree to rounding, and
//! with central differences of the first derivative.

use adc::{ArgValue, ArrayValue, Constant, JitModule};

/// Inner functions `f(double x, double[] a)`, each smooth near the points
/// tested (no branch flips within the finite-difference step).
const SHAPES: &[(&str, &str)] = &[
    ("loop_branch", "double f(double x, double[] a) { double s = 0.0;
        for (int i = 0; i < len(a); i++) { if (a[i] > 0.0) s = s * x + a[i]; else s = s + x * x * a[i]; }
        return s; }"),
    ("max_in_loop", "double f(double x, double[] a) { double s = 0.0;
        for (int i = 0; i < len(a); i++) s += max(a[i] * x, 0.0) * x;
        return s; }"),
    ("logsumexp", "double f(double x, double[] a) { double m = a[0] * x;
        for (int i = 1; i < len(a); i++) m = a[i] * x > m ? a[i] * x : m;
        double s = 0.0; for (int i = 0; i < len(a); i++) s += exp(a[i] * x - m);
        return m + log(s); }"),
    ("early_return_continue", "double f(double x, double[] a) { double s = 1.0;
        for (int i = 0; i < len(a); i++) {
            if (a[i] > 2.5) return s * x;
            if (a[i] < 0.0) continue;
            s = s * sin(x * a[i]) + x;
        }
        return s; }"),
    ("break_while", "double f(double x, double[] a) { double s = x; int k = 0;
        while (k < 10) { s = s * 0.5 + x * a[k % len(a)]; if (s > 100.0) break; k++; }
        return s * s; }"),
    ("overwrite_in_loop", "double f(double x, double[] a) { double y = x * x; double r = 0.0;
        for (int i = 0; i < len(a); i++) { y = a[i] * x; r = y * y - 1.0; }
        return y * r; }"),
    ("local_array", "double f(double x, double[] a) { int n = len(a); double t[n];
        for (int i = 0; i < n; i++) t[i] = a[i] * x;
        for (int i = 1; i < n; i++) t[i] = t[i] * t[i - 1] + sin(t[i]);
        return t[n - 1]; }"),
    ("call", "double sq(double u) { return u * u; }
        double f(double x, double[] a) { double s = 0.0;
        for (int i = 0; i < len(a); i++) s += sq(a[i] + x) * cos(x);
        return s; }"),
    ("recursion", "double p(double x, int n) { if (n == 0) return 1.0; return x * p(x, n - 1) + 0.5; }
        double f(double x, double[] a) { return p(x, 5) * a[0]; }"),
    ("checkpointed_loop", "double f(double x, double[] a) { double s = x;
        [checkpoint(2)] for (int i = 0; i < 7; i++) { s = sin(s) * x + a[i % len(a)]; if (s > 40.0) break; }
        return s * s; }"),
    ("checkpointed_nested", "double f(double x, double[] a) { double s = x; int k = 0;
        [checkpoint] while (k < 5) {
            [checkpoint(3)] for (int j = 0; j < len(a); j++) s = cos(s + a[j]) * x;
            k++;
        }
        return s; }"),
    ("checkpointed_callee_writes_an_array", "[checkpoint] void step(inout double[] t, double x) { t[1] += 0.2 * sin(x * t[0]); }
        double f(double x, double[] a) { double t[2]; t[0] = x * x; t[1] = x * a[0];
        step(t, x); step(t, x * 0.5); return t[1] * t[0]; }"),
    ("checkpointed_loop_with_array_state", "double f(double x, double[] a) { double t[2]; t[0] = x * x; t[1] = x;
        [checkpoint(2)] for (int i = 0; i < 3; i++) t[1] += 0.2 * sin(x * t[0]) * a[i % len(a)];
        return t[1]; }"),
    ("abs_min", "double f(double x, double[] a) { double s = 0.0;
        for (int i = 0; i < len(a); i++) s += abs(a[i] - x) * min(x * x, a[i] + 4.0);
        return s; }"),
];

const POINT: (f64, [f64; 4]) = (0.7, [1.5, -0.5, 2.0, 3.0]);

fn module(shape: &str) -> String {
    format!(
        "{shape}
[autodiff_reverse(rf, Active, Const, Active)]
double f_r(double x, double[] a) {{ return f(x, a); }}
[autodiff_forward(ff, Dual, Const, Dual)]
double f_f(double x, double[] a) {{ return f(x, a); }}
[autodiff_forward(h_fr, Dual, Const, Dual)]
[autodiff_reverse(h_rr, Active, Const, Active)]
double gr(double x, double[] a) {{ auto [y, d] = rf(x, a, 1.0); return d; }}
[autodiff_forward(h_ff, Dual, Const, Dual)]
[autodiff_reverse(h_rf, Active, Const, Active)]
double gf(double x, double[] a) {{ auto [y, d] = ff(x, 1.0, a); return d; }}
"
    )
}

fn call2(j: &JitModule, name: &str, args: &mut [ArgValue]) -> (f64, f64) {
    let out = j.call(name, args).unwrap_or_else(|e| panic!("{name}: {e}"));
    match out.as_slice() {
        [Constant::F64(a), Constant::F64(b)] => (*a, *b),
        other => panic!("{name}: {other:?}"),
    }
}

fn call1(j: &JitModule, name: &str, x: f64, a: &[f64]) -> f64 {
    let mut args = [
        ArgValue::Scalar(Constant::F64(x)),
        ArgValue::Array(ArrayValue::F64(a.to_vec())),
    ];
    match j
        .call(name, &mut args)
        .unwrap_or_else(|e| panic!("{name}: {e}"))
        .as_slice()
    {
        [Constant::F64(v)] => *v,
        other => panic!("{name}: {other:?}"),
    }
}

#[test]
fn second_derivatives_agree_in_every_order() {
    let (x, a) = POINT;
    let arr = || ArgValue::Array(ArrayValue::F64(a.to_vec()));
    let s = |v: f64| ArgValue::Scalar(Constant::F64(v));
    let mut failures = Vec::new();
    for (name, shape) in SHAPES {
        let src = module(shape);
        let j = match std::panic::catch_unwind(|| {
            adc::compile_jit("nested.ad", &src, &adc::CompileOptions::default())
        }) {
            Ok(Ok(j)) => j,
            Ok(Err(e)) => {
                failures.push(format!("{name}: does not compile:\n{e}"));
                continue;
            }
            Err(_) => {
                failures.push(format!("{name}: the compiler panicked"));
                continue;
            }
        };
        let g = call1(&j, "gr", x, &a);
        let g_fwd = call1(&j, "gf", x, &a);
        let orders = [
            (
                "forward over reverse",
                call2(&j, "h_fr", &mut [s(x), s(1.0), arr()]),
            ),
            (
                "reverse over reverse",
                call2(&j, "h_rr", &mut [s(x), arr(), s(1.0)]),
            ),
            (
                "forward over forward",
                call2(&j, "h_ff", &mut [s(x), s(1.0), arr()]),
            ),
            (
                "reverse over forward",
                call2(&j, "h_rf", &mut [s(x), arr(), s(1.0)]),
            ),
        ];
        let h = 1e-5;
        let fd = (call1(&j, "gr", x + h, &a) - call1(&j, "gr", x - h, &a)) / (2.0 * h);
        let scale = orders[0].1 .1.abs().max(1.0);
        if (g - g_fwd).abs() > 1e-12 * g.abs().max(1.0) {
            failures.push(format!(
                "{name}: first derivatives differ: reverse {g}, forward {g_fwd}"
            ));
        }
        for (order, (g1, h2)) in &orders {
            if (g1 - g).abs() > 1e-12 * g.abs().max(1.0) {
                failures.push(format!("{name}, {order}: primal {g1}, want {g}"));
            }
            if (h2 - orders[0].1 .1).abs() > 1e-11 * scale {
                failures.push(format!(
                    "{name}, {order}: {h2}, forward over reverse {}",
                    orders[0].1 .1
                ));
            }
            if (h2 - fd).abs() > 1e-5 * scale {
                failures.push(format!("{name}, {order}: {h2}, central difference {fd}"));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// At x = 1 the adjoint of t = x*x - 1 in (x*x - 1)^2 is exactly zero while
/// its tangent is not: the tangent of `mulz(adjoint, partial)` must keep
/// `d(adjoint) * partial`. It used to drop the whole tangent when the
/// adjoint was zero, so forward and reverse over reverse gave 0, not 8.
#[test]
fn second_derivative_where_an_adjoint_crosses_zero() {
    let src = module("double f(double x, double[] a) { double t = x * x - a[0]; return t * t; }");
    let j = adc::compile_jit("nested.ad", &src, &adc::CompileOptions::default())
        .unwrap_or_else(|e| panic!("{e}"));
    let arr = || ArgValue::Array(ArrayValue::F64(vec![1.0]));
    let s = |v: f64| ArgValue::Scalar(Constant::F64(v));
    // d2/dx2 (x^2 - 1)^2 = 12 x^2 - 4.
    let want = 8.0;
    let orders = [
        (
            "forward over reverse",
            call2(&j, "h_fr", &mut [s(1.0), s(1.0), arr()]),
        ),
        (
            "reverse over reverse",
            call2(&j, "h_rr", &mut [s(1.0), arr(), s(1.0)]),
        ),
        (
            "forward over forward",
            call2(&j, "h_ff", &mut [s(1.0), s(1.0), arr()]),
        ),
        (
            "reverse over forward",
            call2(&j, "h_rf", &mut [s(1.0), arr(), s(1.0)]),
        ),
    ];
    for (order, (g, h)) in orders {
        assert_eq!(g, 0.0, "{order}: first derivative");
        assert!((h - want).abs() < 1e-12, "{order}: {h}, want {want}");
    }
}

/// A reverse derivative is linear in its seed: its derivative in the seed
/// at seed 0, where every adjoint is zero, is the gradient.
#[test]
fn derivative_in_the_seed_at_zero_is_the_gradient() {
    let src = "[autodiff_reverse(sq_rev, Active, ActiveOnly)]
double sq(double x) { return x * sin(x); }
[autodiff_forward(g_fwd, Const, Dual, DualOnly)]
[autodiff_reverse(g_rev, Const, Active, ActiveOnly)]
double g(double x, double s) { return sq_rev(x, s); }";
    let j = adc::compile_jit("seed.ad", src, &adc::CompileOptions::default())
        .unwrap_or_else(|e| panic!("{e}"));
    let s = |v: f64| ArgValue::Scalar(Constant::F64(v));
    let x: f64 = 3.0;
    let want = x.sin() + x * x.cos();
    for name in ["g_fwd", "g_rev"] {
        let out = j
            .call(name, &mut [s(x), s(0.0), s(1.0)])
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        let [Constant::F64(d)] = out[..] else {
            panic!("{name}: {out:?}")
        };
        assert!((d - want).abs() < 1e-12, "{name}: {d}, want {want}");
    }
}

/// A derivative taken of a generated derivative directly (a request, as
/// `adc run --grad` makes, not an attribute on a wrapper) whose function
/// recurses through views: split mode's halves pop a tape their caller
/// lends, and differentiating them segfaulted; such a module now keeps
/// joint mode, as nested derivatives through wrappers always did.
#[test]
fn derivative_of_a_recursive_generated_derivative() {
    let src = "double tree(double[] xs) {
    int n = len(xs);
    if (n <= 2) { return xs[0] * xs[0]; }
    return tree(xs[0..n / 2]) * tree(xs[n / 2..]);
}
[autodiff_reverse(dtree, Duplicated, Active)]
double top(double[] xs) { return tree(xs); }";
    let requests = [
        adc::Derivative::reverse(
            "dtree",
            "ddtree",
            vec![
                adc::Activity::Duplicated,
                adc::Activity::Duplicated,
                adc::Activity::Active,
            ],
            adc::Activity::Active,
        ),
        adc::Derivative::forward(
            "dtree",
            "tdtree",
            vec![
                adc::Activity::Dual,
                adc::Activity::Dual,
                adc::Activity::Dual,
            ],
            adc::Activity::Dual,
        ),
    ];
    let j = adc::compile_jit_with("nested.ad", src, &requests).unwrap_or_else(|f| panic!("{f}"));
    let xs = [1.5, 0.5, 2.0, 0.25];
    let arr = |v: &[f64]| ArgValue::Array(ArrayValue::F64(v.to_vec()));
    let d = |v: f64| ArgValue::Scalar(Constant::F64(v));
    // ddtree(xs, d_xs, ds, d_ds, seed, seed_result): the gradient of dtree's
    // result, tree(xs) = (x0^2)(x2^2), is 2 x0 x2^2 and 2 x0^2 x2.
    let mut args = [
        arr(&xs),
        arr(&[0.0; 4]),
        arr(&[0.0; 4]),
        arr(&[0.0; 4]),
        d(0.75),
        d(1.0),
    ];
    let out = j
        .call("ddtree", &mut args)
        .unwrap_or_else(|e| panic!("ddtree: {e}"));
    let ArgValue::Array(ArrayValue::F64(grad)) = &args[1] else {
        panic!("shadow")
    };
    assert_eq!(out[0], Constant::F64(9.0));
    assert_eq!(grad, &vec![2.0 * 1.5 * 4.0, 0.0, 2.0 * 2.25 * 2.0, 0.0]);
    // Forward mode agrees along x0.
    let mut args = [
        arr(&xs),
        arr(&[1.0, 0.0, 0.0, 0.0]),
        arr(&[0.0; 4]),
        arr(&[0.0; 4]),
        d(0.75),
        d(0.0),
    ];
    let out = j
        .call("tdtree", &mut args)
        .unwrap_or_else(|e| panic!("tdtree: {e}"));
    assert_eq!(out[1], Constant::F64(12.0));
}
