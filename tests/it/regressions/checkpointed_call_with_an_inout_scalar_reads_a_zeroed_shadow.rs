use crate::support::{assert_close, d, floats, jit};
use adc::{ArgValue, ArrayValue};

/// A `[checkpoint]` function with an `inout` scalar: the caller's reverse
/// sweep keeps the scalar's shadow in a stack slot, which `transpose` takes
/// to be zero where the sweep first reads it. Codegen left slots
/// uninitialized (the interpreter zeroes them), so the gradient was
/// whatever the stack held: NaN from `adc run`. Here a first call fills
/// the stack with large values.
#[test]
fn checkpointed_call_with_an_inout_scalar_reads_a_zeroed_shadow() {
    let body = "void acc(inout double s, double x, int n) { for (int i = 0; i < n; i++) s = s * x + 1.0; }
double f(double x, double[] a) { double s = a[0];
    for (int k = 0; k < 3; k++) acc(s, x * a[k], k + 2);
    return s; }
[autodiff_reverse(df, Active, Duplicated, Active)]
double entry(double x, double[] a) { return f(x, a); }
double dirty(double x) { double t[64]; for (int i = 0; i < 64; i++) t[i] = 1e300 * x; double s = 0.0; for (int i = 0; i < 64; i++) s += t[i] * t[63 - i]; return s; }";
    let gradient = |src: &str| {
        let j = jit(src);
        floats(&j, "dirty", &mut [d(1.0)]);
        let mut args = [
            d(0.8),
            ArgValue::Array(ArrayValue::F64(vec![0.3, -0.7, 1.1])),
            ArgValue::Array(ArrayValue::F64(vec![0.0; 3])),
            d(1.0),
        ];
        let r = floats(&j, "df", &mut args);
        let ArgValue::Array(ArrayValue::F64(da)) = &args[2] else {
            panic!("shadow")
        };
        let mut g = r.clone();
        g.extend(da);
        g
    };
    let joint = gradient(body);
    let checkpointed = gradient(&format!("[checkpoint] {body}"));
    assert!(joint.iter().all(|x| x.is_finite()), "{joint:?}");
    for (c, j) in checkpointed.iter().zip(&joint) {
        assert_close(*c, *j, 1e-12, "checkpointed against joint");
    }
}
