use crate::support::{assert_close, d, floats, jit};
use adc::{ArgValue, ArrayValue};

/// An element reference writes where the call it is passed to runs, after
/// the other arguments, which may branch and read the array: such an array
/// is not re-read by the reverse sweep (an independent review of fe78587
/// found the reverse sweep reading the overwritten element: gradients 3x
/// too large, and a segfault when the element was an index).
#[test]
fn element_reference_written_after_a_branching_argument() {
    let j = jit("void setv(inout double r, double v) { r = v; }
double sumsq(double[] a) { double s = 0.0; for (int i = 0; i < len(a); i++) { s += a[i] * a[i]; } return s; }
void set2(inout int r, inout double o, double v) { o = v; r = 100000000; }
[autodiff_reverse(df, Active, ActiveOnly)]
double f(double x) {
    double t[1];
    t[0] = x;
    setv(t[0], x > 0.0 ? t[0] * t[0] : 0.0);
    return t[0];
}
[autodiff_reverse(dg, Active, ActiveOnly)]
double g(double x) {
    double t[3];
    t[0] = x; t[1] = 2.0 * x; t[2] = 3.0;
    setv(t[0], sumsq(t));
    return t[0];
}
[autodiff_reverse(dh, Duplicated, Active, ActiveOnly)]
double h(double[] a, double x) {
    int idx[1];
    double s = 0.0;
    set2(idx[0], s, x > 0.0 ? a[idx[0]] * a[idx[0]] : x);
    return s;
}");
    // f = x^2, g = x^2 + 4x^2 + 9: 2x and 10x.
    assert_close(floats(&j, "df", &mut [d(3.0), d(1.0)])[0], 6.0, 1e-15, "df");
    assert_close(floats(&j, "dg", &mut [d(0.7), d(1.0)])[0], 7.0, 1e-14, "dg");
    let mut args = [
        ArgValue::Array(ArrayValue::F64(vec![2.0])),
        ArgValue::Array(ArrayValue::F64(vec![0.0])),
        d(0.5),
        d(1.0),
    ];
    let dx = floats(&j, "dh", &mut args);
    let ArgValue::Array(ArrayValue::F64(da)) = &args[1] else {
        panic!("shadow")
    };
    assert_eq!((da[0], dx[0]), (4.0, 0.0), "dh: a[0]^2");
}
