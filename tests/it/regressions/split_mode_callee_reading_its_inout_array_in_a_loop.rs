use crate::support::{assert_close, d, floats, jit};
use adc::{ArgValue, ArrayValue};

/// A callee too big to inline runs in split mode: its forward half now, its
/// reverse half after the caller's later statements. It reads its `inout`
/// array in a loop, which unzip computed again from the array in the
/// reverse half instead of taping (the callee never writes it): split mode
/// refused that (E0999, "the reverse sweep reads a writable array
/// parameter") on a valid program, and must read the values of the call,
/// not those the caller writes after it (independent tester's finding).
/// big(o, 1) = c * o[0] * o[1] with c a constant: the gradient of f in w is
/// [c w1, c w0] though f overwrites w[0] after the call.
#[test]
fn split_mode_callee_reading_its_inout_array_in_a_loop() {
    let filler: String = (0..100)
        .map(|k| format!("    s = s * 0.5 + sin(s + {k}.0);\n"))
        .collect();
    let source = format!(
        "static double big(inout double[] o, double s) {{
{filler}    for (int j = 0; j < len(o); j++) s = s * o[j];
    return s;
}}
[autodiff_reverse(df, Duplicated, Active)]
double f(inout double[] w) {{
    double r = big(w, 1.0);
    w[0] = 3.0;
    return r;
}}"
    );
    let (w0, w1) = (0.5, 0.6);
    let j = jit(&source);
    let mut primal = [ArgValue::Array(ArrayValue::F64(vec![w0, w1]))];
    let c = floats(&j, "f", &mut primal)[0] / (w0 * w1);
    let mut args = [
        ArgValue::Array(ArrayValue::F64(vec![w0, w1])),
        ArgValue::Array(ArrayValue::F64(vec![0.0; 2])),
        d(1.0),
    ];
    j.call("df", &mut args)
        .unwrap_or_else(|e| panic!("df: {e}"));
    let ArgValue::Array(ArrayValue::F64(dw)) = &args[1] else {
        panic!("shadow")
    };
    assert_close(dw[0], c * w1, 1e-13, "df/dw0");
    assert_close(dw[1], c * w0, 1e-13, "df/dw1");
}
