//! (g) the dense Jacobian oracle: `[jacobian(g_jac)]` on a function `g`
//! of several rows (its result and an `inout` array) and columns (`f`'s
//! inputs and the `inout` array's entry values), built from two calls of
//! the generated `f`. Its Jacobian is known from `f`'s reverse gradient at
//! two points, so the forward vector-mode Jacobian is checked against
//! reverse mode, entry by entry, and `g_jac` must do what `g` does.
//! `g` has a float result, so `g_jac` chooses between columns (forward
//! vector mode, `g_jac__fwd`) and rows (reverse vector mode, `g_jac__rev`)
//! at each call; with 3 rows it takes rows. Both are checked, and the
//! choice. On some seeds the attribute sets a chunk width from 1 to 5
//! (`Program::jac_width`; 1: one column per run of the forward side).

use super::gen::Program;
use super::oracle::{call, close, fail, Fail};
pub use super::precision::{arr, floats, s};
use super::precision::{darr, tol};
use adc::JitModule;

/// The dense Jacobian's attribute, with `p`'s chunk width if it has one.
pub fn attr(p: &Program) -> String {
    match p.jac_width {
        Some(w) => format!("[jacobian(g_jac, width = {w})]\n"),
        None => "[jacobian(g_jac)]\n".into(),
    }
}

/// The source `module` appends: `g` and its Jacobian.
pub fn source(p: &Program) -> String {
    format!("\n{}{G}", attr(p))
}

/// The function whose Jacobians are checked.
const G: &str = "double g(double x, double y, double[] a, inout double[] o) {
    double u = f(x, y, a);
    o[0] = o[0] * u;
    o[1] = f(y, x, a) + o[1];
    return x * u;
}
";

/// `f` and its gradient `(df/dx, df/dy, df/da...)` from `f_rev`.
fn grad(j: &JitModule, x: f64, y: f64, a: &[f64]) -> Result<(f64, Vec<f64>), Fail> {
    let mut args = [s(x), s(y), arr(a), arr(&vec![0.0; a.len()]), s(1.0)];
    let r = call(j, "f_rev", &mut args)?;
    let mut g = vec![r[1], r[2]];
    g.extend(floats(&args[3]));
    Ok((r[0], g))
}

/// Checks `g_jac` at `(x, y, a)` with `o = (o0, o1)`. Returns whether the
/// point was usable (finite values at both points).
pub fn check(j: &JitModule, x: f64, y: f64, a: &[f64]) -> Result<bool, Fail> {
    let n = a.len();
    let o = [0.75, -1.25];
    let (u, gu) = grad(j, x, y, a)?;
    let (v, gv) = grad(j, y, x, a)?;
    if !(u.is_finite() && v.is_finite() && u.abs() < 1e6 && v.abs() < 1e6) {
        return Ok(false);
    }
    // Columns: x, y, a[0..n], o[0], o[1]. Rows: the result, o[0], o[1].
    let ncols = n + 4;
    let mut want = vec![0.0; 3 * ncols];
    want[0] = u + x * gu[0];
    want[1] = x * gu[1];
    want[ncols] = o[0] * gu[0];
    want[ncols + 1] = o[0] * gu[1];
    // g's o[1] is f(y, x, a): its x is f's second argument.
    want[2 * ncols] = gv[1];
    want[2 * ncols + 1] = gv[0];
    for i in 0..n {
        want[2 + i] = x * gu[2 + i];
        want[ncols + 2 + i] = o[0] * gu[2 + i];
        want[2 * ncols + 2 + i] = gv[2 + i];
    }
    want[ncols + n + 2] = u;
    want[2 * ncols + n + 3] = 1.0;

    let mut gargs = [s(x), s(y), arr(a), arr(&o)];
    let r = call(j, "g", &mut gargs)?[0];
    let og = floats(&gargs[3]);
    let mut by_rows = Vec::new();
    for name in ["g_jac__fwd", "g_jac__rev", "g_jac"] {
        let got = check_one(j, name, (x, y, a, &o), (r, &og), &want)?;
        if name == "g_jac__rev" {
            by_rows = got;
        } else if name == "g_jac" && got != by_rows {
            return fail(
                "jacobian",
                format!("g_jac did not choose rows (3 rows, {ncols} columns): {got:?}, by rows {by_rows:?}"),
            );
        }
    }
    Ok(true)
}

/// `name`'s primal and writes against `g`'s (`r`, `og`), and its Jacobian
/// against `want`; returns the Jacobian.
fn check_one(
    j: &JitModule,
    name: &str,
    (x, y, a, o): (f64, f64, &[f64], &[f64; 2]),
    (r, og): (f64, &[f64]),
    want: &[f64],
) -> Result<Vec<f64>, Fail> {
    let ncols = want.len() / 3;
    let mut jargs = [
        s(x),
        s(y),
        arr(a),
        arr(o),
        darr(&vec![f64::NAN; want.len()]),
    ];
    let rj = call(j, name, &mut jargs)?[0];
    let oj = floats(&jargs[3]);
    let at = format!("{name} at x={x:?} y={y:?} a={a:?} o={o:?}");
    let t = tol(1e-12);
    if !close(rj, r, t, 0.0) || !close(oj[0], og[0], t, 0.0) || !close(oj[1], og[1], t, 0.0) {
        return fail(
            "jacobian_primal",
            format!("{at}\ng returns {r:?} and writes o={og:?}; {name} returns {rj:?} and writes o={oj:?}"),
        );
    }
    let got = floats(&jargs[4]);
    let scale: f64 = want.iter().map(|w| w.abs()).fold(0.0, f64::max);
    for (k, (g, w)) in got.iter().zip(want).enumerate() {
        if !close(*g, *w, tol(1e-9), scale) {
            return fail(
                "jacobian",
                format!(
                    "{at}\nentry (row {}, column {}) is {g:?}; reverse gradients give {w:?}\n{name}: {got:?}\nwant:  {want:?}",
                    k / ncols,
                    k % ncols
                ),
            );
        }
    }
    Ok(got)
}
