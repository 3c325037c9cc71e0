use crate::support::{assert_close, d, floats, jit};

/// A custom forward derivative of a function with an `inout` array makes
/// the function's writes itself (it has the generated derivative's
/// signature): the primal call once made them first, so `H` squared the
/// squares (result 81, tangent 18 at x = 3).
#[test]
fn custom_forward_derivative_of_a_function_that_writes_its_argument() {
    let j = jit("void sq_fwd(inout double[] x, inout double[] d_x) {
    for (int i = 0; i < len(x); i++) { d_x[i] = 2.0 * x[i] * d_x[i]; x[i] = x[i] * x[i]; }
}
[forward_derivative(sq_fwd)]
void sq(inout double[] x) { for (int i = 0; i < len(x); i++) x[i] = x[i] * x[i]; }
double sq_sum(double[] x, inout double[] y) { double s = 0.0; for (int i = 0; i < len(x); i++) { s += x[i] * y[i]; y[i] = 2.0 * y[i]; } return s; }
double sq_sum_fwd(double[] x, double[] d_x, inout double[] y, inout double[] d_y) {
    double t = 0.0;
    for (int i = 0; i < len(x); i++) { t += d_x[i] * y[i] + x[i] * d_y[i]; y[i] = 2.0 * y[i]; d_y[i] = 2.0 * d_y[i]; }
    return t;
}
[forward_derivative(sq_sum_fwd)]
double sq_sum2(double[] x, inout double[] y) { double s = 0.0; for (int i = 0; i < len(x); i++) { s += x[i] * y[i]; y[i] = 2.0 * y[i]; } return s; }
[autodiff_forward(user_fwd, Dual, DualOnly)]
double user(double x) {
    double a[1]; a[0] = x; sq(a);
    double y[1]; y[0] = x;
    double s = sq_sum2(a, y);
    return a[0] + s + y[0];
}");
    // a = x^2; s = x^2 * x = x^3; y = 2x: user = x^2 + x^3 + 2x.
    let x = 3.0;
    let t = floats(&j, "user_fwd", &mut [d(x), d(1.0)]);
    assert_close(t[0], 2.0 * x + 3.0 * x * x + 2.0, 1e-12, "tangent");
    let j2 = jit("void sq_fwd(inout double[] x, inout double[] d_x) {
    for (int i = 0; i < len(x); i++) { d_x[i] = 2.0 * x[i] * d_x[i]; x[i] = x[i] * x[i]; }
}
[forward_derivative(sq_fwd)]
void sq(inout double[] x) { for (int i = 0; i < len(x); i++) x[i] = x[i] * x[i]; }
[autodiff_forward(user_fwd, Dual, Dual)]
double user(double x) { double a[1]; a[0] = x; sq(a); return a[0]; }");
    let r = floats(&j2, "user_fwd", &mut [d(x), d(1.0)]);
    assert_close(r[0], x * x, 1e-12, "result");
    assert_close(r[1], 2.0 * x, 1e-12, "tangent");
}
