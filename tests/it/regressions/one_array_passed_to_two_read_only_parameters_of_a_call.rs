use crate::support::{assert_close, d, floats, jit};
use adc::{ArgValue, ArrayValue};

/// One array passed to two read-only parameters of a callee that stays a
/// call (`[checkpoint]`, recursion, views of one array): both shadows were
/// the caller's one shadow, and the callee's reverse derivative, whose
/// `carry` keeps `d_a[i + 1]` in a register across the store to `d_b[i]`,
/// lost `d_b`'s part (gradient [2, 2] instead of [7, 2]; an independent
/// tester's finding). The second shadow is now an array of its own, added
/// into the first after the call. Checked against forward mode.
#[test]
fn one_array_passed_to_two_read_only_parameters_of_a_call() {
    let j = jit("
[checkpoint]
double k(double[] a, double[] b) {
    double s = 0.0;
    for (int i = 0; i + 1 < len(a); i++) s += (a[i] + a[i + 1]) * b[i];
    return s;
}
double kr(double[] a, double[] b, int depth) {
    if (depth > 0) return kr(a, b, depth - 1);
    double s = 0.0;
    for (int i = 0; i + 1 < len(a); i++) s += (a[i] + a[i + 1]) * b[i];
    return s;
}
[checkpoint]
double k3(double[] a, double[] b, double[] c) {
    double s = 0.0;
    for (int i = 0; i + 1 < len(a); i++) s += (a[i] + a[i + 1]) * b[i] * c[i + 1];
    return s;
}
[autodiff_reverse(df, Duplicated, ActiveOnly)]
[autodiff_forward(tf, Dual, Dual)]
double f(double[] x) { return k(x, x) + kr(x, x, 2) + k3(x[0..3], x[1..4], x[0..3]); }
");
    let x = vec![2.0, 3.0, 1.5, 0.7];
    let arr = |v: Vec<f64>| ArgValue::Array(ArrayValue::F64(v));
    let mut args = [arr(x.clone()), arr(vec![0.0; 4]), d(1.0)];
    j.call("df", &mut args).expect("runs");
    let ArgValue::Array(ArrayValue::F64(grad)) = &args[1] else {
        panic!("shadow")
    };
    for (k, g) in grad.iter().enumerate() {
        let mut e = vec![0.0; 4];
        e[k] = 1.0;
        let t = floats(&j, "tf", &mut [arr(x.clone()), arr(e)]);
        assert_close(*g, t[1], 1e-14, &format!("d/dx{k}"));
    }
    // By hand for the first two terms: d/dx0 of 2 (x0 + x1) x0 + ... .
    assert!(grad[0] > 2.0 * (2.0 * 2.0 + 3.0), "{grad:?}");
}
