use crate::support;

/// d(x / y) for a subnormal `y`: the tangent (or adjoint) is divided by
/// `y` (`divz`), not multiplied by `1 / y`, which overflows to infinity
/// where the quotient is finite (a review's finding). Forward and reverse
/// mode, seeds small enough that every derivative is finite.
#[test]
fn derivative_of_a_division_by_a_subnormal_is_finite() {
    let j = support::jit(
        "[autodiff_forward(tf, Dual, Dual, Dual)]
[autodiff_reverse(rf, Active, Active, Active)]
double f(double x, double y) { return x / y; }",
    );
    let (x, y, s) = (1e-300, 1e-310, 1e-20);
    let q = x / y;
    let want = [s / y, -(q * s) / y];
    let mut args = [support::d(x), support::d(s), support::d(y), support::d(0.0)];
    let t = support::floats(&j, "tf", &mut args);
    assert_eq!(t, vec![q, want[0]], "forward along x");
    let mut args = [support::d(x), support::d(0.0), support::d(y), support::d(s)];
    let t = support::floats(&j, "tf", &mut args);
    assert_eq!(t, vec![q, want[1]], "forward along y");
    let mut args = [support::d(x), support::d(y), support::d(s)];
    let g = support::floats(&j, "rf", &mut args);
    assert_eq!(g[g.len() - 2..], want, "reverse");
    assert!(want.iter().all(|v| v.is_finite() && *v != 0.0));
}
