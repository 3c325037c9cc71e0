//! Generated signatures and semantics of docs/derivatives.md: activities, shadows, custom
//! derivatives, higher order, non-smooth points, runtime errors, threads.
//! Expected values are worked out by hand in each test.

use crate::support::assert_close;
use adc::{ArgValue, ArrayValue, CallError, Constant, JitModule};

fn jit(source: &str) -> JitModule {
    adc::compile_jit("test.ad", source, &adc::CompileOptions::default())
        .unwrap_or_else(|f| panic!("does not compile:\n{f}"))
}

fn d(x: f64) -> ArgValue {
    ArgValue::Scalar(Constant::F64(x))
}

fn i(x: i64) -> ArgValue {
    ArgValue::Scalar(Constant::I64(x))
}

fn arr(xs: &[f64]) -> ArgValue {
    ArgValue::Array(ArrayValue::F64(xs.to_vec()))
}

fn f(c: &Constant) -> f64 {
    match c {
        Constant::F64(x) => *x,
        Constant::F32(x) => f64::from(*x),
        other => panic!("not a float: {other:?}"),
    }
}

fn arr_of(a: &ArgValue) -> Vec<f64> {
    match a {
        ArgValue::Array(ArrayValue::F64(v)) => v.clone(),
        ArgValue::Scalar(Constant::F64(x)) => vec![*x],
        other => panic!("not doubles: {other:?}"),
    }
}

fn call(j: &JitModule, name: &str, args: &mut [ArgValue]) -> Vec<f64> {
    j.call(name, args)
        .unwrap_or_else(|e| panic!("{name}: {e}"))
        .iter()
        .map(f)
        .collect()
}

#[test]
fn reverse_signature_of_the_documented_example() {
    let j = jit("[autodiff_reverse(df, Active, Active)]\ndouble sq(double x) { return x * x; }");
    assert_eq!(call(&j, "df", &mut [d(3.0), d(0.5)]), vec![9.0, 3.0]);
}

#[test]
fn read_only_shadow_accumulates_and_active_only_drops_the_result() {
    let src = "[autodiff_reverse(dg, Duplicated, Const, ActiveOnly)]
double dot_self(double[] v, int n) { double s = 0.0; for (int k = 0; k < n; k++) s += v[k] * v[k]; return s; }";
    let j = jit(src);
    let mut args = [arr(&[1.0, 2.0, 3.0]), arr(&[10.0, 0.0, 0.0]), i(2), d(1.0)];
    assert!(
        j.call("dg", &mut args).expect("runs").is_empty(),
        "ActiveOnly of a single result is void"
    );
    // d_v += 2 v seed for the first n elements.
    assert_eq!(arr_of(&args[1]), vec![12.0, 4.0, 0.0]);
    j.call("dg", &mut args).expect("runs");
    assert_eq!(
        arr_of(&args[1]),
        vec![14.0, 8.0, 0.0],
        "calling again accumulates"
    );
}

#[test]
fn out_shadow_is_consumed_and_inout_shadow_is_replaced() {
    let src = "[autodiff_reverse(dscale, Duplicated, Active, Duplicated)]
void scale(double[] x, double a, out double[] y) { for (int k = 0; k < len(x); k++) y[k] = a * x[k] * x[k]; }
[autodiff_reverse(dsquare, Duplicated)]
void square_in_place(inout double[] u) { for (int k = 0; k < len(u); k++) u[k] = u[k] * u[k]; }";
    let j = jit(src);
    let mut args = [
        arr(&[1.0, 2.0]),
        arr(&[0.0, 0.0]),
        d(3.0),
        arr(&[0.0, 0.0]),
        arr(&[1.0, 10.0]),
    ];
    let grads = call(&j, "dscale", &mut args);
    // y = a x^2: d_x = 2 a x * seed, d_a = sum x^2 seed, seed consumed.
    assert_eq!(arr_of(&args[1]), vec![6.0, 120.0]);
    assert_eq!(grads, vec![1.0 + 40.0]);
    assert_eq!(
        arr_of(&args[4]),
        vec![0.0, 0.0],
        "the out shadow is zero on exit"
    );
    let mut args = [arr(&[3.0, -1.0]), arr(&[1.0, 0.5])];
    call(&j, "dsquare", &mut args);
    assert_eq!(arr_of(&args[0]), vec![9.0, 1.0]);
    assert_eq!(
        arr_of(&args[1]),
        vec![6.0, -1.0],
        "seed pulled back to the initial value"
    );
}

#[test]
fn inout_scalar_shadows_in_both_modes() {
    let src = "[autodiff_reverse(r, Duplicated, Active)]
[autodiff_forward(t, Dual, Dual)]
void step(inout double s, double x) { s = s * x + sin(x); }";
    let j = jit(src);
    // s1 = s0 x + sin x: ds0 = x seed, dx = (s0 + cos x) seed.
    let mut args = [d(2.0), d(1.0), d(0.5)];
    let g = call(&j, "r", &mut args);
    assert_close(arr_of(&args[1])[0], 0.5, 1e-15, "d_s");
    assert_close(g[0], 2.0 + 0.5f64.cos(), 1e-15, "d_x");
    let mut args = [d(2.0), d(1.0), d(0.5), d(1.0)];
    call(&j, "t", &mut args);
    assert_close(
        arr_of(&args[1])[0],
        0.5 + (2.0 + 0.5f64.cos()),
        1e-15,
        "tangent of s",
    );
}

#[test]
fn forward_signatures_dual_only_and_arrays() {
    let src = "[autodiff_forward(df, Dual, Const, DualOnly)]
double f(double[] xs, double a) { double s = 0.0; for (int k = 0; k < len(xs); k++) s += a * xs[k] * xs[k]; return s; }
[autodiff_forward(dg, Dual, Dual)]
double g(double x) { return exp(x); }";
    let j = jit(src);
    let r = call(&j, "df", &mut [arr(&[1.0, 2.0]), arr(&[1.0, 1.0]), d(3.0)]);
    assert_eq!(
        r,
        vec![3.0 * (2.0 + 4.0)],
        "DualOnly returns the tangent only"
    );
    let r = call(&j, "dg", &mut [d(0.0), d(2.0)]);
    assert_eq!(r, vec![1.0, 2.0], "Dual returns (primal, tangent)");
}

#[test]
fn non_smooth_points_and_strong_zero() {
    let src = "[autodiff_reverse(dabs, Active, Active)] double fabs_(double x) { return abs(x); }
[autodiff_reverse(dmin, Active, Active, Active)] double fmin_(double x, double y) { return min(x, y); }
[autodiff_forward(tmax, Dual, Dual, Dual)] double fmax_(double x, double y) { return max(x, y); }
[autodiff_reverse(dsq, Active, Const, Active)] double root(double x, double k) { return k * sqrt(x); }
[autodiff_reverse(dsel, Active, Active)] double sel(double x) { return x > 0.0 ? x : sqrt(x); }
[autodiff_reverse(dsqf, Active, Const, Active)] float rootf(float x, float k) { return k * sqrt(x); }
[autodiff_reverse(droots, Active, Active)]
double roots(double x) { double s = x; for (int i = 0; i < 3; i++) s = sqrt(s); return s; }";
    let j = jit(src);
    assert_eq!(call(&j, "dabs", &mut [d(0.0), d(1.0)]), vec![0.0, 0.0]);
    assert_eq!(
        call(&j, "dmin", &mut [d(2.0), d(2.0), d(1.0)]),
        vec![2.0, 0.5, 0.5]
    );
    assert_eq!(
        call(&j, "tmax", &mut [d(2.0), d(1.0), d(2.0), d(3.0)]),
        vec![2.0, 2.0]
    );
    // sqrt'(0) is infinite; a zero seed still gives exactly zero.
    assert_eq!(
        call(&j, "dsq", &mut [d(0.0), d(1.0), d(0.0)]),
        vec![0.0, 0.0]
    );
    // The same in single precision (the product is masked lane-wise).
    let zero_f32 = ArgValue::Scalar(Constant::F32(0.0));
    let one_f32 = ArgValue::Scalar(Constant::F32(1.0));
    let r = call(
        &j,
        "dsqf",
        &mut [zero_f32.clone(), one_f32.clone(), zero_f32.clone()],
    );
    assert_eq!(r, vec![0.0, 0.0]);
    let r = call(&j, "dsqf", &mut [zero_f32, one_f32.clone(), one_f32]);
    assert_eq!(r, vec![0.0, f64::INFINITY], "a nonzero seed keeps sqrt'(0)");
    // In a loop the adjoint is carried from one iteration to the next,
    // and the product is lowered differently (`strong_zero`): same rule.
    assert_eq!(call(&j, "droots", &mut [d(0.0), d(0.0)]), vec![0.0, 0.0]);
    let r = call(&j, "droots", &mut [d(0.0), d(1.0)]);
    assert_eq!(r, vec![0.0, f64::INFINITY], "a nonzero seed keeps sqrt'(0)");
    // The untaken arm (sqrt of a negative, NaN partial) gets no adjoint.
    assert_eq!(call(&j, "dsel", &mut [d(4.0), d(1.0)]), vec![4.0, 1.0]);
    let r = call(&j, "dsel", &mut [d(-4.0), d(1.0)]);
    assert!(
        r[0].is_nan() && r[1].is_nan(),
        "the taken arm is sqrt(-4): {r:?}"
    );
}

#[test]
fn pow_at_zero_base_or_zero_exponent() {
    // pow(x, 0) is 1 for every x and pow(0, y) is 0 for every y > 0: both
    // partials there are 0 (a polynomial's sum of c[k] * pow(x, k) at
    // x = 0 was NaN in both modes; an independent tester's finding).
    let src = "[autodiff_reverse(dp, Active, Active, Active)]
[autodiff_forward(tp, Dual, Dual, Dual)]
double p(double x, double y) { return pow(x, y); }
[autodiff_reverse(dpoly, Const, Active, Active)]
double poly(double[] c, double x) {
    double s = 0.0;
    for (int k = 0; k < len(c); k++) s += c[k] * pow(x, double(k));
    return s;
}";
    let j = jit(src);
    assert_eq!(
        call(&j, "dp", &mut [d(0.0), d(0.0), d(1.0)]),
        vec![1.0, 0.0, 0.0]
    );
    assert_eq!(
        call(&j, "dp", &mut [d(0.0), d(2.0), d(1.0)]),
        vec![0.0, 0.0, 0.0]
    );
    assert_eq!(
        call(&j, "tp", &mut [d(0.0), d(1.0), d(0.0), d(1.0)]),
        vec![1.0, 0.0]
    );
    let r = call(&j, "dp", &mut [d(2.0), d(0.0), d(1.0)]);
    assert_eq!(r[1], 0.0);
    assert_close(r[2], 2f64.ln(), 1e-15, "d/dy pow(2, 0)");
    // Elsewhere the usual partials: y x^(y-1) and x^y log x.
    let r = call(&j, "dp", &mut [d(1.5), d(2.5), d(1.0)]);
    assert_close(r[1], 2.5 * 1.5f64.powf(1.5), 1e-14, "d/dx");
    assert_close(r[2], 1.5f64.powf(2.5) * 1.5f64.ln(), 1e-14, "d/dy");
    let r = call(&j, "dpoly", &mut [arr(&[1.0, 2.0, 3.0]), d(0.0), d(1.0)]);
    assert_eq!(r, vec![1.0, 2.0]);
}

#[test]
fn hypot_and_atan2_at_the_origin() {
    // hypot is the 2-D abs: at the origin its partials are 0 (as abs'(0)),
    // and so are atan2's, not 0/0 = NaN. A NaN partial leaked into the
    // gradient through an accumulator that starts at 0 (an independent
    // tester's finding: r += hypot(s, 0.5 s) with s always 0 is 0, the
    // gradient of r + x was NaN in reverse mode, 1 in forward mode).
    let src = "[autodiff_reverse(dg, Active, Active, Active)]
[autodiff_forward(tg, Dual, Dual, Dual)]
double g(double x, double y) { return hypot(x, y) + atan2(x, y); }
[autodiff_reverse(df, Active, Active)]
double f(double x) {
    double s = 0.0;
    double r = 0.0;
    for (int i = 0; i < 3; i++) { r += hypot(s, 0.5 * s); s = s * x; }
    return r + x;
}";
    let j = jit(src);
    assert_eq!(
        call(&j, "dg", &mut [d(0.0), d(0.0), d(1.0)]),
        vec![0.0, 0.0, 0.0]
    );
    assert_eq!(
        call(&j, "tg", &mut [d(0.0), d(1.0), d(0.0), d(1.0)]),
        vec![0.0, 0.0]
    );
    assert_eq!(call(&j, "df", &mut [d(2.0), d(1.0)]), vec![2.0, 1.0]);
    // Elsewhere the usual partials: (x, y) / hypot and (y, -x) / (x^2 + y^2).
    let r = call(&j, "dg", &mut [d(0.3), d(0.4), d(1.0)]);
    assert_close(r[1], 0.6 + 1.6, 1e-14, "d/dx");
    assert_close(r[2], 0.8 - 1.2, 1e-14, "d/dy");
    // Also where x^2 + y^2 underflows (a reviewer's finding: atan2's
    // partials were 0 there): 1 / (2e-170) each, hypot's partials 1/sqrt 2.
    let r = call(&j, "dg", &mut [d(1e-170), d(1e-170), d(1.0)]);
    let (s, big) = (0.5f64.sqrt(), 0.5e170);
    assert_close(r[1] / big, (s + big) / big, 1e-14, "d/dx tiny");
    assert_close(r[2] / big, (s - big) / big, 1e-14, "d/dy tiny");
}

#[test]
fn custom_derivatives_replace_the_body() {
    let src = "double dcube(double x, double seed) { return 42.0 * seed; }
double tcube(double x, double dx) { return 7.0 * dx; }
[reverse_derivative(dcube)] [forward_derivative(tcube)]
double cube(double x) { return x * x * x; }
[autodiff_reverse(r, Active, Active)] [autodiff_forward(t, Dual, Dual)]
double h(double x) { return 2.0 * cube(x); }";
    let j = jit(src);
    assert_eq!(call(&j, "r", &mut [d(1.0), d(1.0)]), vec![2.0, 84.0]);
    assert_eq!(call(&j, "t", &mut [d(1.0), d(1.0)]), vec![2.0, 14.0]);
}

#[test]
fn custom_derivative_on_an_extern() {
    let src = "double dcos_(double x, double seed) { return -sin(x) * seed; }
[reverse_derivative(dcos_)]
extern double cos(double x);
[autodiff_reverse(r, Active, Active)]
double f(double x) { return cos(x) * x; }";
    let j = jit(src);
    let g = call(&j, "r", &mut [d(0.3), d(1.0)]);
    assert_close(
        g[1],
        0.3f64.cos() - 0.3 * 0.3f64.sin(),
        1e-15,
        "d/dx x cos x",
    );
}

#[test]
fn higher_order_both_ways() {
    let src = "[autodiff_reverse(g, Active, Active)]
double f(double x) { return x * x * x; }
[autodiff_forward(hvp, Dual, Dual)]
double fprime(double x) { auto [y, dy] = g(x, 1.0); return dy; }
[autodiff_forward(ft, Dual, DualOnly)]
double p(double x) { return sin(x) * x; }
[autodiff_reverse(rt, Active, Active)]
double pprime(double x) { return ft(x, 1.0); }";
    let j = jit(src);
    // f'' = 6x.
    assert_eq!(call(&j, "hvp", &mut [d(2.0), d(1.0)]), vec![12.0, 12.0]);
    // p' = cos x x + sin x; p'' = 2 cos x - x sin x.
    let x = 0.7f64;
    let r = call(&j, "rt", &mut [d(x), d(1.0)]);
    assert_close(r[1], 2.0 * x.cos() - x * x.sin(), 1e-14, "p''");
}

#[test]
fn recursion_loops_and_early_exits() {
    let src = "double pw(double x, int n) { if (n == 0) return 1.0; return x * pw(x, n - 1); }
[autodiff_reverse(dp, Active, Const, Active)]
double pw_top(double x, int n) { return pw(x, n); }
[autodiff_reverse(dl, Active, Const, Active)]
double loops(double x, int n) {
    double s = 0.0;
    for (int a = 0; a < n; a++) {
        if (a == 2) continue;
        for (int b = 0; b < a; b++) {
            if (b == 3) break;
            s += x * double(a + b);
        }
    }
    while (s > 1.0) s = s * 0.5;
    return s;
}";
    let j = jit(src);
    assert_eq!(
        call(&j, "dp", &mut [d(2.0), i(5), d(1.0)]),
        vec![32.0, 80.0]
    );
    // Hand count for n = 6: s = x * sum over a != 2, b < min(a, 3) of (a + b).
    let mut k = 0.0;
    for a in 0..6 {
        if a == 2 {
            continue;
        }
        for b in 0..a.min(3) {
            k += (a + b) as f64;
        }
    }
    let x = 0.3;
    let mut s = k * x;
    let mut halvings = 0;
    while s > 1.0 {
        s *= 0.5;
        halvings += 1;
    }
    let r = call(&j, "dl", &mut [d(x), i(6), d(1.0)]);
    assert_close(r[0], s, 1e-15, "primal");
    assert_close(r[1], k * 0.5f64.powi(halvings), 1e-15, "gradient");
}

#[test]
fn tuples_and_local_arrays_overwritten_in_loops() {
    let src = "(double, double) polar(double r, double t) { return (r * cos(t), r * sin(t)); }
[autodiff_reverse(dsum, Active, Active, Active)]
double sum_xy(double r, double t) {
    auto [x, y] = polar(r, t);
    double buf[2];
    for (int k = 0; k < 3; k++) { buf[0] = buf[0] * 0.5 + x; buf[1] = buf[1] * 0.5 + y; }
    return buf[0] + buf[1];
}";
    let j = jit(src);
    let (r, t) = (2.0f64, 0.4f64);
    let r_ = call(&j, "dsum", &mut [d(r), d(t), d(1.0)]);
    let c = 1.0 + 0.5 + 0.25; // three overwrites: ((x)*.5 + x)*.5 + x
    assert_close(r_[1], c * (t.cos() + t.sin()), 1e-14, "d/dr");
    assert_close(r_[2], c * r * (t.cos() - t.sin()), 1e-14, "d/dt");
}

#[test]
fn shadow_length_mismatch_is_a_runtime_error() {
    let j = jit(
        "[autodiff_reverse(dg, Duplicated, ActiveOnly)]\ndouble s(double[] v) { return v[0]; }",
    );
    let mut args = [arr(&[1.0, 2.0]), arr(&[0.0]), d(1.0)];
    match j.call("dg", &mut args) {
        Err(CallError::Runtime(m)) => assert!(m.contains("shadow length"), "{m}"),
        other => panic!("expected a runtime error, got {other:?}"),
    }
}

#[test]
fn recursion_deeper_than_the_stack_is_a_runtime_error() {
    let j = std::sync::Arc::new(jit("[autodiff_reverse(dp, Active, Const, Active)]
double pw(double x, int n) { if (n == 0) return 1.0; return x * pw(x, n - 1); }"));
    // On a thread with a small stack too, and in the derivative's reverse
    // sweep as in the primal.
    let small = std::thread::Builder::new().stack_size(1 << 20);
    let j2 = j.clone();
    let handle = small
        .spawn(move || {
            for f in ["pw", "dp"] {
                let mut args = vec![d(1.0), i(100_000_000)];
                if f == "dp" {
                    args.push(d(1.0));
                }
                match j2.call(f, &mut args) {
                    Err(CallError::Runtime(m)) => assert!(m.contains("stack overflow"), "{m}"),
                    other => panic!("{f}: expected a runtime error, got {other:?}"),
                }
            }
            // Recursion that fits still runs.
            call(&j2, "dp", &mut [d(1.5), i(200), d(1.0)])
        })
        .expect("thread starts");
    let g = handle.join().expect("no crash");
    assert_close(g[1], 200.0 * 1.5f64.powi(199), 1e-12, "d/dx x^200");
    // A stack smaller than the host margin (256 KiB) still runs shallow
    // recursion: the margin shrinks to a quarter of the stack.
    let tiny = std::thread::Builder::new().stack_size(96 << 10);
    let g = tiny
        .spawn(move || call(&j, "dp", &mut [d(2.0), i(10), d(1.0)]))
        .expect("thread starts")
        .join()
        .expect("no crash");
    assert_eq!(g, vec![1024.0, 5120.0]);
}

#[test]
fn one_derivative_called_from_eight_threads() {
    let src = "[autodiff_reverse(dg, Duplicated, ActiveOnly)]
double energy(double[] v) { double s = 0.0; for (int k = 0; k < len(v); k++) s += v[k] * v[k] * double(k + 1); return s; }";
    let j = std::sync::Arc::new(jit(src));
    let handles: Vec<_> = (0..8)
        .map(|t| {
            let j = j.clone();
            std::thread::spawn(move || {
                for round in 0..200 {
                    let n = 50 + t * 13 + round % 7;
                    let v: Vec<f64> = (0..n).map(|k| (k + t) as f64 * 0.01).collect();
                    let mut args = [arr(&v), arr(&vec![0.0; n]), d(1.0)];
                    j.call("dg", &mut args).expect("runs");
                    let g = arr_of(&args[1]);
                    for k in 0..n {
                        assert_eq!(
                            g[k],
                            2.0 * v[k] * (k + 1) as f64,
                            "thread {t} round {round}"
                        );
                    }
                }
            })
        })
        .collect();
    for h in handles {
        h.join().expect("thread finished");
    }
}

#[test]
fn lgamma_derivative_is_digamma_and_its_derivative_trigamma() {
    let src = "[autodiff_reverse(dl, Active, Active)]
double l(double x) { return lgamma(x); }
[autodiff_forward(d2l, Dual, DualOnly)]
double lprime(double x) { auto [y, dx] = dl(x, 1.0); return dx; }
[autodiff_reverse(dlf, Active, Active)]
float lf(float x) { return lgamma(x); }";
    let j = jit(src);
    // psi(1) = -gamma, psi(1/2) = -gamma - 2 ln 2, psi(-1/2) = psi(1/2) + 2
    // (psi(x + 1) = psi(x) + 1/x), psi(25) = H_24 - gamma.
    let euler = 0.577_215_664_901_532_9_f64;
    let cases = [
        (1.0, -euler),
        (0.5, -euler - 2.0 * std::f64::consts::LN_2),
        (-0.5, -euler - 2.0 * std::f64::consts::LN_2 + 2.0),
        (25.0, (1..25).map(|k| 1.0 / k as f64).sum::<f64>() - euler),
    ];
    for (x, psi) in cases {
        let r = call(&j, "dl", &mut [d(x), d(1.0)]);
        assert_close(r[1], psi, 1e-13, &format!("digamma({x})"));
    }
    // trigamma(1) = pi^2/6, trigamma(1/2) = pi^2/2.
    let pi2 = std::f64::consts::PI * std::f64::consts::PI;
    for (x, psi1) in [(1.0, pi2 / 6.0), (0.5, pi2 / 2.0)] {
        let r = call(&j, "d2l", &mut [d(x), d(1.0)]);
        assert_close(r[0], psi1, 1e-12, &format!("trigamma({x})"));
    }
    // float: psi(2) = 1 - gamma.
    let r = j
        .call(
            "dlf",
            &mut [
                ArgValue::Scalar(Constant::F32(2.0)),
                ArgValue::Scalar(Constant::F32(1.0)),
            ],
        )
        .expect("runs");
    match r[1] {
        Constant::F32(g) => assert!(
            (g as f64 - (1.0 - euler)).abs() < 1e-6,
            "psi(2) in float: {g}"
        ),
        ref other => panic!("not a float: {other:?}"),
    }
}

#[test]
fn inlined_callees_and_values_of_written_arrays() {
    // `cube` (with a local array) is inlined into the loop of `total`; its
    // derivative is 3 v^2 per element.
    let src = "double cube(double v) { double t[2]; t[0] = v; t[1] = v * v; return t[0] * t[1]; }
[autodiff_reverse(dt, Duplicated, Active)]
double total(double[] xs) { double s = 0.0; for (int i = 0; i < len(xs); i++) s += cube(xs[i]); return s; }
[autodiff_reverse(ds, Duplicated, Active)]
double squares_then_clear(inout double[] a) {
    double s = 0.0;
    for (int i = 0; i < len(a); i++) s += a[i] * a[i];
    for (int i = 0; i < len(a); i++) a[i] = 0.0;
    return s;
}";
    let j = jit(src);
    let mut args = [arr(&[1.0, -2.0, 0.5]), arr(&[0.0; 3]), d(1.0)];
    let r = call(&j, "dt", &mut args);
    assert_close(r[0], 1.0 - 8.0 + 0.125, 1e-15, "primal");
    assert_eq!(arr_of(&args[1]), vec![3.0, 12.0, 0.75]);
    // The partials 2 a[i] need a's values from before the clearing loop:
    // they must be taped, not loaded again in the reverse sweep.
    let mut args = [arr(&[1.0, -2.0, 3.0]), arr(&[0.0; 3]), d(1.0)];
    let r = call(&j, "ds", &mut args);
    assert_close(r[0], 14.0, 1e-15, "primal");
    assert_eq!(arr_of(&args[0]), vec![0.0; 3], "a is cleared");
    // `inout` shadow: replaced by the pulled-back seed, d/da of sum a^2 with
    // the clearing loop making the final a independent of the initial one.
    assert_eq!(arr_of(&args[1]), vec![2.0, -4.0, 6.0]);
}

#[test]
fn counted_loops_run_backwards_from_their_trip_count() {
    // Steps down by 3 from 10 (i = 10, 7, 4, 1), a triangular nest whose
    // inner loop runs zero times first, and a loop that never runs.
    let src = "[autodiff_reverse(df, Active, Const, Active)]
double f(double x, int n) {
    double s = 0.0;
    for (int i = 10; i > 0; i -= 3) s += double(i) * x * x;
    for (int i = 0; i < n; i++) for (int j = 0; j < i; j++) s += double(i * j) * x;
    for (int k = 5; k < n - 100; k++) s += x;
    return s;
}";
    let j = jit(src);
    let (x, n) = (1.5f64, 5i64);
    // sum of i over 10, 7, 4, 1 is 22; sum of i * j over j < i < 5 is 35.
    let r = call(&j, "df", &mut [d(x), i(n), d(1.0)]);
    assert_close(r[0], 22.0 * x * x + 35.0 * x, 1e-14, "primal");
    assert_close(r[1], 44.0 * x + 35.0, 1e-14, "gradient");
}

#[test]
fn checkpointed_callee_is_run_again_not_inlined() {
    // docs/derivatives.md#checkpointing: `[checkpoint]` on a function makes reverse-mode callers keep
    // only its inputs and run it again in the reverse sweep; without it,
    // the callee is inlined and its values taped.
    let body = "double g(double x) { double s = 0.0; for (int i = 1; i <= 3; i++) s += sin(x * double(i)); return s; }
[autodiff_reverse(df, Active, Active)]
double f(double x) { double t = 0.0; for (int k = 0; k < 2; k++) t += g(x + double(k)); return t; }";
    let dg = |x: f64| {
        (1..=3)
            .map(|i| i as f64 * (x * i as f64).cos())
            .sum::<f64>()
    };
    for prefix in ["[checkpoint]\n", ""] {
        let src = format!("{prefix}{body}");
        let j = jit(&src);
        let x = 0.3;
        let r = call(&j, "df", &mut [d(x), d(1.0)]);
        assert_close(r[1], dg(x) + dg(x + 1.0), 1e-13, "gradient");
        let mut m =
            adc::driver::frontend("t.ad", &src, &adc::CompileOptions::default()).expect("compiles");
        adc::driver::run_stages(&mut m, adc::Stage::Final).expect("stages");
        let text = m.to_string();
        assert_eq!(
            text.contains("call @__adc_vjp_g"),
            !prefix.is_empty(),
            "checkpointed calls go to g's reverse derivative; others are inlined"
        );
    }
}

/// A call into which no tangent flows (its float arguments are constants)
/// stays the primal call in every mode: an extern without a custom
/// derivative is fine there (it once was E0401), and its result's
/// derivative is zero.
#[test]
fn calls_on_constants_need_no_derivative() {
    let src = "extern double j0(double x);
double scale(double k, int n) { double s = 0.0; for (int i = 0; i < n; i++) s += j0(k * double(i)); return s; }
[autodiff_reverse(r, Active, Active)]
[autodiff_forward(t, Dual, Dual)]
double f(double x) { return x * scale(0.5, 4) + j0(1.0) + sin(x); }
[autodiff_forward(rr, Dual, Dual)]
double g(double x) { auto [y, dy] = r(x, 1.0); return dy; }";
    let j = jit(src);
    let c: f64 = (0..4).map(|i| libm_j0(0.5 * i as f64)).sum();
    let x = 0.3f64;
    let rev = call(&j, "r", &mut [d(x), d(1.0)]);
    assert_close(rev[1], c + x.cos(), 1e-12, "reverse");
    let fwd = call(&j, "t", &mut [d(x), d(1.0)]);
    assert_close(fwd[1], c + x.cos(), 1e-12, "forward");
    let second = call(&j, "rr", &mut [d(x), d(1.0)]);
    assert_close(second[1], -x.sin(), 1e-12, "forward over reverse");
}

/// Bessel J0 by its series (enough terms for |x| < 2), independent of the
/// C library the JIT calls.
fn libm_j0(x: f64) -> f64 {
    let (mut term, mut sum) = (1.0, 1.0);
    for k in 1..30 {
        term *= -(x * x) / (4.0 * (k * k) as f64);
        sum += term;
    }
    sum
}
