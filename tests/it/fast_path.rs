//! `fast-path` (partial inlining of a callee's early return): det's
//! expansion by minors, whose calls for minors of size 1 are computed in
//! the caller, against the same expansion in Rust, and the gradient
//! against its cofactors; an out-of-bounds load in a copied fast path
//! fails with the callee's message and line, as the call did.

use crate::support;

use adc::{ArgValue, ArrayValue, CallError, Constant};

const DET: &str = include_str!("../../gradbench/evals/det.ad");

/// The determinant by expansion along the first row, as det.ad computes
/// it (the same order of operations, so the bits agree).
fn det(a: &[f64], n: usize, rows: &[usize], cols: &[usize]) -> f64 {
    if rows.len() == 1 {
        return a[rows[0] * n + cols[0]];
    }
    let mut sum = 0.0;
    let mut sign = 1.0;
    for (j, &cj) in cols.iter().enumerate() {
        let m0j = a[rows[0] * n + cj];
        let sub_cols: Vec<usize> = cols
            .iter()
            .enumerate()
            .filter(|(k, _)| *k != j)
            .map(|(_, c)| *c)
            .collect();
        let sub = det(a, n, &rows[1..], &sub_cols);
        sum += sign * m0j * sub;
        sign = -sign;
    }
    sum
}

fn matrix(n: usize) -> Vec<f64> {
    (0..n * n)
        .map(|i| ((i as f64) * 0.77 + 0.3).sin() * 2.0)
        .collect()
}

#[test]
fn determinants_by_minors_keep_their_bits() {
    let j = support::jit(DET);
    for n in 1..=6usize {
        let a = matrix(n);
        let mut args = [
            ArgValue::Array(ArrayValue::F64(a.clone())),
            ArgValue::Scalar(Constant::I64(n as i64)),
        ];
        let got = support::floats(&j, "det", &mut args)[0];
        let all: Vec<usize> = (0..n).collect();
        let want = det(&a, n, &all, &all);
        assert_eq!(got.to_bits(), want.to_bits(), "n={n}: {got} vs {want}");
        // The gradient is the matrix of cofactors.
        let mut args = [
            ArgValue::Array(ArrayValue::F64(a.clone())),
            ArgValue::Array(ArrayValue::F64(vec![0.0; n * n])),
            ArgValue::Scalar(Constant::I64(n as i64)),
            support::d(1.0),
        ];
        j.call("det_gradient", &mut args)
            .expect("det_gradient runs");
        let ArgValue::Array(ArrayValue::F64(g)) = &args[1] else {
            unreachable!()
        };
        for r in 0..n {
            for c in 0..n {
                let rows: Vec<usize> = (0..n).filter(|x| *x != r).collect();
                let cols: Vec<usize> = (0..n).filter(|x| *x != c).collect();
                let minor = if n == 1 {
                    1.0
                } else {
                    det(&a, n, &rows, &cols)
                };
                let sign = if (r + c) % 2 == 0 { 1.0 } else { -1.0 };
                support::assert_close(
                    g[r * n + c],
                    sign * minor,
                    1e-12,
                    &format!("n={n} g[{r},{c}]"),
                );
            }
        }
    }
}

#[test]
fn a_failing_check_in_a_fast_path_reports_the_callee() {
    let source = "\
static double pick(double[] a, int[] r, int n, int m) {
    int k = r[n];
    if (m == 1) return a[k];
    return pick(a, r, n, m - 1) * 0.5;
}
double top(double[] a, int[] r, int n, int m) { return pick(a, r, n, m) + 1.0; }
";
    let j = support::jit(source);
    let a = ArgValue::Array(ArrayValue::F64(vec![1.0, 2.0, 3.0]));
    let i = |v: i64| ArgValue::Scalar(Constant::I64(v));
    // r[0] = 1 is in bounds for a: a[1] + 1, and halved once per level.
    for m in 1..=4i64 {
        let mut args = [
            a.clone(),
            ArgValue::Array(ArrayValue::I64(vec![1, 7])),
            i(0),
            i(m),
        ];
        let got = support::floats(&j, "top", &mut args)[0];
        assert_eq!(got, 2.0 * 0.5f64.powi(m as i32 - 1) + 1.0, "m={m}");
    }
    // r[1] = 7 is not: the load in the copied early return fails, at
    // pick's line 3, from `top` directly (m = 1) and through the recursion.
    for m in 1..=4i64 {
        let mut args = [
            a.clone(),
            ArgValue::Array(ArrayValue::I64(vec![1, 7])),
            i(1),
            i(m),
        ];
        match j.call("top", &mut args) {
            Err(CallError::Runtime(msg)) => {
                assert!(msg.starts_with("index out of bounds"), "m={m}: {msg}");
                assert!(msg.contains(":3:"), "m={m}: {msg}");
            }
            other => panic!("m={m}: {other:?}"),
        }
    }
}
