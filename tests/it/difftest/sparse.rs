//! (i) The sparse Jacobian oracle, on one seed in eight (half of the
//! dense Jacobian's seeds): `[jacobian(g_sp, sparse)]` on the same `g` as
//! the dense oracle (`jacobian.rs`), checked against `g`'s dense Jacobian
//! `g_jac` at the same point: every nonzero of the dense Jacobian is an
//! entry, the entries equal it (to 1e-12 relative), the rows are well
//! formed (`rows` from 0 to the number of entries, never decreasing,
//! columns increasing within a row), `g_sp_nnz` counts the entries, and
//! `g_sp` and `g_sp_nnz` return and write what `g` does. The same for
//! `g_spr` and `g_spc`, the same Jacobian forced by rows (`sparse,
//! reverse`: a reverse run per 4 row colors) and by columns (`sparse,
//! forward`), whichever `g_sp` chooses; a `float` program has no `g_spr`
//! (by rows is error E0309 for `float` functions: they go by columns).

use super::gen::Program;
use super::jacobian::{arr, floats, s};
use super::oracle::{call, close, fail, Fail};
use super::precision::{darr, tol};
use adc::{ArgValue, ArrayValue, Constant, JitModule};

/// Whether `p` gets this oracle (it needs the dense one's `g_jac`).
pub fn enabled(p: &Program) -> bool {
    p.jacobian && p.sparse
}

/// The dense oracle's source with the sparse Jacobians on `g` as well.
pub fn source(p: &Program) -> String {
    let dense = super::jacobian::attr(p);
    let mut sparse = dense.clone();
    for name in names(p) {
        let how = match *name {
            "g_spr" => ", reverse",
            "g_spc" => ", forward",
            _ => "",
        };
        sparse += &format!("[jacobian({name}, sparse{how})]\n");
    }
    super::jacobian::source(p).replacen(&dense, &sparse, 1)
}

/// The sparse Jacobians of `source`: automatic, by rows (not for a
/// `float` program), by columns.
pub fn names(p: &Program) -> &'static [&'static str] {
    if p.single {
        &["g_sp", "g_spc"]
    } else {
        &["g_sp", "g_spr", "g_spc"]
    }
}

fn ints(v: &ArgValue) -> Vec<i64> {
    match v {
        ArgValue::Array(ArrayValue::I64(v)) => v.clone(),
        other => panic!("not an int array: {other:?}"),
    }
}

/// Equal to rounding, or the same non-finite value.
fn same(got: f64, want: f64) -> bool {
    close(got, want, tol(1e-12), 0.0) || (got.is_nan() && want.is_nan()) || got == want
}

/// Checks `sp` and `sp_nnz` (`sp` one of [`names`]) against `g` and
/// `g_jac` at `(x, y, a)`.
pub fn check(j: &JitModule, sp: &str, x: f64, y: f64, a: &[f64]) -> Result<(), Fail> {
    let (nr, nc) = (3, a.len() + 4);
    let o = [0.75, -1.25];
    let at = format!("{sp} at x={x:?} y={y:?} a={a:?} o={o:?}");
    let mut gargs = [s(x), s(y), arr(a), arr(&o)];
    let r = call(j, "g", &mut gargs)?[0];
    let og = floats(&gargs[3]);
    let mut dargs = [s(x), s(y), arr(a), arr(&o), darr(&vec![f64::NAN; nr * nc])];
    call(j, "g_jac", &mut dargs)?;
    let dense = floats(&dargs[4]);

    let mut nargs = [s(x), s(y), arr(a), arr(&o)];
    let nnz = match j.call(&format!("{sp}_nnz"), &mut nargs) {
        Ok(v) => match v.as_slice() {
            [Constant::I64(k)] if *k >= 0 => *k as usize,
            other => return fail("abi", format!("{sp}_nnz returned {other:?}")),
        },
        Err(e) => return fail("runtime", format!("{sp}_nnz: {e}")),
    };
    if floats(&nargs[3]) != og {
        return fail(
            "sparse_primal",
            format!("{at}\ng writes o={og:?}; {sp}_nnz writes {:?}", nargs[3]),
        );
    }
    let mut sargs = [
        s(x),
        s(y),
        arr(a),
        arr(&o),
        darr(&vec![f64::NAN; nnz]),
        ArgValue::Array(ArrayValue::I64(vec![-1; nnz])),
        ArgValue::Array(ArrayValue::I64(vec![-1; nr + 1])),
    ];
    let rs = call(j, sp, &mut sargs)?[0];
    let os = floats(&sargs[3]);
    if !same(rs, r) || !same(os[0], og[0]) || !same(os[1], og[1]) {
        return fail(
            "sparse_primal",
            format!("{at}\ng returns {r:?} and writes o={og:?}; {sp} returns {rs:?} and writes o={os:?}"),
        );
    }
    let (vals, cols, rows) = (floats(&sargs[4]), ints(&sargs[5]), ints(&sargs[6]));
    let csr = format!("vals={vals:?}\ncols={cols:?}\nrows={rows:?}\ndense={dense:?}");
    let well_formed = rows[0] == 0
        && rows[nr] == nnz as i64
        && rows.windows(2).all(|w| w[0] <= w[1])
        && (0..nr).all(|r| {
            let row = &cols[rows[r] as usize..rows[r + 1] as usize];
            row.iter().all(|&c| 0 <= c && (c as usize) < nc) && row.windows(2).all(|w| w[0] < w[1])
        });
    if !well_formed {
        return fail(
            "sparse_csr",
            format!("{at}\n{nr} rows, {nc} columns, {sp}_nnz {nnz}\n{csr}"),
        );
    }
    for r in 0..nr {
        let (lo, hi) = (rows[r] as usize, rows[r + 1] as usize);
        for c in 0..nc {
            let want = dense[r * nc + c];
            let got = (lo..hi).find(|&k| cols[k] as usize == c).map(|k| vals[k]);
            match got {
                None if want != 0.0 => {
                    return fail(
                        "sparse_pattern",
                        format!("{at}\nentry (row {r}, column {c}) is {want:?} in g_jac but not in the pattern\n{csr}"),
                    )
                }
                Some(v) if !same(v, want) => {
                    return fail(
                        "sparse_value",
                        format!("{at}\nentry (row {r}, column {c}) is {v:?} in {sp}, {want:?} in g_jac\n{csr}"),
                    )
                }
                _ => {}
            }
        }
    }
    Ok(())
}
