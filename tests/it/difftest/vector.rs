//! (f) Vector mode: `f`'s forward derivative of width `W` (`f_vec`, `W`
//! from 1 to 4, drawn per seed: `Program::width`) on `W` directions at
//! once against the width-less `f_fwd` on each, and on some seeds
//! (`Program::rvec`) its reverse derivative of the same width (`f_rvec`)
//! on `W` seeds at once against `f_rev` with each; to rounding. Width 1
//! is vector mode too (one direction in arrays, docs/jacobians.md), not
//! the width-less signature.

use super::gen::Program;
use super::oracle::{call, close, fail, Fail};
use super::precision::{arr, floats, s, tol};
use adc::JitModule;

/// The vector-mode attributes on `f`.
pub fn attrs(p: &Program) -> String {
    let w = p.width;
    let mut a = format!("[autodiff_forward(f_vec, Dual, Dual, Dual, Dual, width = {w})]\n");
    if p.rvec {
        a += &format!(
            "[autodiff_reverse(f_rvec, Active, Active, Duplicated, Active, width = {w})]\n"
        );
    }
    a
}

/// The directions `f_vec` carries, as indices into `dirs` (the unit
/// directions, then a random one): the random one last, the first unit
/// direction, the last, the second.
fn picks(w: usize, ndirs: usize) -> Vec<usize> {
    let mut p: Vec<usize> = [0, ndirs - 2, 1].into_iter().take(w - 1).collect();
    p.push(ndirs - 1);
    p
}

/// Checks `f_vec` (of width `w`) at `(x, y, a)`, where `f` gives `p0` and
/// `f_fwd` gives `tangents` along `dirs`.
pub fn check_forward(
    j: &JitModule,
    w: usize,
    (x, y, a): (f64, f64, &[f64]),
    p0: f64,
    dirs: &[Vec<f64>],
    tangents: &[f64],
    grad: &[f64],
) -> Result<(), Fail> {
    let picks = picks(w, dirs.len());
    let lane = |k: usize| -> Vec<f64> { picks.iter().map(|&p| dirs[p][k]).collect() };
    let ta: Vec<f64> = picks.iter().flat_map(|&p| dirs[p][2..].to_vec()).collect();
    let mut vargs = [
        s(x),
        arr(&lane(0)),
        s(y),
        arr(&lane(1)),
        arr(a),
        arr(&ta),
        arr(&vec![0.0; w]),
    ];
    let pv = call(j, "f_vec", &mut vargs)?;
    let t_ret = floats(&vargs[6]);
    for (k, &p) in picks.iter().enumerate() {
        let scale: f64 = grad.iter().zip(&dirs[p]).map(|(g, v)| (g * v).abs()).sum();
        if !close(pv[0], p0, tol(1e-12), 0.0) || !close(t_ret[k], tangents[p], tol(1e-11), scale) {
            return fail(
                "vector",
                format!(
                    "at x={x:?} y={y:?} a={a:?}\ndirection {:?}\nwidth {w}: primal {:?}, lane {k} {:?}; width-less: primal {p0:?}, tangent {:?}",
                    dirs[p], pv[0], t_ret[k], tangents[p]
                ),
            );
        }
    }
    Ok(())
}

/// The seeds of `f_rvec`'s lanes (powers of two).
const SEEDS: [f64; 4] = [1.0, -0.5, 2.0, 0.25];

/// Checks `f_rvec` (of width `w`) at `(x, y, a)` against `f_rev` seeded
/// with each lane's seed.
pub fn check_reverse(j: &JitModule, w: usize, (x, y, a): (f64, f64, &[f64])) -> Result<(), Fail> {
    let n = a.len();
    let seeds = &SEEDS[..w];
    let mut vargs = [
        s(x),
        arr(&vec![0.0; w]),
        s(y),
        arr(&vec![0.0; w]),
        arr(a),
        arr(&vec![0.0; w * n]),
        arr(seeds),
    ];
    let pv = call(j, "f_rvec", &mut vargs)?[0];
    let (dx, dy, da) = (floats(&vargs[1]), floats(&vargs[3]), floats(&vargs[5]));
    for (k, &seed) in seeds.iter().enumerate() {
        let mut args = [s(x), s(y), arr(a), arr(&vec![0.0; n]), s(seed)];
        let r = call(j, "f_rev", &mut args)?;
        let mut want = vec![r[1], r[2]];
        want.extend(floats(&args[3]));
        let mut got = vec![dx[k], dy[k]];
        got.extend(&da[k * n..(k + 1) * n]);
        let scale = want.iter().fold(0.0f64, |m, g| m.max(g.abs()));
        let same = got
            .iter()
            .zip(&want)
            .all(|(g, w)| close(*g, *w, tol(1e-11), scale));
        if !close(pv, r[0], tol(1e-12), 0.0) || !same {
            return fail(
                "vector_reverse",
                format!(
                    "at x={x:?} y={y:?} a={a:?}\nwidth {w}, lane {k} (seed {seed}): primal {pv:?}, gradient {got:?}\nwidth-less: primal {:?}, gradient {want:?}",
                    r[0]
                ),
            );
        }
    }
    Ok(())
}
