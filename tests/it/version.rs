//! Loop versioning (`crates/passes/src/opt/version/`) with a test that covers every
//! iteration of an enclosing loop: `c[j * d + off + r]` in a loop over `r`
//! inside one over `j` is checked once for all `j` (the terms do not use
//! `j`, so `licm` takes them out of the outer loop). Whatever the start of
//! `j`, the row length, the offset (negative too) and the array's length,
//! the result must be the one computed here in Rust, and an access out of
//! bounds must still stop the call with the runtime error: the unchecked
//! copy may only run when no access of any `j` can fail. The same for
//! indices that subtract a constant (`y[i - 3]`, `y[i + k - 2]`), whose
//! test bounds the first index from below.

use crate::support::f64s;
use adc::{ArgValue, ArrayValue, CallError, Constant};

const SOURCE: &str = "
double shifted(double[] y, int lo, int n, int k) {
    double s = 0.0;
    for (int i = lo; i < n; i++) s += y[i - 3] * double(i) + y[i + k - 2];
    return s;
}
double rows(double[] c, int d, int k, int off, int j0) {
    double s = 0.0;
    for (int j = j0; j < k; j++) {
        for (int r = 0; r < d; r++) s += c[j * d + off + r] * double(r + 1);
    }
    return s;
}
";

/// What `rows` computes, or `None` where an index is out of bounds.
fn expected(c: &[f64], d: i64, k: i64, off: i64, j0: i64) -> Option<f64> {
    let mut s = 0.0;
    for j in j0..k {
        for r in 0..d {
            let idx = j.checked_mul(d)?.checked_add(off)?.checked_add(r)?;
            let x = *c.get(usize::try_from(idx).ok()?)?;
            s += x * (r + 1) as f64;
        }
    }
    Some(s)
}

#[test]
fn versioned_rows_read_the_same_elements_and_keep_their_checks() {
    let j = adc::compile_jit("rows.ad", SOURCE, &adc::CompileOptions::default())
        .unwrap_or_else(|f| panic!("{f}"));
    let mut checked = 0;
    let mut failed = 0;
    for d in [0i64, 1, 3, 5] {
        for k in [0i64, 1, 2, 4] {
            for j0 in [-1i64, 0, 1, 3] {
                for off in [-5i64, -3, 0, 2] {
                    let need = d * k + off;
                    for len in [need - 1, need, need + 1] {
                        let len = len.max(0);
                        let c: Vec<f64> = (0..len).map(|q| 0.5 + q as f64 * 0.25).collect();
                        let want = expected(&c, d, k, off, j0);
                        let mut args = vec![ArgValue::Array(ArrayValue::F64(c))];
                        for v in [d, k, off, j0] {
                            args.push(ArgValue::Scalar(Constant::I64(v)));
                        }
                        let what = format!("d={d} k={k} j0={j0} off={off} len={len}");
                        match (j.call("rows", &mut args), want) {
                            (Ok(r), Some(w)) => assert_eq!(f64s(&r), vec![w], "{what}"),
                            (Err(CallError::Runtime(m)), None) => {
                                assert!(m.starts_with("index out of bounds"), "{what}: {m}");
                                failed += 1;
                            }
                            (got, want) => panic!("{what}: got {got:?}, want {want:?}"),
                        }
                        checked += 1;
                    }
                }
            }
        }
    }
    // Both outcomes were exercised.
    assert!(
        failed > 50 && checked - failed > 50,
        "{failed} of {checked} failed"
    );
}

fn expected_shifted(y: &[f64], lo: i64, n: i64, k: i64) -> Option<f64> {
    let at = |q: i64| -> Option<f64> { y.get(usize::try_from(q).ok()?).copied() };
    let mut s = 0.0;
    for i in lo..n {
        s += at(i - 3)? * i as f64 + at(i.checked_add(k)?.checked_sub(2)?)?;
    }
    Some(s)
}

#[test]
fn versioned_shifted_indices_keep_their_checks() {
    let j = adc::compile_jit("rows.ad", SOURCE, &adc::CompileOptions::default())
        .unwrap_or_else(|f| panic!("{f}"));
    let (mut ok, mut failed) = (0, 0);
    for lo in [-1i64, 0, 2, 3, 4] {
        for n in [0i64, 3, 4, 6, 9] {
            for k in [-2i64, 0, 1, 2, 5, i64::MAX - 1, i64::MIN + 1] {
                for len in [0i64, 3, 5, 6, 7, 9, 12] {
                    let y: Vec<f64> = (0..len).map(|q| 1.5 - q as f64 * 0.125).collect();
                    let want = expected_shifted(&y, lo, n, k);
                    let mut args = vec![ArgValue::Array(ArrayValue::F64(y))];
                    for v in [lo, n, k] {
                        args.push(ArgValue::Scalar(Constant::I64(v)));
                    }
                    let what = format!("lo={lo} n={n} k={k} len={len}");
                    match (j.call("shifted", &mut args), want) {
                        (Ok(r), Some(w)) => {
                            assert_eq!(f64s(&r), vec![w], "{what}");
                            ok += 1;
                        }
                        (Err(CallError::Runtime(m)), None) => {
                            assert!(m.starts_with("index out of bounds"), "{what}: {m}");
                            failed += 1;
                        }
                        (got, want) => panic!("{what}: got {got:?}, want {want:?}"),
                    }
                }
            }
        }
    }
    assert!(ok > 50 && failed > 50, "{ok} ran, {failed} failed");
}

#[test]
fn huge_rows_and_offsets_do_not_wrap_into_bounds() {
    let j = adc::compile_jit("rows.ad", SOURCE, &adc::CompileOptions::default())
        .unwrap_or_else(|f| panic!("{f}"));
    let c: Vec<f64> = (0..8).map(|q| q as f64).collect();
    for (d, k, off, j0) in [
        (1i64 << 40, 3, 0, 0),
        (1 << 32, 2, -(1 << 32), 1),
        (3, 1 << 33, 0, 0),
        (2, 3, i64::MAX - 3, 0),
        (2, 3, i64::MIN + 3, 1),
        (1 << 31, 4, -(1 << 31), 1),
    ] {
        let mut args = vec![ArgValue::Array(ArrayValue::F64(c.clone()))];
        for v in [d, k, off, j0] {
            args.push(ArgValue::Scalar(Constant::I64(v)));
        }
        match j.call("rows", &mut args) {
            Err(CallError::Runtime(m)) => assert!(m.starts_with("index out of bounds"), "{m}"),
            other => panic!("d={d} k={k} off={off} j0={j0}: {other:?}"),
        }
    }
}

/// An index that moves in neither loop (`x[k]`) is tested alone, not over
/// the range of the outer counter: with that range's terms (`0 <= j0`), an
/// outer loop starting at -1 failed the whole test, and `y[i]` lost its
/// unchecked copy too (a finding of the review of 0695904).
#[test]
fn an_index_fixed_in_both_loops_does_not_test_the_outer_range() {
    let src = "double f(double[] x, double[] y, int k, int m, int n) {
        double s = 0.0;
        for (int j = -1; j < m; j++) { for (int i = 0; i < n; i++) s += y[i] * x[k]; }
        return s; }";
    let mut module = adc::driver::frontend("f.ad", src, &adc::CompileOptions::default())
        .unwrap_or_else(|f| panic!("{f}"));
    adc::driver::run_stages(&mut module, adc::Stage::Opt).unwrap_or_else(|e| panic!("{e:?}"));
    let text = module.to_string();
    let unchecked = text.matches("load.unchecked v1").count();
    assert!(unchecked >= 1, "y[i] is never unchecked:\n{text}");
    let j = adc::compile_jit("f.ad", src, &adc::CompileOptions::default())
        .unwrap_or_else(|f| panic!("{f}"));
    let mut args = vec![
        ArgValue::Array(ArrayValue::F64(vec![1.0, 2.0, 3.0])),
        ArgValue::Array(ArrayValue::F64(vec![0.5, 0.25])),
        ArgValue::Scalar(Constant::I64(2)),
        ArgValue::Scalar(Constant::I64(2)),
        ArgValue::Scalar(Constant::I64(2)),
    ];
    let out = j.call("f", &mut args).unwrap_or_else(|e| panic!("{e:?}"));
    // Three outer iterations of (0.5 + 0.25) * 3.
    assert_eq!(f64s(&out), vec![6.75]);
}
