use adc::{ArgValue, ArrayValue};

/// A seed of the wrong length passed to a reverse derivative of `width = W`
/// was the runtime error `shadow length differs from its primal's at
/// FILE:?`: `transpose` built the seed's length check without a span
/// (found by a new user's program, 2026-11-30). It points at the attribute
/// now, as the checks of the other parameters do.
#[test]
fn vector_reverse_seed_of_the_wrong_length_has_a_place() {
    let src = "[autodiff_reverse(dw, Duplicated, ActiveOnly, width = 2)]
double f(double[] x) { return x[0] * x[1]; }";
    let j = adc::compile_jit("seed.ad", src, &adc::CompileOptions::default())
        .unwrap_or_else(|f| panic!("{f}"));
    let a = |v: Vec<f64>| ArgValue::Array(ArrayValue::F64(v));
    let mut args = vec![a(vec![1.0, 2.0]), a(vec![0.0; 4]), a(vec![1.0, 1.0, 1.0])];
    match j.call("dw", &mut args) {
        Err(adc::CallError::Runtime(msg)) => assert_eq!(
            msg, "shadow length differs from its primal's at seed.ad:1:1",
            "{msg}"
        ),
        other => panic!("{other:?}"),
    }
}
