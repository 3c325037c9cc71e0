//! Dense Hessians (`[hessian(NAME)]`, docs/jacobians.md#hessians):
//! symmetric, equal to central differences of the gradient and to a
//! Hessian computed by hand, through calls, a checkpointed loop and
//! recursion, with `inout` arguments; and the errors (E0310).

use crate::support::{arg_floats, arr, assert_close, d, jit, number};
use adc::{ArgValue, CallError, Constant, JitModule};

/// The Hessian `n` x `n` of central differences of `grad` at `at`.
fn differences(grad: &dyn Fn(&[f64]) -> Vec<f64>, at: &[f64]) -> Vec<f64> {
    let n = at.len();
    let h = 1e-5;
    let mut hess = vec![0.0; n * n];
    for c in 0..n {
        let (mut p, mut m) = (at.to_vec(), at.to_vec());
        p[c] += h;
        m[c] -= h;
        let (gp, gm) = (grad(&p), grad(&m));
        for r in 0..n {
            hess[r * n + c] = (gp[r] - gm[r]) / (2.0 * h);
        }
    }
    hess
}

fn assert_symmetric(hess: &[f64], n: usize) {
    for r in 0..n {
        for c in 0..r {
            let (a, b) = (hess[r * n + c], hess[c * n + r]);
            assert_close(
                a,
                b,
                1e-12,
                &format!("hess[{r}][{c}] against hess[{c}][{r}]"),
            );
        }
    }
}

fn assert_near(got: &[f64], want: &[f64], rel: f64, what: &str) {
    assert_eq!(got.len(), want.len(), "{what}: lengths");
    let n = (got.len() as f64).sqrt() as usize;
    for (k, (g, w)) in got.iter().zip(want).enumerate() {
        assert_close(*g, *w, rel, &format!("{what} [{}][{}]", k / n, k % n));
    }
}

/// `g`: 1 + 35 + 4 = 40 columns (`x`, `a`, `u`: two chunks of 32), a
/// callee, `inout` `u`.
const SRC: &str = "
double w(double t, double u) { return t * exp(-u * t * 0.1); }

[hessian(hg)]
[autodiff_reverse(dg, Active, Duplicated, Duplicated, Const, Active)]
double g(double x, double[] a, inout double[] u, int n) {
    double t = x * x;
    for (int i = 0; i < len(a); i++) {
        t = t + w(a[i], x) * (i + 1.0) + a[i] * a[(i + 1) % len(a)];
    }
    for (int i = 0; i < len(u); i++) {
        u[i] = u[i] * t + sin(a[i % len(a)] * u[i]);
        t = t + u[i] * u[i] * n;
    }
    return log(1.0 + t * t);
}";

fn point() -> Vec<f64> {
    let mut v = vec![0.3];
    v.extend((0..35).map(|i| ((i * 7 % 5) as f64 - 2.0) * 0.2));
    v.extend([0.5, -0.3, 0.4, 0.1]);
    v
}

fn g_args(v: &[f64]) -> Vec<ArgValue> {
    vec![
        d(v[0]),
        arr(&v[1..36]),
        arr(&v[36..40]),
        ArgValue::Scalar(Constant::I64(2)),
    ]
}

/// The gradient of `g` at `v` by its reverse derivative `dg`.
fn g_gradient(j: &JitModule, v: &[f64]) -> Vec<f64> {
    let mut args = vec![
        d(v[0]),
        arr(&v[1..36]),
        arr(&[0.0; 35]),
        arr(&v[36..40]),
        arr(&[0.0; 4]),
        ArgValue::Scalar(Constant::I64(2)),
        d(1.0),
    ];
    let r = j.call("dg", &mut args).expect("dg runs");
    let mut g = vec![number(&r[1])];
    g.extend(arg_floats(&args[2]));
    g.extend(arg_floats(&args[4]));
    g
}

#[test]
fn symmetric_equal_to_differences_of_the_gradient_and_does_what_g_does() {
    let j = jit(SRC);
    let v = point();
    let mut args = g_args(&v);
    args.push(arr(&[0.0; 40 * 40]));
    let r = j.call("hg", &mut args).expect("hg runs");
    let hess = arg_floats(&args[4]);
    let mut plain = g_args(&v);
    let want = j.call("g", &mut plain).expect("g runs");
    assert_eq!(r, want, "the result");
    assert_eq!(args[..4], plain[..], "the writes");
    assert_symmetric(&hess, 40);
    let fd = differences(&|p| g_gradient(&j, p), &v);
    assert_near(&hess, &fd, 1e-5, "against central differences");
    // A wrong length is a runtime error.
    let mut short = g_args(&v);
    short.push(arr(&[0.0; 40 * 40 - 1]));
    assert!(matches!(
        j.call("hg", &mut short),
        Err(CallError::Runtime(_))
    ));
}

#[test]
fn a_hessian_computed_by_hand() {
    // f = x^2 y^3 + sin(x) z + s^2 x, with `s` inout (a column) and `y`
    // left out by `Const`.
    let src = "[hessian(hf, Dual, Const, Dual, Dual)]
static double f(double x, double y, double z, inout double s) {
    double r = x * x * y * y * y + sin(x) * z + s * s * x;
    s = 3.0 * s;
    return r;
}
double call(double x, double y, double z, inout double s, out double[] hess) {
    return hf(x, y, z, s, hess);
}";
    let j = jit(src);
    let (x, y, z, s) = (0.7, 1.3, -0.4, 2.0);
    let mut args = [d(x), d(y), d(z), d(s), arr(&[0.0; 9])];
    let r = j.call("call", &mut args).expect("runs");
    let want = x * x * y * y * y + x.sin() * z + s * s * x;
    assert_close(number(&r[0]), want, 1e-15, "the result");
    assert_eq!(arg_floats(&args[3]), [6.0], "`s` written");
    // Columns x, z, s.
    let hand = [
        2.0 * y * y * y - x.sin() * z,
        x.cos(),
        2.0 * s,
        x.cos(),
        0.0,
        0.0,
        2.0 * s,
        0.0,
        2.0 * x,
    ];
    assert_near(&arg_floats(&args[4]), &hand, 1e-14, "by hand");
}

/// A Hessian against central differences of the gradient `dk` of `k(x,
/// a)`, `a` of length `n`.
fn against_differences(src: &str, n: usize) {
    let j = jit(src);
    let v: Vec<f64> = (0..=n).map(|i| 0.3 + 0.1 * (i % 4) as f64).collect();
    let mut args = [d(v[0]), arr(&v[1..]), arr(&vec![0.0; (n + 1) * (n + 1)])];
    let r = j.call("hk", &mut args).expect("hk runs");
    let mut plain = [d(v[0]), arr(&v[1..])];
    assert_eq!(r, j.call("k", &mut plain).expect("k runs"));
    let hess = arg_floats(&args[2]);
    assert_symmetric(&hess, n + 1);
    let grad = |p: &[f64]| {
        let mut args = [d(p[0]), arr(&p[1..]), arr(&vec![0.0; n]), d(1.0)];
        let r = j.call("dk", &mut args).expect("dk runs");
        let mut g = vec![number(&r[1])];
        g.extend(arg_floats(&args[2]));
        g
    };
    assert_near(&hess, &differences(&grad, &v), 1e-5, "against differences");
    assert!(hess.iter().any(|h| h.abs() > 1e-3), "a nonzero Hessian");
}

#[test]
fn through_a_checkpointed_loop() {
    for checkpoint in ["[checkpoint(3)]", "[checkpoint]"] {
        let src = format!(
            "[hessian(hk)]
[autodiff_reverse(dk, Active, Duplicated, Active)]
double k(double x, double[] a) {{
    double s = x;
    {checkpoint}
    for (int i = 0; i < 20; i++) {{
        s = s + sin(s * a[i % len(a)]) * 0.5 + x * a[(i + 1) % len(a)];
    }}
    return s * s;
}}"
        );
        against_differences(&src, 5);
    }
}

#[test]
fn through_recursion() {
    let src = "
double power(double x, double[] a, int i) {
    if (i == len(a)) return 1.0;
    return a[i] * x + sin(x * power(x, a, i + 1));
}

[hessian(hk)]
[autodiff_reverse(dk, Active, Duplicated, Active)]
double k(double x, double[] a) {
    return power(x, a, 0) * a[0];
}";
    against_differences(src, 4);
}

#[test]
fn the_generated_functions_can_be_called_from_the_module() {
    // `hs` on a `static` function is `static`: callable inside the
    // module, not exported.
    let src = "[hessian(hs)]
static double sq(double x) { return x * x * x; }
double use_it() { double h[1]; double r = hs(2.0, h); return h[0] + r; }";
    let j = jit(src);
    assert_eq!(number(&j.call("use_it", &mut []).expect("runs")[0]), 20.0);
    let o = adc::driver::compile_object("t.ad", src, "T_H", &adc::CompileOptions::default())
        .expect("compiles");
    assert!(o.header.contains("double use_it(void);"), "{}", o.header);
    assert!(!o.header.contains("hs"), "{}", o.header);
}

#[test]
fn misuse_is_e0310() {
    for (attr, f) in [
        ("hessian", "double f(double x, double y)"),
        (
            "hessian(hf, sparse, Dual, Dual)",
            "double f(double x, double y)",
        ),
        ("hessian(hf, Dual)", "double f(double x, double y)"),
        ("hessian(hf, Maybe, Dual)", "double f(double x, double y)"),
        ("hessian(hf, width = 2)", "double f(double x, double y)"),
        ("hessian(hf)", "int f(double x, double y)"),
        ("hessian(hf)", "void f(double x, double y)"),
        ("hessian(hf)", "(double, double) f(double x, double y)"),
        (
            "hessian(hf, Dual, Dual, Dual)",
            "double f(double x, double y)",
        ),
    ] {
        let body = match f.split(' ').next() {
            Some("void") => "{ }",
            Some("int") => "{ return 1; }",
            Some("(double,") => "{ return (x, y); }",
            _ => "{ return x * y; }",
        };
        let src = format!("[{attr}]\n{f} {body}");
        let e = adc::compile_jit("t.ad", &src, &adc::CompileOptions::default())
            .err()
            .unwrap_or_else(|| panic!("{attr} on {f} compiles"));
        assert_eq!(e.diagnostics[0].code, "E0310", "{attr} on {f}: {e}");
        let line_end = src.find('\n').unwrap_or(0) as u32;
        assert!(
            e.diagnostics[0].span.start < line_end,
            "{attr}: at the attribute"
        );
    }
}
