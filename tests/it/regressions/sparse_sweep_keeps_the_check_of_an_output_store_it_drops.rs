use adc::{ArgValue, ArrayValue, Constant};

/// The dependency sweep of a sparse Jacobian drops the primal stores to
/// an `out` array it never reads (`sets::drop_unread_outputs`): the
/// pattern needs only their tangents. The tangent's store after each is
/// unchecked, relying on the primal store's bounds check, which went with
/// it: an index out of bounds wrote outside the shadow (`y[-1]` corrupted
/// the heap, `adc run` died of "double free or corruption" in `S_nnz`)
/// instead of the runtime error `F` reports, and a sparse Hessian's
/// sweep segfaulted at `y[1 << 30]` (found in review, older than the
/// element Jacobians). The check now stays where the store was.
#[test]
fn sparse_sweep_keeps_the_check_of_an_output_store_it_drops() {
    for attr in ["sparse, forward", "sparse, reverse", "sparse"] {
        let src = format!(
            "[jacobian(S, {attr})]
void f(double[] x, out double[] y, int k) {{
    for (int i = 0; i < 2; i++) {{
        y[i + k] = x[i] * x[i];
    }}
}}"
        );
        let mut m = adc::driver::frontend("t.ad", &src, &adc::CompileOptions::default())
            .unwrap_or_else(|f| panic!("{f}"));
        adc::driver::run_stages(&mut m, adc::Stage::Final).expect("stages run");
        let text = m.to_string();
        // (A helper: `static @S__pattern(...)`, up to the next function.)
        let start = text
            .find("static @S__pattern(")
            .unwrap_or_else(|| panic!("no S__pattern:\n{text}"));
        let sweep = &text[start..];
        let sweep = &sweep[..sweep.find("\n}\n").unwrap_or(sweep.len())];
        assert!(sweep.contains("lencheck.index"), "{attr}:\n{sweep}");
        let j = adc::compile_jit("t.ad", &src, &adc::CompileOptions::default())
            .unwrap_or_else(|f| panic!("{f}"));
        let x = ArgValue::Array(ArrayValue::F64(vec![1.0, 2.0]));
        let y = ArgValue::Array(ArrayValue::F64(vec![0.0; 2]));
        for k in [-1i64, 1, -(1 << 40), 1 << 40] {
            let k = ArgValue::Scalar(Constant::I64(k));
            let csr = [
                ArgValue::Array(ArrayValue::F64(vec![0.0; 2])),
                ArgValue::Array(ArrayValue::I64(vec![0; 2])),
                ArgValue::Array(ArrayValue::I64(vec![0; 3])),
            ];
            for name in ["f", "S_nnz", "S"] {
                let mut args = vec![x.clone(), y.clone(), k.clone()];
                if name == "S" {
                    args.extend(csr.iter().cloned());
                }
                // (The element path's outlined body reports the attribute's
                // place: `sparse_elements::an_index_out_of_bounds_is_the_same_error`.)
                let place = if name == "S" && attr == "sparse" {
                    ""
                } else {
                    "t.ad:4:9"
                };
                match j.call(name, &mut args) {
                    Err(adc::CallError::Runtime(m)) => assert!(
                        m.starts_with(&format!("index out of bounds at {place}")),
                        "{attr} {name}: {m}"
                    ),
                    other => panic!("{attr} {name}: {other:?}"),
                }
            }
        }
    }

    let src = "[hessian(H, sparse)]
double f(double[] x, out double[] y, int k) {
    y[k] = x[0];
    return x[0] * x[1];
}";
    let j = adc::compile_jit("t.ad", src, &adc::CompileOptions::default())
        .unwrap_or_else(|f| panic!("{f}"));
    for k in [-1i64, 2, 1 << 40] {
        for name in ["f", "H_nnz", "H"] {
            let mut args = vec![
                ArgValue::Array(ArrayValue::F64(vec![1.0, 2.0])),
                ArgValue::Array(ArrayValue::F64(vec![0.0; 2])),
                ArgValue::Scalar(Constant::I64(k)),
            ];
            if name == "H" {
                args.push(ArgValue::Array(ArrayValue::F64(vec![0.0; 3])));
                args.push(ArgValue::Array(ArrayValue::I64(vec![0; 3])));
                args.push(ArgValue::Array(ArrayValue::I64(vec![0; 3])));
            }
            match j.call(name, &mut args) {
                Err(adc::CallError::Runtime(m)) => assert!(
                    m.starts_with("index out of bounds at t.ad:3:5"),
                    "{name}({k}): {m}"
                ),
                other => panic!("{name}({k}): {other:?}"),
            }
        }
    }
}
