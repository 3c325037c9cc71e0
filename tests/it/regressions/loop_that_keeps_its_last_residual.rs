use crate::support::{assert_close, d, floats, jit};
use adc::{ArgValue, ArrayValue};

/// "Keep the last residual": only the last element and `w` through it.
#[test]
fn loop_that_keeps_its_last_residual() {
    let j = jit("[autodiff_reverse(df, Active, Duplicated, Active)]
double f(double w, double[] a) {
    double r = 0.0;
    for (int i = 0; i < len(a); i++) r = a[i] * w - 1.0;
    return r * r;
}");
    let (w, a) = (1.5, [2.0, 3.0, 4.0]);
    let mut args = [
        d(w),
        ArgValue::Array(ArrayValue::F64(a.to_vec())),
        ArgValue::Array(ArrayValue::F64(vec![0.0; 3])),
        d(1.0),
    ];
    let out = floats(&j, "df", &mut args);
    let r = a[2] * w - 1.0;
    assert_close(out[0], r * r, 1e-15, "primal");
    assert_close(out[1], 2.0 * r * a[2], 1e-15, "d/dw");
    let ArgValue::Array(ArrayValue::F64(da)) = &args[2] else {
        panic!("shadow")
    };
    assert_eq!(da, &vec![0.0, 0.0, 2.0 * r * w]);
}
