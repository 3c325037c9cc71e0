//! The code of an element loop with a static pattern (`element_pattern`;
//! docs/jacobians.md#element-jacobians): per iteration, the reverse run
//! `NAME__eKb` and then each row's entries in the pattern's order, with no
//! sweep, no check and no plan. Locals start with `adc_e_`.
//!
//! Shadows that stay in the cache. Each input array `a` that the rows read
//! at `base + c` (`c` from `lo` to `hi`) gets a scratch array `adc_e_z`
//! of `T + M + W len(a)` elements, `M = max(|lo|, |hi|) + 1`,
//! `T = len(a) + M`, left unwritten (`__adc_uninit`: no zero-fill, and
//! pages never touched cost nothing) but for its *window*, the elements
//! `T + j len(a) + c` of every lane `j`, zeroed once. The run's shadow of
//! `a` is the view starting at `T - base`, so lane `j`'s element
//! `base + c` is the window's element `T + j len(a) + c` whatever the
//! iteration: every iteration's adjoints go to the same few cache lines,
//! from which the gather moves the rows' entries to `vals` (zeroing them
//! again). For an iteration whose reads are in bounds, `T - base` lies
//! between `M + 1 + hi` and `len(a) + M + lo`, so the view fits; a base
//! that does not (the run then stops at its out-of-bounds read) takes the
//! view at 0. Elements outside the window are written only by the run's
//! additions of zero adjoints (reads no row depends on), and never read.
//!
//! The shadows of the `out` arrays with sites are unwritten too: before
//! each run, lane `j` of each site's row gets 1 for site `j` and 0 for
//! the others (the run reads the out shadows at the sites' rows alone, the
//! only elements the body writes: `elements::plan`).

use super::element_pattern::{Pattern, Rows, Shape};
use super::elements::{Plan, Top};
use super::elements_source::{captured, kept, row_at};
use super::layout::Layout;
use crate::ast::*;
use std::fmt::Write;

/// An input array the loop body reads: its name, first column, and its
/// window's offsets (`None`: the rows read none of it).
struct Input {
    name: String,
    first: String,
    param: usize,
    window: Option<(i64, i64)>,
}

impl Input {
    /// `M`, `T` and the scratch length, as `.ad` text.
    fn sizes(&self, w: usize) -> Option<(i64, String, String)> {
        let (lo, hi) = self.window?;
        let m = lo.abs().max(hi.abs()) + 1;
        let n = &self.name;
        let t = format!("(len({n}) + {m})");
        Some((m, t.clone(), format!("{t} + {m} + {w} * len({n})")))
    }
}

/// The block of the `k`th statement of `plan`, a loop with sites whose
/// pattern is `pattern`.
#[allow(clippy::too_many_arguments)]
pub(super) fn element_loop(
    s: &mut String,
    f: &FuncDecl,
    name: &str,
    dual: &[bool],
    plan: &Plan,
    l: &Layout,
    k: usize,
    pattern: &Pattern,
) {
    let Top::Loop {
        var,
        from,
        cond,
        sites,
        ..
    } = &plan.tops[k]
    else {
        return;
    };
    let w = sites.len();
    let keep = kept(f, plan, k);
    let inputs = inputs(f, dual, l, &keep, pattern);
    let _ = writeln!(s, "        {{");
    let mut rev = Vec::new();
    for (i, (p, &d)) in f.params.iter().zip(dual).enumerate() {
        if !keep[i] {
            continue;
        }
        let n = &p.name.name;
        rev.push(n.clone());
        if let Some(a) = inputs.iter().find(|a| a.param == i) {
            let size = a.sizes(w).map_or(format!("{w} * len({n})"), |x| x.2);
            let _ = writeln!(s, "            double adc_e_z{i}[__adc_uninit({size})];");
            rev.push(format!(
                "adc_e_z{i}[adc_e_s{i} .. adc_e_s{i} + {w} * len({n})]"
            ));
        } else if d {
            let _ = writeln!(
                s,
                "            double adc_e_d_{n}[__adc_uninit({w} * len({n}))];"
            );
            rev.push(format!("adc_e_d_{n}"));
        }
    }
    for a in &inputs {
        let (Some((lo, hi)), Some((_, t, _))) = (a.window, a.sizes(w)) else {
            continue;
        };
        let (i, n) = (a.param, &a.name);
        let _ = writeln!(s, "            for (int adc_e_j = 0; adc_e_j < {w}; adc_e_j++) {{ for (int adc_e_c = {lo}; adc_e_c <= {hi}; adc_e_c++) {{ adc_e_z{i}[{t} + adc_e_j * len({n}) + adc_e_c] = 0.0; }} }}");
    }
    rev.push(var.clone());
    rev.extend(captured(plan, k).into_iter().map(|(_, n)| n));
    if w > 1 {
        let _ = writeln!(s, "            double adc_e_seed[{w}];");
        rev.push("adc_e_seed".into());
    } else {
        rev.push("0.0".into());
    }
    loop_head(s, f, (var, from, cond), sites);
    let _ = writeln!(s, "                if (adc_e_done) {{");
    for a in &inputs {
        let (i, n) = (a.param, &a.name);
        match (pattern.bases.get(&i), a.sizes(w)) {
            (Some(base), Some((_, t, size))) => {
                let _ = writeln!(s, "                int adc_e_b{i} = {base};");
                let _ = writeln!(s, "                int adc_e_s{i} = {t} - adc_e_b{i};");
                let _ = writeln!(s, "                if (adc_e_s{i} < 0 || adc_e_s{i} > {size} - {w} * len({n})) {{ adc_e_s{i} = 0; }}");
            }
            _ => {
                let _ = writeln!(s, "                int adc_e_s{i} = 0;");
            }
        }
    }
    // Lane `j` seeds site `j`'s row alone.
    for (k2, site) in sites.iter().enumerate() {
        let n = &f.params[site.param].name.name;
        let _ = write!(s, "                if (adc_e_v{k2}) {{");
        for j in 0..w {
            let one = if j == k2 { "1.0" } else { "0.0" };
            let _ = write!(s, " adc_e_d_{n}[{j} * len({n}) + adc_e_r{k2}] = {one};");
        }
        let _ = writeln!(s, " }}");
    }
    let _ = writeln!(s, "                {name}__e{k}b({});", rev.join(", "));
    gather(s, f, l, sites, &pattern.shape, &inputs, w, 4);
    let _ = writeln!(s, "                }}");
    let _ = writeln!(s, "            }}");
    let _ = writeln!(s, "        }}");
}

/// The input arrays the loop body names (`Dual`, not `out`), in parameter
/// order, with their windows in the pattern.
fn inputs(f: &FuncDecl, dual: &[bool], l: &Layout, keep: &[bool], pattern: &Pattern) -> Vec<Input> {
    let mut out = Vec::new();
    let leaves = pattern.shape.leaves();
    for (i, p) in f.params.iter().enumerate() {
        let (true, true, Some(first)) = (dual[i], keep[i], &l.col_at[i]) else {
            continue;
        };
        let offsets = leaves
            .iter()
            .copied()
            .flatten()
            .flatten()
            .filter(|(q, _)| *q == i);
        let window = offsets.fold(None, |acc: Option<(i64, i64)>, &(_, c)| {
            Some(acc.map_or((c, c), |(lo, hi)| (lo.min(c), hi.max(c))))
        });
        out.push(Input {
            name: p.name.name.clone(),
            first: first.clone(),
            param: i,
            window,
        });
    }
    out
}

/// Each valid site's row: `rows` filled up to it, then its entries moved
/// from the windows to `vals` (entries past the shorter of `vals` and
/// `cols` are counted, not written) and zeroed there. Where the paths of
/// the iteration read different elements, the branch on their condition
/// picks the path's rows (`depth`: its indentation, in levels of 4).
#[allow(clippy::too_many_arguments)]
fn gather(
    s: &mut String,
    f: &FuncDecl,
    l: &Layout,
    sites: &[super::elements::Site],
    shape: &Shape<Rows>,
    inputs: &[Input],
    w: usize,
    depth: usize,
) {
    let rows = match shape {
        Shape::Rows(rows) => rows,
        Shape::Branch { cond, then, other } => {
            let ind = "    ".repeat(depth);
            let _ = writeln!(s, "{ind}if ({cond}) {{");
            gather(s, f, l, sites, then, inputs, w, depth + 1);
            let _ = writeln!(s, "{ind}}} else {{");
            gather(s, f, l, sites, other, inputs, w, depth + 1);
            let _ = writeln!(s, "{ind}}}");
            return;
        }
    };
    let ind = "    ".repeat(depth);
    for (j, site) in sites.iter().enumerate() {
        let at = row_at(l, site.param);
        let _ = writeln!(s, "{ind}if (adc_e_v{j}) {{");
        let _ = writeln!(s, "{ind}    int adc_e_gr = {at} + adc_e_r{j};");
        let _ = writeln!(s, "{ind}    while (adc_e_next <= adc_e_gr) {{ rows[adc_e_next] = adc_e_q; adc_e_next++; }}");
        for &(p, c) in &rows[j] {
            let n = &f.params[p].name.name;
            let a = inputs.iter().find(|a| a.param == p).expect(
                "invariant: a row reads only inputs the loop body names (`element_pattern`)",
            );
            let (_, t, _) = a
                .sizes(w)
                .expect("invariant: an input a row reads has a window");
            let first = &a.first;
            let _ = writeln!(s, "{ind}    {{ int adc_e_x = {t} + {j} * len({n}) + ({c}); if (adc_e_q < adc_e_room) {{ vals[adc_e_q] = adc_e_z{p}[adc_e_x]; }} if (adc_e_q < len(cols)) {{ cols[adc_e_q] = {first} + adc_e_b{p} + ({c}); }} adc_e_z{p}[adc_e_x] = 0.0; adc_e_q++; }}");
        }
        let _ = writeln!(s, "{ind}}}");
    }
}

/// An element loop's header and, per site `j`, its row `adc_e_rj` and
/// whether it is in range, `adc_e_vj`.
pub(super) fn loop_head(
    s: &mut String,
    f: &FuncDecl,
    (var, from, cond): (&str, &str, &str),
    sites: &[super::elements::Site],
) {
    let _ = writeln!(
        s,
        "            for (int {var} = {from}; {cond}; {var}++) {{"
    );
    for (j, site) in sites.iter().enumerate() {
        let n = &f.params[site.param].name.name;
        let _ = writeln!(s, "                int adc_e_r{j} = {};", site.index);
        let _ = writeln!(
            s,
            "                bool adc_e_v{j} = adc_e_r{j} >= 0 && adc_e_r{j} < len({n});"
        );
    }
}
