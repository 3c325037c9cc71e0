use crate::support::{assert_close, d, floats, jit};
use adc::{ArgValue, ArrayValue};

/// Reverse over reverse through a branch in a loop, with an array: the
/// inner derivative is f_x = Σ (a_i > 0 ? 2 a_i x : a_i), so the outer
/// gradient is Σ_{a_i > 0} 2 a_i for x and (a_i > 0 ? 2x : 1) for a_i.
#[test]
fn reverse_over_reverse_through_a_branch_and_an_array() {
    let j = jit("double f(double x, double[] a) {
    double s = 0.0;
    for (int i = 0; i < len(a); i++) {
        if (a[i] > 0.0) s += a[i] * x * x; else s += x * a[i];
    }
    return s;
}
[autodiff_reverse(df, Active, Duplicated, Active)]
double h(double x, double[] a) { return f(x, a); }
[autodiff_reverse(dk, Active, Duplicated, Const, Const, Active)]
double k(double x, double[] a, inout double[] da, double s) { auto [y, dx] = df(x, a, da, s); return dx; }");
    let (x, a) = (1.25, [2.0, -1.0, 0.5, -3.0]);
    let mut args = [
        d(x),
        ArgValue::Array(ArrayValue::F64(a.to_vec())),
        ArgValue::Array(ArrayValue::F64(vec![0.0; 4])),
        ArgValue::Array(ArrayValue::F64(vec![0.0; 4])),
        d(1.0),
        d(1.0),
    ];
    let out = floats(&j, "dk", &mut args);
    let fx: f64 = a
        .iter()
        .map(|&ai| if ai > 0.0 { 2.0 * ai * x } else { ai })
        .sum();
    assert_close(out[0], fx, 1e-15, "f_x");
    assert_close(out[1], 2.0 * (2.0 + 0.5), 1e-15, "d f_x / dx");
    let ArgValue::Array(ArrayValue::F64(d_a)) = &args[2] else {
        panic!("shadow")
    };
    assert_eq!(d_a, &vec![2.0 * x, 1.0, 2.0 * x, 1.0]);
}
