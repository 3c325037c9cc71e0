//! Bounds-check elimination for counted loops such as
//! `for (int i = 0; i < len(a); i++) ... a[i] ...` and
//! `for (int i = 1; i < n - 1; i++) ... a[i - 1] + a[i + 1] ...`.
//!
//! Pattern: a block `H` with an `i64` parameter `i` that ends in
//! `br (cmp lt i, L - k), B, ...` (`k` a constant >= 0, `L - 0` meaning `L`),
//! where every edge into `H` passes either a constant `>= c0 >= 0` (from a
//! block `B` does not dominate) or `add i, 1` (from a block `B` dominates).
//! Then `c0 <= i < L - k` holds in every block `B` dominates, and there an
//! access `x[i + d]` (`d` a constant, also `i - d`) to an array `x` of
//! length `L` (`L` is `len x`, or `x` is `new L`) loses its check when
//! `-c0 <= d <= k`. (`i + 1` cannot overflow there, since `i < L`.)
//!
//! Also, anywhere: an access at a constant index `k` to an array of a
//! constant length `n` (`new n`, or a view with constant bounds of such
//! an array or any other) loses its check when `0 <= k < n`.
//!
//! Assumes: verified input. Guarantees: verified output; only checks that
//! can never fail are removed.

use crate::util::{def_data, incoming_edges, int_const, offset_of};
use adc_ir::dom::DomTree;
use adc_ir::{Block, CmpCond, Function, InstData, Value, ValueDef};

fn is_increment_of(func: &Function, v: Value, i: Value) -> bool {
    offset_of(func, v) == (i, 1)
}

/// Whether the array `x` has length `len` (an `i64` value).
fn has_length(func: &Function, x: Value, len: Value) -> bool {
    matches!(def_data(func, len), Some(InstData::ArrayLen { array }) if *array == x)
        || matches!(def_data(func, x), Some(InstData::ArrayNew { len: l }) if *l == len)
}

/// A loop body `body` in which `lo <= i < len - k`.
pub(crate) struct Counted {
    body: Block,
    i: Value,
    len: Value,
    lo: i64,
    k: i64,
}

pub fn run(func: &mut Function) -> bool {
    let dom = DomTree::new(func);
    let edges = incoming_edges(func);
    let proven = counted_loops(func, &dom, &edges);
    let mut changed = constant_indices(func);
    for c in proven {
        for &b in &dom.rpo {
            if !dom.dominates(c.body, b) {
                continue;
            }
            for inst in func.dfg.block(b).insts.clone() {
                let (array, index) = match func.dfg.inst(inst) {
                    InstData::Load {
                        array,
                        index,
                        checked: true,
                    }
                    | InstData::Store {
                        array,
                        index,
                        checked: true,
                        ..
                    } => (*array, *index),
                    _ => continue,
                };
                let (base, d) = offset_of(func, index);
                if base == c.i && -c.lo <= d && d <= c.k && has_length(func, array, c.len) {
                    if let InstData::Load { checked, .. } | InstData::Store { checked, .. } =
                        func.dfg.inst_mut(inst)
                    {
                        *checked = false;
                        changed = true;
                    }
                }
            }
        }
    }
    changed
}

/// The counted loops of `func` whose bodies bound their counters.
pub(crate) fn counted_loops(
    func: &Function,
    dom: &DomTree,
    edges: &std::collections::BTreeMap<Block, Vec<crate::util::Edge>>,
) -> Vec<Counted> {
    let mut proven: Vec<Counted> = Vec::new();
    for &h in &dom.rpo {
        let Some(term) = func.terminator(h) else {
            continue;
        };
        let InstData::Branch {
            cond, then_dest, ..
        } = func.dfg.inst(term)
        else {
            continue;
        };
        let body = then_dest.block;
        let Some(InstData::Cmp {
            cond: CmpCond::Lt,
            args,
        }) = def_data(func, *cond)
        else {
            continue;
        };
        let (i, bound) = (args[0], args[1]);
        let (len, minus_k) = offset_of(func, bound);
        let k = -minus_k;
        let ValueDef::Param(pb, n) = func.dfg.value_def(i) else {
            continue;
        };
        if k < 0 || pb != h || body == h || edges.get(&body).map(|e| e.len()) != Some(1) {
            continue;
        }
        let n = n as usize;
        let mut lo = i64::MAX;
        let ok = edges[&h].iter().all(|edge| {
            let arg = edge.args[n];
            let in_loop = dom.dominates(body, edge.from);
            if in_loop {
                is_increment_of(func, arg, i)
            } else {
                int_const(func, arg).is_some_and(|c| {
                    lo = lo.min(c);
                    c >= 0
                })
            }
        });
        // `lo` stays `MAX` without an edge from outside the loop.
        if ok && lo != i64::MAX && h != func.layout[0] {
            proven.push(Counted {
                body,
                i,
                len,
                lo,
                k,
            });
        }
    }
    proven
}

/// Whether `array[index]` is in bounds wherever block `at` runs: a
/// constant index into an array of constant length, or `i + d` inside a
/// counted loop's body (one of `facts`) that bounds `i` tightly enough.
pub(crate) fn in_bounds_at(
    func: &Function,
    dom: &DomTree,
    facts: &[Counted],
    at: Block,
    array: Value,
    index: Value,
) -> bool {
    if let (Some(k), Some(n)) = (int_const(func, index), constant_len(func, array)) {
        return 0 <= k && k < n;
    }
    let (base, d) = offset_of(func, index);
    facts.iter().any(|c| {
        base == c.i
            && -c.lo <= d
            && d <= c.k
            && has_length(func, array, c.len)
            && dom.dominates(c.body, at)
    })
}

/// The length of `x` when it is a constant.
fn constant_len(func: &Function, x: Value) -> Option<i64> {
    match def_data(func, x)? {
        InstData::ArrayNew { len } => int_const(func, *len),
        InstData::ArrayView { lo, hi, .. } => Some(int_const(func, *hi)? - int_const(func, *lo)?),
        _ => None,
    }
}

/// Drops the checks of constant in-bounds indices into arrays of constant
/// length.
fn constant_indices(func: &mut Function) -> bool {
    let mut proven = Vec::new();
    for &b in &func.layout {
        for &inst in &func.dfg.block(b).insts {
            let (array, index) = match func.dfg.inst(inst) {
                InstData::Load {
                    array,
                    index,
                    checked: true,
                }
                | InstData::Store {
                    array,
                    index,
                    checked: true,
                    ..
                } => (*array, *index),
                _ => continue,
            };
            if let (Some(k), Some(n)) = (int_const(func, index), constant_len(func, array)) {
                if 0 <= k && k < n {
                    proven.push(inst);
                }
            }
        }
    }
    for &inst in &proven {
        if let InstData::Load { checked, .. } | InstData::Store { checked, .. } =
            func.dfg.inst_mut(inst)
        {
            *checked = false;
        }
    }
    !proven.is_empty()
}
