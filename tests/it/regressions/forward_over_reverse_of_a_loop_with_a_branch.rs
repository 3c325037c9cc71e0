use crate::support::{assert_close, d, floats, jit};
use adc::{ArgValue, ArrayValue};

/// Forward over reverse of a loop with a branch: `linearize` walked blocks
/// in layout order, where a loop's step block may come before the block
/// defining what it uses, and panicked ("defined before use"). With
/// a = [1, 2, -1, 3] the loop computes s = (x + x) * x + x = 2x² + x.
#[test]
fn forward_over_reverse_of_a_loop_with_a_branch() {
    let j = jit("double f(double x, double[] a) {
    double s = 0.0;
    for (int i = 0; i < len(a); i++) {
        if (a[i] > 0.0) s = s + x; else s = s * x;
    }
    return s;
}
[autodiff_reverse(df, Active, Duplicated, Active)]
double h(double x, double[] a) { return f(x, a); }
[autodiff_forward(hv, Dual, Const, Const, Const, Dual)]
double k(double x, double[] a, inout double[] da, double s) { auto [y, dx] = df(x, a, da, s); return dx; }");
    let x = 1.1;
    let a = ArgValue::Array(ArrayValue::F64(vec![1.0, 2.0, -1.0, 3.0]));
    let da = ArgValue::Array(ArrayValue::F64(vec![0.0; 4]));
    let out = floats(&j, "hv", &mut [d(x), d(1.0), a, da, d(1.0)]);
    assert_close(out[0], 4.0 * x + 1.0, 1e-15, "f'");
    assert_close(out[1], 4.0, 1e-15, "f''");
}
