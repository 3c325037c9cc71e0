use crate::support::{assert_close, d, floats, jit};

/// A fixed-point iteration that copies its iterate into a result variable:
/// z' = z/2 + x five times, so d res/dx = 1 + 1/2 + ... + 1/16.
#[test]
fn fixed_point_iteration_copied_into_a_result() {
    let src = "[autodiff_reverse(df, Active, Active)]
double f(double x) {
    double z = 1.0;
    double res = 0.0;
    for (int k = 0; k < 5; k++) { z = 0.5 * z + x; res = z; }
    return res;
}";
    let j = jit(src);
    let out = floats(&j, "df", &mut [d(0.25), d(1.0)]);
    assert_close(out[1], 1.9375, 1e-15, "d/dx");
}
