//! `[jacobian(NAME, reverse)]`, `[jacobian(NAME, forward)]` and the choice
//! between them at each call (docs/jacobians.md#jacobians): the reverse
//! Jacobian against the forward one, in several chunks of rows, with
//! `inout` arguments; the automatic choice by shape; calls that stay calls;
//! the errors.

use crate::support::{arg_floats, arr, d, jit, number};
use adc::{ArgValue, CallError, Constant, JitModule};

/// Three Jacobians of `g`: by rows, by columns, and chosen at each call.
const SRC: &str = "
double pw(double x, int n) { if (n == 0) return 1.0; return x * pw(x, n - 1) + 0.1 * sin(x); }

[jacobian(jr, reverse)]
[jacobian(jf, forward)]
[jacobian(ja)]
double g(double x, inout double y, double[] a, inout double[] u, out double[] o, int n) {
    double t = y + pw(x, n);
    for (int i = 0; i < len(a); i++) t = t + sin(a[i] * x) * (i + 1.0);
    for (int i = 0; i < len(u); i++) {
        u[i] = u[i] * t + a[(i * 3) % len(a)] * y;
        if (u[i] > 1.0) u[i] = sqrt(u[i]);
    }
    for (int i = 0; i < len(o); i++) o[i] = u[i % len(u)] * a[i % len(a)] + t;
    y = t * x;
    return exp(-t * t * 0.01) + u[len(u) - 1];
}";

/// Rows 1 + 1 + len(u) + len(o), columns 2 + len(a) + len(u).
fn call(j: &JitModule, name: &str, na: usize, nu: usize, no: usize) -> (Vec<ArgValue>, f64) {
    let a: Vec<f64> = (0..na).map(|i| ((i * 7 % 5) as f64 - 2.0) * 0.3).collect();
    let u: Vec<f64> = (0..nu).map(|i| 0.5 - 0.2 * i as f64).collect();
    let rows = 2 + nu + no;
    let cols = 2 + na + nu;
    let mut args = vec![
        d(0.4),
        d(0.2),
        arr(&a),
        arr(&u),
        arr(&vec![0.0; no]),
        ArgValue::Scalar(Constant::I64(3)),
        arr(&vec![0.0; rows * cols]),
    ];
    let r = j
        .call(name, &mut args)
        .unwrap_or_else(|e| panic!("{name}: {e}"));
    (args, number(&r[0]))
}

#[test]
fn reverse_equals_forward_and_does_what_g_does() {
    let j = jit(SRC);
    // 20 rows and 19 columns: two chunks each way.
    for (na, nu, no) in [(13, 4, 14), (2, 1, 1), (3, 2, 40)] {
        let (rev, r1) = call(&j, "jr", na, nu, no);
        let (fwd, r2) = call(&j, "jf", na, nu, no);
        assert_eq!(r1, r2, "the result");
        assert_eq!(rev[..6], fwd[..6], "the writes");
        let (jr, jf) = (arg_floats(&rev[6]), arg_floats(&fwd[6]));
        for (k, (x, y)) in jr.iter().zip(&jf).enumerate() {
            assert!(
                (x - y).abs() <= 1e-12 * (1.0 + y.abs()),
                "({na}, {nu}, {no}) entry {k}: reverse {x}, forward {y}"
            );
        }
        assert!(jf.iter().filter(|x| **x != 0.0).count() > jf.len() / 3);
    }
}

#[test]
fn the_choice_is_reverse_for_fewer_rows_than_columns() {
    let j = jit(SRC);
    assert!(j.function("ja__rev").is_some() && j.function("ja__fwd").is_some());
    // 2 + 1 + 1 rows, 2 + 30 + 1 columns: by rows; 2 + 1 + 30 rows, 2 + 1
    // + 1 columns: by columns. The two differ in their last bits.
    for ((na, nu, no), same_as) in [((30, 1, 1), "jr"), ((1, 1, 30), "jf")] {
        let (auto, _) = call(&j, "ja", na, nu, no);
        let (want, _) = call(&j, same_as, na, nu, no);
        assert_eq!(auto, want, "({na}, {nu}, {no}) as {same_as}");
        let other = if same_as == "jr" { "jf" } else { "jr" };
        assert_ne!(
            auto,
            call(&j, other, na, nu, no).0,
            "({na}, {nu}, {no}): {other} differs"
        );
    }
}

/// Scalars only: the shape is the same at every call, so the compiler
/// chooses and generates one way (a 20,000-term expression compiled the
/// unused way too, three quarters of its code). Fewer rows than columns:
/// by rows, equal to the forced reverse Jacobian bit for bit; otherwise by
/// columns, equal to the forced forward one.
#[test]
fn fixed_shapes_are_chosen_at_compile_time() {
    let src = "
[jacobian(jw)] [jacobian(jwr, reverse)]
double wide(double x, double y, double z) { return x * sin(y) + exp(z * x) / (1.0 + y * y); }
[jacobian(jt)] [jacobian(jtf, forward)]
double tall(double x, inout double y, out double z) { z = sin(x) * y; y = y * x + 0.3; return cos(x * y); }";
    let j = jit(src);
    for absent in [
        "jw__fwd",
        "jw__rev",
        "jw__columns",
        "jt__fwd",
        "jt__rev",
        "jt__rows",
    ] {
        assert!(j.function(absent).is_none(), "{absent} was generated");
    }
    assert!(j.function("jw__rows").is_some() && j.function("jt__columns").is_some());
    let wide = |name: &str| {
        let mut args = [d(0.7), d(-1.3), d(0.4), arr(&[0.0; 3])];
        let r = j.call(name, &mut args).expect("runs");
        (number(&r[0]), arg_floats(&args[3]))
    };
    assert_eq!(wide("jw"), wide("jwr"));
    let tall = |name: &str| {
        let mut args = [d(0.7), d(-1.3), d(0.0), arr(&[0.0; 6])];
        let r = j.call(name, &mut args).expect("runs");
        (
            number(&r[0]),
            arg_floats(&args[1]),
            arg_floats(&args[2]),
            arg_floats(&args[3]),
        )
    };
    assert_eq!(tall("jt"), tall("jtf"));
    // d/dx of the result, x * sin(y) + exp(z x) / (1 + y^2), at (0.7, -1.3, 0.4).
    let (x, y, z) = (0.7f64, -1.3f64, 0.4f64);
    let want = y.sin() + z * (z * x).exp() / (1.0 + y * y);
    assert!((wide("jw").1[0] - want).abs() < 1e-14, "{:?}", wide("jw"));
}

#[test]
fn without_a_float_result_the_jacobian_is_by_columns() {
    let src = "[jacobian(jp)]
void polar(double r, double t, out double[] xy) { xy[0] = r * cos(t); xy[1] = r * sin(t); }";
    let j = jit(src);
    assert!(j.function("jp__rev").is_none());
    let mut args = [d(2.0), d(0.0), arr(&[0.0; 2]), arr(&[0.0; 4])];
    j.call("jp", &mut args).expect("runs");
    assert_eq!(arg_floats(&args[3]), [1.0, 0.0, 0.0, 2.0]);
    let mut short = [d(2.0), d(0.0), arr(&[0.0; 2]), arr(&[0.0; 3])];
    assert!(matches!(
        j.call("jp", &mut short),
        Err(CallError::Runtime(_))
    ));
}

#[test]
fn misuse_of_the_modes_is_e0309() {
    for (attr, f) in [
        (
            "jacobian(jf, forward, reverse)",
            "double f(double x) { return x; }",
        ),
        (
            "jacobian(jf, reverse, reverse)",
            "double f(double x) { return x; }",
        ),
        ("jacobian(jf, sideways)", "double f(double x) { return x; }"),
    ] {
        let src = format!("[{attr}]\n{f}");
        let e = adc::compile_jit("t.ad", &src, &adc::CompileOptions::default())
            .err()
            .unwrap_or_else(|| panic!("{attr} compiles"));
        assert_eq!(e.diagnostics[0].code, "E0309", "{attr}: {e}");
        if attr.contains("sideways") {
            // The message lists every option there is.
            let msg = &e.diagnostics[0].message;
            for option in ["`forward`", "`reverse`", "`sparse`", "`width = W`"] {
                assert!(msg.contains(option), "{msg}");
            }
        }
    }
}
