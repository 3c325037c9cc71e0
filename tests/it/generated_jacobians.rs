//! Jacobians and Hessians asked from Rust (`Derivative::jacobian`,
//! `Derivative::hessian`) of functions an attribute generates, which the
//! source does not define (a reverse derivative, a `[jacobian]` function):
//! the matrices against hand derivatives; a generated function returning
//! a tuple and an `extern` are refused with a message naming them.

use crate::support::{arg_floats, arr, d, number};
use adc::Derivative;

const SRC: &str = "[autodiff_reverse(rg, Active, ActiveOnly)]
[autodiff_forward(tg, Dual, Dual)]
double g(double x) { return x * x * sin(x); }
[jacobian(J)]
double h(double[] x) { return x[0] * x[0] * x[1] + sin(x[0] * x[1]); }
";

fn assert_near(got: &[f64], want: &[f64], what: &str) {
    assert_eq!(got.len(), want.len(), "{what}: {got:?} against {want:?}");
    for (g, w) in got.iter().zip(want) {
        assert!(
            (g - w).abs() <= 1e-12 * (1.0 + w.abs()),
            "{what}: {got:?} against {want:?}"
        );
    }
}

/// `rg(x, seed) = seed * g'(x)`, `g = x^2 sin x`: its Jacobian
/// `[seed * g''(x), g'(x)]` and Hessian `[[seed * g'''(x), g''(x)],
/// [g''(x), 0]]`, by hand.
#[test]
fn jacobian_and_hessian_of_a_reverse_derivative() {
    let asks = [
        Derivative::jacobian("rg", "Jr"),
        Derivative::hessian("rg", "Hr"),
    ];
    let j = adc::compile_jit_with("t.ad", SRC, &asks).unwrap_or_else(|f| panic!("{f}"));
    let (x, seed) = (0.7f64, 1.3);
    let (s, c) = x.sin_cos();
    let g1 = 2.0 * x * s + x * x * c;
    let g2 = 2.0 * s + 4.0 * x * c - x * x * s;
    let g3 = 6.0 * c - 6.0 * x * s - x * x * c;
    let mut args = [d(x), d(seed), arr(&[0.0; 2])];
    let r = j.call("Jr", &mut args).expect("runs");
    assert_near(&[number(&r[0])], &[seed * g1], "rg's value");
    assert_near(&arg_floats(&args[2]), &[seed * g2, g1], "Jr");
    let mut args = [d(x), d(seed), arr(&[0.0; 4])];
    j.call("Hr", &mut args).expect("runs");
    assert_near(&arg_floats(&args[2]), &[seed * g3, g2, g2, 0.0], "Hr");
}

/// `J(x, jac)` returns `h(x)` and writes its gradient: its Jacobian is
/// the gradient over the Hessian of `h`, its Hessian `h`'s.
#[test]
fn jacobian_and_hessian_of_a_generated_jacobian() {
    let asks = [
        Derivative::jacobian("J", "JJ"),
        Derivative::hessian("J", "HJ"),
    ];
    let j = adc::compile_jit_with("t.ad", SRC, &asks).unwrap_or_else(|f| panic!("{f}"));
    let (a, b) = (0.4f64, -1.1);
    let (s, c) = (a * b).sin_cos();
    let grad = [2.0 * a * b + b * c, a * a + a * c];
    let hess = [
        2.0 * b - b * b * s,
        2.0 * a + c - a * b * s,
        2.0 * a + c - a * b * s,
        -a * a * s,
    ];
    let mut args = [arr(&[a, b]), arr(&[0.0; 2]), arr(&[0.0; 6])];
    j.call("JJ", &mut args).expect("runs");
    assert_near(&arg_floats(&args[1]), &grad, "J's jac");
    let want: Vec<f64> = grad.iter().chain(&hess).copied().collect();
    assert_near(&arg_floats(&args[2]), &want, "JJ");
    let mut args = [arr(&[a, b]), arr(&[0.0; 2]), arr(&[0.0; 4])];
    j.call("HJ", &mut args).expect("runs");
    assert_near(&arg_floats(&args[2]), &hess, "HJ");
}

/// A tuple result is refused as a user function's is; an `extern` has no
/// body to differentiate. Either message names the function asked about.
#[test]
fn a_tuple_and_an_extern_are_refused_by_name() {
    for (of, want) in [
        (
            "tg",
            "`jacobian` on `tg`, which returns a tuple, is not supported yet",
        ),
        ("scale", "`scale` is an `extern` declaration"),
    ] {
        let asks = [Derivative::jacobian(of, "Jx")];
        let src = format!("{SRC}extern double scale(double x);\n");
        let err = adc::compile_jit_with("t.ad", &src, &asks)
            .err()
            .expect("refused");
        assert!(err.to_string().contains(want), "{of}: {err}");
        assert!(
            err.to_string().contains(&format!("the Jacobian of `{of}`")),
            "{err}"
        );
    }
}
