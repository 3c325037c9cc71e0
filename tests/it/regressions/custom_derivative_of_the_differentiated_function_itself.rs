use crate::support::{assert_close, d, floats, jit};

/// A custom derivative is used also where its own function is the one
/// differentiated (an attribute on it, or on an `extern`), not only at
/// calls: the attribute once differentiated the body.
#[test]
fn custom_derivative_of_the_differentiated_function_itself() {
    let j = jit(
        "double sq_rev(double x, double seed) { return 100.0 * seed; }
double sq_fwd(double x, double d_x) { return 7.0 * d_x; }
[reverse_derivative(sq_rev)]
[forward_derivative(sq_fwd)]
[autodiff_reverse(dsq, Active, Active)]
[autodiff_forward(tsq, Dual, Dual)]
double sq(double x) { return x * x; }
extern double j1(double x);
double j0_rev(double x, double seed) { return -j1(x) * seed; }
[reverse_derivative(j0_rev)]
[autodiff_reverse(dj0, Active, Active)]
extern double j0(double x);",
    );
    assert_eq!(floats(&j, "dsq", &mut [d(3.0), d(1.0)]), vec![9.0, 100.0]);
    assert_eq!(floats(&j, "tsq", &mut [d(3.0), d(1.0)]), vec![9.0, 7.0]);
    let dj0 = floats(&j, "dj0", &mut [d(1.0), d(1.0)]);
    assert_close(dj0[1], -0.44005058574493355, 1e-14, "dj0");
}
