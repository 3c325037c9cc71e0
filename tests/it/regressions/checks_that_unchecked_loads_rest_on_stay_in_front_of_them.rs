use crate::support::floats;
use adc::{ArgValue, ArrayValue, Constant};

/// `a[i]` and `a[i + 1]` are unchecked only because the stores to `t` (as
/// long as `a`) check the same indices first (`bce::Witnesses`). `carry`
/// once carried them anyway: it loads the first window in front of the
/// loop and the entering element at the top of the body, before `t[i + 1]`
/// is checked, and that load then counted as a witness for `t[i + 1]`,
/// whose check went: with `n > len(a)`, `t[len a]` was written out of
/// bounds and the error reported at the next line. Every trip count must
/// give the loop's result or the error at `t[i + 1]`.
#[test]
fn checks_that_unchecked_loads_rest_on_stay_in_front_of_them() {
    let src = "double f(double[] a, int n) {
    double t[len(a)];
    double s = 0.0;
    for (int i = 0; i < n; i++) {
        t[i + 1] = 2.0;
        t[i] = 2.0;
        s += a[i] + a[i + 1];
    }
    return s;
}";
    let j = adc::compile_jit("witness.ad", src, &adc::CompileOptions::default())
        .unwrap_or_else(|f| panic!("{f}"));
    for len in 1..9usize {
        let a: Vec<f64> = (0..len).map(|k| 1.0 + k as f64 * 0.5).collect();
        for n in 0..len as i64 + 4 {
            let mut args = [
                ArgValue::Array(ArrayValue::F64(a.clone())),
                ArgValue::Scalar(Constant::I64(n)),
            ];
            if n < len as i64 {
                let want: f64 = (0..n as usize).map(|i| a[i] + a[i + 1]).sum();
                assert_eq!(floats(&j, "f", &mut args), vec![want], "len {len}, n {n}");
            } else {
                match j.call("f", &mut args) {
                    Err(adc::CallError::Runtime(m)) => assert!(
                        m.starts_with("index out of bounds") && m.contains("witness.ad:5:"),
                        "len {len}, n {n}: {m}"
                    ),
                    other => panic!("len {len}, n {n}: {other:?}"),
                }
            }
        }
    }
}
