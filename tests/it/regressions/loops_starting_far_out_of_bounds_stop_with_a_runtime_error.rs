use adc::{ArgValue, ArrayValue, Constant};

/// `carry` loads the first window of a loop's array in front of the loop,
/// which is only sound when the loop's accesses are proven in bounds for
/// every iteration where they stand, not by a check earlier in the body.
/// Forward mode's tangent loads `dx[i]` are unchecked because the primal
/// `x[i]` just before them is checked: started far out of bounds, the
/// carried `dx[start]` was read before that check and the process died of
/// a segmentation fault (found in review, older than `bce::Witnesses`). The
/// primal with checked `t` in front of unchecked `a` is the same shape.
#[test]
fn loops_starting_far_out_of_bounds_stop_with_a_runtime_error() {
    let src = "[autodiff_forward(df, Dual, Const, Const, Dual)]
double f(double[] x, int start, int m) {
    double s = 0.0;
    for (int i = start; i < m; i++) s += x[i] * x[i + 1];
    return s;
}
double g(double[] a, int start, int m) {
    double t[len(a)];
    double s = 0.0;
    for (int i = start; i < m; i++) s += t[i] * a[i] + t[i + 1] * a[i + 1];
    return s;
}";
    let j = adc::compile_jit("far.ad", src, &adc::CompileOptions::default())
        .unwrap_or_else(|f| panic!("{f}"));
    let x = ArgValue::Array(ArrayValue::F64(vec![1.0, 2.0, 3.0, 4.0]));
    for start in [4i64, 1 << 20, 1_000_000_000_000, i64::MAX - 1] {
        let (s, m) = (
            ArgValue::Scalar(Constant::I64(start)),
            ArgValue::Scalar(Constant::I64(start + 1)),
        );
        for (name, mut args) in [
            ("f", vec![x.clone(), s.clone(), m.clone()]),
            ("df", vec![x.clone(), x.clone(), s.clone(), m.clone()]),
            ("g", vec![x.clone(), s.clone(), m.clone()]),
        ] {
            match j.call(name, &mut args) {
                Err(adc::CallError::Runtime(msg)) => {
                    assert!(
                        msg.starts_with("index out of bounds"),
                        "{name}({start}): {msg}"
                    )
                }
                other => panic!("{name}({start}): {other:?}"),
            }
        }
    }
}
