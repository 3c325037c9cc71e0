//! Sparse Hessians (`[hessian(NAME, sparse)]`,
//! docs/derivatives.md#sparse-hessians): the lower triangle of the dense
//! Hessian of the same function (pattern a superset of its nonzeros,
//! values equal), the rows' layout, `NAME_nnz`, the function's own result
//! and writes, an exact banded pattern, and the errors.

use crate::support::{arg_floats, arr, d, jit};
use adc::{ArgValue, ArrayValue, Constant, JitModule};

fn ints(a: &ArgValue) -> Vec<i64> {
    match a {
        ArgValue::Array(ArrayValue::I64(v)) => v.clone(),
        other => panic!("not ints: {other:?}"),
    }
}

/// Calls `H` (dense, `n * n`), `S_nnz` and `S` (sparse) on `args`;
/// checks that `S` and `S_nnz` do what `F` does, that the rows are well
/// formed and hold only the lower triangle, that `S_nnz` counts the
/// entries, that every nonzero of the dense lower triangle is an entry
/// and that the entries equal it. Returns the pattern, row by row.
fn check(j: &JitModule, f: &str, args: &[ArgValue], n: usize) -> Vec<Vec<i64>> {
    let mut fa = args.to_vec();
    let fr = j.call(f, &mut fa).unwrap_or_else(|e| panic!("{f}: {e}"));
    let mut da = args.to_vec();
    da.push(arr(&vec![0.0; n * n]));
    j.call("H", &mut da).unwrap_or_else(|e| panic!("H: {e}"));
    let dense = arg_floats(&da[args.len()]);
    let mut na = args.to_vec();
    let nnz = j
        .call("S_nnz", &mut na)
        .unwrap_or_else(|e| panic!("S_nnz: {e}"));
    let Constant::I64(nnz) = nnz[0] else {
        panic!("S_nnz returns an int")
    };
    assert_eq!(&na[..], &fa[..], "S_nnz writes what {f} writes");
    let nnz = nnz as usize;
    let mut sa = args.to_vec();
    sa.push(arr(&vec![f64::NAN; nnz]));
    sa.push(ArgValue::Array(ArrayValue::I64(vec![-1; nnz])));
    sa.push(ArgValue::Array(ArrayValue::I64(vec![-1; n + 1])));
    let sr = j.call("S", &mut sa).unwrap_or_else(|e| panic!("S: {e}"));
    assert_eq!(sr, fr, "S returns what {f} returns");
    let k = args.len();
    assert_eq!(&sa[..k], &fa[..], "S writes what {f} writes");
    let (vals, cols, rows) = (arg_floats(&sa[k]), ints(&sa[k + 1]), ints(&sa[k + 2]));
    assert_eq!(rows[0], 0);
    assert_eq!(rows[n] as usize, nnz, "the last row ends at S_nnz");
    let mut listed = vec![false; n * n];
    let mut pattern = Vec::new();
    for r in 0..n {
        let (lo, hi) = (rows[r] as usize, rows[r + 1] as usize);
        assert!(lo <= hi, "rows increase: {rows:?}");
        let row = &cols[lo..hi];
        assert!(row.windows(2).all(|w| w[0] < w[1]), "row {r}: {row:?}");
        for q in lo..hi {
            let c = cols[q];
            assert!((0..=r as i64).contains(&c), "column {c} of row {r}");
            let c = c as usize;
            listed[r * n + c] = true;
            let (got, want) = (vals[q], dense[r * n + c]);
            assert!(
                (got - want).abs() <= 1e-12 * (1.0 + want.abs()),
                "entry ({r}, {c}): sparse {got}, dense {want}"
            );
        }
        pattern.push(row.to_vec());
    }
    for r in 0..n {
        for c in 0..=r {
            let v = dense[r * n + c];
            assert!(
                v == 0.0 || listed[r * n + c],
                "nonzero ({r}, {c}) = {v} is missing"
            );
        }
    }
    pattern
}

#[test]
fn banded_objective_has_exactly_its_lower_band() {
    // Row r of the Hessian depends on x[r - 2 .. r + 2]: a band of
    // half-width 2 (through a product of neighbours and a branch).
    let j = jit("[hessian(H)]
[hessian(S, sparse)]
double band(double[] x) {
    double s = 0.0;
    for (int i = 0; i + 2 < len(x); i++) {
        double t = x[i] * x[i + 2] - x[i + 1];
        if (t > 0.0) { s += t * t; } else { s += sin(t) * x[i + 1]; }
    }
    return s;
}");
    let n = 19;
    let x: Vec<f64> = (0..n).map(|i| 0.3 * ((i * 7) % 5) as f64 - 0.4).collect();
    let pattern = check(&j, "band", &[arr(&x)], n);
    for (r, cols) in pattern.iter().enumerate() {
        let want: Vec<i64> = (r.saturating_sub(2)..=r).map(|c| c as i64).collect();
        assert_eq!(cols, &want, "row {r}");
    }
}

#[test]
fn scalars_inout_and_const_parameters() {
    let j = jit("[hessian(H, Dual, Const, Dual, Dual)]
[hessian(S, Dual, Const, Dual, Dual, sparse)]
double g(double x, double[] c, inout double[] u, out double[] w) {
    double s = 0.0;
    for (int i = 0; i < len(u); i++) {
        s += exp(0.1 * u[i] * x) * c[i];
        w[i] = u[i] * s;
        u[i] = u[i] * 2.0;
    }
    return s + x * x * u[0];
}");
    // Columns: x, u[0..3].
    let args = [
        d(0.7),
        arr(&[1.0, -2.0, 0.5]),
        arr(&[0.3, -0.4, 1.1]),
        arr(&[0.0; 3]),
    ];
    let pattern = check(&j, "g", &args, 4);
    // Each u[i] meets x and itself; the u's meet no other u.
    assert_eq!(pattern, vec![vec![0], vec![0, 1], vec![0, 2], vec![0, 3]]);
}

#[test]
fn misuse_is_e0310() {
    for (attr, f) in [
        ("hessian(hf, sparse, Dual)", "double f(double x)"),
        ("hessian(hf, sparse)", "double f(double x, double rows)"),
        ("hessian(hf, sparse)", "void f(double x)"),
    ] {
        let body = if f.starts_with("void") {
            "{ }"
        } else {
            "{ return x * x; }"
        };
        let src = format!("[{attr}]\n{f} {body}");
        let e = adc::compile_jit("t.ad", &src, &adc::CompileOptions::default())
            .err()
            .unwrap_or_else(|| panic!("{attr} on {f} compiles"));
        assert_eq!(e.diagnostics[0].code, "E0310", "{attr} on {f}: {e}");
    }
}
