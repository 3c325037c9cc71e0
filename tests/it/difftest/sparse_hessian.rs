//! (j) The sparse Hessian oracle, on the dense Hessian's seeds whose `f`
//! calls no function with a custom forward derivative:
//! `[hessian(f_hsp, sparse)]` on the same wrapper `fh` as the dense oracle
//! (`hessian.rs`), checked against its `f_hess` at the same point: every
//! nonzero of the dense lower triangle is an entry, the entries equal it
//! (to 1e-12 relative), only the lower triangle is listed, the rows are
//! well formed (`rows` from 0 to the number of entries, never
//! decreasing, columns increasing within a row), `f_hsp_nnz` counts the
//! entries, and `f_hsp` returns what `f` does. The same for
//! `[hessian(f_hba, Const, Const, Dual, sparse)]` on `f` itself (one
//! `Dual` array: the shape whose pattern `ad::band` proves at compile
//! time when `f` has no call, store or float comparison) against the block
//! of `a` in `f_hess`; these seeds' indices are also `min(i, len(t) - 3)
//! + c` (`gen.rs`), bases that run in order. And a banded objective of
//! its own, `fbd` ([`band_source`]: one or two loops of a stencil of
//! half-width 1 to 3, sometimes a term outside the band), its
//! `[hessian(fbd_hsp, Const, Const, Dual, sparse)]` against its dense
//! `fbd_hess`, on an array of 14 to 23 elements: lengths at which a full
//! band goes straight to the band evaluation without a star coloring.

use super::gen::{Program, Rng};
use super::jacobian::{arr, floats, s};
use super::oracle::{call, close, fail, Fail};
use super::precision::{darr, tol};
use adc::{ArgValue, ArrayValue, Constant, JitModule};

/// Whether `p` gets this oracle (it needs the dense one's `f_hess`).
pub fn enabled(p: &Program) -> bool {
    super::hessian::enabled(p) && p.sparse_hessian
}

/// On `f` itself: its sparse Hessian in `a` alone, the one
/// `ad::band` may prove a band pattern for (exactly one `Dual` array).
pub const ON_F: &str = "[hessian(f_hba, Const, Const, Dual, sparse)]\n";

/// The dense oracle's source with the sparse Hessian on `fh` as well.
pub fn source() -> String {
    let dense = "[hessian(f_hess)]\n";
    debug_assert!(super::hessian::SOURCE.contains(dense));
    super::hessian::SOURCE.replacen(dense, "[hessian(f_hess)]\n[hessian(f_hsp, sparse)]\n", 1)
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

/// Whether `rows` and `cols` are a well-formed lower triangle of `n`
/// columns with `nnz` entries.
fn well_formed(rows: &[i64], cols: &[i64], n: usize, nnz: usize) -> bool {
    rows.len() == n + 1
        && rows[0] == 0
        && rows[n] == nnz as i64
        && rows.windows(2).all(|w| w[0] <= w[1])
        && (0..n).all(|r| {
            let row = &cols[rows[r] as usize..rows[r + 1] as usize];
            row.iter().all(|&c| 0 <= c && c as usize <= r) && row.windows(2).all(|w| w[0] < w[1])
        })
}

/// Checks `f_hsp` and `f_hsp_nnz` against `f_hess` at `(x, y, a)`, where
/// `f` gives `p0`; then `f_hba` (`f`'s own sparse Hessian in `a` alone,
/// whose pattern `ad::band` may prove at compile time) against the block
/// of `a` in `f_hess`.
pub fn check(j: &JitModule, (x, y, a): (f64, f64, &[f64]), p0: f64) -> Result<(), Fail> {
    let n = a.len() + 2;
    let mut dargs = [s(x), s(y), arr(a), darr(&vec![f64::NAN; n * n])];
    call(j, "f_hess", &mut dargs)?;
    let dense = floats(&dargs[3]);
    against(j, "f_hsp", (x, y, a), p0, &dense, 0)?;
    against(j, "f_hba", (x, y, a), p0, &dense, 2)?;
    check_band(j, (x, y, a))
}

/// The `[hessian]` attributes of [`band_source`]'s function.
const BAND_ATTRS: &str = "[hessian(fbd_hess)]\n[hessian(fbd_hsp, Const, Const, Dual, sparse)]\n";

/// A banded objective `double fbd(double x, double y, double[] a)` drawn
/// from `key`: a loop over `i` of a stencil of `a` at `i` and the next
/// (or previous) 1 to 3 elements: a nonlinear function of a sum over the
/// whole stencil (so the band is full: every pair of its elements
/// interacts), sometimes products, squared differences through a local,
/// coefficients varying with `i` or scaled by `x`; sometimes a second
/// such loop, and sometimes a term `a[0] * a[len(a) - 1]` that no band
/// holds (the sweep then).
pub fn band_source(key: u64) -> String {
    let mut r = Rng::new(key ^ 0xBA4D_0057_0C0F);
    let mut body = String::from("    double s = 0.0;\n");
    let loops = if r.chance(0.25) { 2 } else { 1 };
    for _ in 0..loops {
        body.push_str(&band_loop(&mut r));
    }
    if r.chance(0.15) {
        body.push_str("    s += 0.1 * a[0] * a[len(a) - 1];\n");
    }
    format!("{BAND_ATTRS}double fbd(double x, double y, double[] a) {{\n{body}    return s * (1.0 + 0.1 * x) + y;\n}}\n")
}

/// One loop of [`band_source`].
fn band_loop(r: &mut Rng) -> String {
    const OUTER: &[&str] = &[
        "tanh({})",
        "sin({})",
        "0.5 * ({}) * ({})",
        "exp(0.3 * ({}))",
        "atan({})",
        "cos({})",
    ];
    let b = 1 + r.below(3);
    let back = r.chance(0.5);
    let head = if back {
        format!("for (int i = {b}; i < len(a); i++)")
    } else {
        format!("for (int i = 0; i + {b} < len(a); i++)")
    };
    // Element `k` of the stencil, 0 ..= b.
    let at = |k: usize| {
        if back {
            format!("a[i - {}]", b - k)
        } else {
            format!("a[i + {k}]")
        }
    };
    let mut sum = Vec::new();
    for k in 0..=b {
        let c = r.range(-1.0, 1.0);
        sum.push(if r.chance(0.2) {
            format!("({c:.3} + 0.01 * double(i)) * {}", at(k))
        } else {
            format!("{c:.3} * {}", at(k))
        });
    }
    let outer = OUTER[r.below(OUTER.len())].replace("{}", &sum.join(" + "));
    let mut lines = vec![format!("s += {outer};")];
    if r.chance(0.6) {
        let (p, q, c) = (r.below(b + 1), r.below(b + 1), r.range(-1.0, 1.0));
        lines.push(format!("s += {c:.3} * {} * {};", at(p), at(q)));
    }
    if r.chance(0.4) {
        let (p, q, c) = (r.below(b + 1), r.below(b + 1), r.range(-1.0, 1.0));
        lines.push(format!("double d = {} - {c:.3} * {};", at(p), at(q)));
        lines.push("s += d * d;".into());
    }
    if r.chance(0.3) {
        lines.push(format!("s += tanh(y) * {};", at(r.below(b + 1))));
    }
    format!(
        "    {head} {{\n        {}\n    }}\n",
        lines.join("\n        ")
    )
}

/// Checks [`band_source`]'s `fbd_hsp` against `fbd_hess` on an array of
/// 14 to 23 elements drawn from `a`.
fn check_band(j: &JitModule, (x, y, a): (f64, f64, &[f64])) -> Result<(), Fail> {
    let len = 14 + (a.len() * 5 + x.to_bits() as usize) % 10;
    let b: Vec<f64> = (0..len)
        .map(|k| a[k % a.len()] * (1.0 - 0.03 * k as f64))
        .collect();
    let p0 = call(j, "fbd", &mut [s(x), s(y), arr(&b)])?[0];
    let n = len + 2;
    let mut dargs = [s(x), s(y), arr(&b), darr(&vec![f64::NAN; n * n])];
    call(j, "fbd_hess", &mut dargs)?;
    let dense = floats(&dargs[3]);
    against(j, "fbd_hsp", (x, y, &b), p0, &dense, 2)
}

/// Checks `name` and `name_nnz` (a sparse Hessian of `n - skip` columns,
/// the last of `f_hess`'s `n`) against `dense` at `(x, y, a)`.
fn against(
    j: &JitModule,
    name: &str,
    (x, y, a): (f64, f64, &[f64]),
    p0: f64,
    dense: &[f64],
    skip: usize,
) -> Result<(), Fail> {
    let full = a.len() + 2;
    let n = full - skip;
    let at = format!("{name} at x={x:?} y={y:?} a={a:?}");
    let dense: Vec<f64> = (0..n * n)
        .map(|k| dense[(k / n + skip) * full + k % n + skip])
        .collect();
    let nnz = match j.call(&format!("{name}_nnz"), &mut [s(x), s(y), arr(a)]) {
        Ok(v) => match v.as_slice() {
            [Constant::I64(k)] if *k >= 0 => *k as usize,
            other => return fail("abi", format!("{name}_nnz returned {other:?}")),
        },
        Err(e) => return fail("runtime", format!("{name}_nnz: {e}")),
    };
    let mut sargs = [
        s(x),
        s(y),
        arr(a),
        darr(&vec![f64::NAN; nnz]),
        ArgValue::Array(ArrayValue::I64(vec![-1; nnz])),
        ArgValue::Array(ArrayValue::I64(vec![-1; n + 1])),
    ];
    let rs = call(j, name, &mut sargs)?[0];
    if !same(rs, p0) {
        return fail(
            "sparse_hessian_primal",
            format!("{at}\nf returns {p0:?}; {name} returns {rs:?}"),
        );
    }
    let (vals, cols, rows) = (floats(&sargs[3]), ints(&sargs[4]), ints(&sargs[5]));
    let csr = format!("vals={vals:?}\ncols={cols:?}\nrows={rows:?}\ndense={dense:?}");
    if !well_formed(&rows, &cols, n, nnz) {
        return fail(
            "sparse_hessian_csr",
            format!("{at}\n{n} columns, {name}_nnz {nnz}\n{csr}"),
        );
    }
    for r in 0..n {
        let (lo, hi) = (rows[r] as usize, rows[r + 1] as usize);
        for c in 0..=r {
            let want = dense[r * n + c];
            let got = (lo..hi).find(|&k| cols[k] as usize == c).map(|k| vals[k]);
            match got {
                None if want != 0.0 => {
                    return fail(
                        "sparse_hessian_pattern",
                        format!("{at}\nentry (row {r}, column {c}) is {want:?} in f_hess but not in {name}'s pattern\n{csr}"),
                    )
                }
                Some(v) if !same(v, want) => {
                    return fail(
                        "sparse_hessian_value",
                        format!("{at}\nentry (row {r}, column {c}) is {v:?} in {name}, {want:?} in f_hess\n{csr}"),
                    )
                }
                _ => {}
            }
        }
    }
    Ok(())
}
