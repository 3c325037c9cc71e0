//! (h) The dense Hessian oracle, on one seed in six: `[hessian]` of `f` (through a wrapper `fh`) gives
//! `f`'s result, is symmetric, and each of its columns equals central
//! differences of the reverse gradient `f_rev` (a column is skipped where
//! two step sizes disagree: a branch flips).

use super::gen::Program;
use super::oracle::{call, close, fail, Fail};
use super::precision::{arr, darr, floats, s, tol};
use adc::JitModule;

/// Whether `p` gets this oracle (one seed in six: its width-16 forward
/// derivative over a reverse one is a costly compile), unless
/// `ADC_DIFFTEST_HESSIAN=0`.
pub fn enabled(p: &Program) -> bool {
    p.hessian && std::env::var("ADC_DIFFTEST_HESSIAN").map_or(true, |v| v != "0")
}

/// Appended to the programs that get this oracle.
pub const SOURCE: &str = "[hessian(f_hess)]
double fh(double x, double y, double[] a) { return f(x, y, a); }
";

/// The gradient of `f` in `(x, y, a)` at `v`, by `f_rev`.
fn gradient(j: &JitModule, v: &[f64]) -> Result<Vec<f64>, Fail> {
    let n = v.len() - 2;
    let mut args = [s(v[0]), s(v[1]), arr(&v[2..]), arr(&vec![0.0; n]), s(1.0)];
    let r = call(j, "f_rev", &mut args)?;
    let mut g = vec![r[1], r[2]];
    g.extend(floats(&args[3]));
    Ok(g)
}

/// Checks `f_hess` at `(x, y, a)`, where `f` gives `p0`; counts the
/// columns compared with differences and skipped.
pub fn check(
    j: &JitModule,
    (x, y, a): (f64, f64, &[f64]),
    p0: f64,
    fd_checked: &mut usize,
    fd_skipped: &mut usize,
) -> Result<(), Fail> {
    let n = a.len() + 2;
    let mut args = [s(x), s(y), arr(a), darr(&vec![0.0; n * n])];
    let r = call(j, "f_hess", &mut args)?;
    let hess = &floats(&args[3]);
    let at = format!("at x={x:?} y={y:?} a={a:?}");
    if !close(r[0], p0, tol(1e-12), 0.0) {
        return fail(
            "hessian",
            format!("{at}\nf_hess's result {:?} but f gives {p0:?}", r[0]),
        );
    }
    let big = hess.iter().fold(0.0f64, |m, h| m.max(h.abs()));
    if !big.is_finite() || big > 1e8 {
        *fd_skipped += 1;
        return Ok(());
    }
    for rr in 0..n {
        for c in 0..rr {
            let (u, v) = (hess[rr * n + c], hess[c * n + rr]);
            if !close(u, v, tol(1e-8), big) {
                return fail(
                    "hessian_symmetry",
                    format!("{at}\nhess[{rr}][{c}] = {u:?} but hess[{c}][{rr}] = {v:?}\n{hess:?}"),
                );
            }
        }
    }
    let mut v0 = vec![x, y];
    v0.extend(a);
    for c in 0..n {
        let column = |h: f64| -> Result<Vec<f64>, Fail> {
            let (mut p, mut m) = (v0.clone(), v0.clone());
            p[c] += h;
            m[c] -= h;
            let (gp, gm) = (gradient(j, &p)?, gradient(j, &m)?);
            Ok(gp
                .iter()
                .zip(&gm)
                .map(|(p, m)| (p - m) / (2.0 * h))
                .collect())
        };
        let (h1, h2) = (tol(1e-4), tol(1e-5));
        let (fd1, fd2) = (column(h1)?, column(h2)?);
        let agree = fd1
            .iter()
            .zip(&fd2)
            .all(|(a, b)| a.is_finite() && close(*a, *b, tol(1e-6), 0.0));
        if !agree {
            *fd_skipped += 1;
            continue;
        }
        *fd_checked += 1;
        for (rr, want) in fd2.iter().enumerate() {
            let got = hess[rr * n + c];
            if !close(got, *want, tol(1e-5), 0.0) {
                return fail(
                    "hessian_fd",
                    format!(
                        "{at}\nhess[{rr}][{c}] = {got:?}, central differences of f_rev's gradient {:?} (h={h1:e}), {want:?} (h={h2:e})",
                        fd1[rr]
                    ),
                );
            }
        }
    }
    Ok(())
}
