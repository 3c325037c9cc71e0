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
//! an array or any other) loses its check when `0 <= k < n`; and one at a
//! constant index `0 <= k <= m` into `x` in a block that a branch on
//! `cmp lt m, len x` (alone or a term of a conjunction `select p, q,
//! false`, as `version`'s guard is) enters on its true edge
//! (`LongerThan`); likewise an access `x[k]` there when the conjunction
//! also tests `k >= c` for a constant `c >= 0`.
//!
//!
//! And anywhere: a checked access `y[i]` that a checked access `x[i]` (the
//! same index value) dominates, where `x` and `y` have one length: the same
//! array value, or both `new L`, or `len x` is `L` and `y` is `new L`
//! (`repeated_indices`). The earlier check passed, or the program stopped
//! there.
//!
//! Assumes: verified input. Guarantees: verified output; only checks that
//! can never fail are removed.

use crate::util::{
    branch_at, checked_access, def_data, drop_check, incoming_edges, int_const, offset_of,
};
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
    let longer = longer_than(func, &dom, &edges);
    let mut changed = guarded_indices(func, &dom, &longer);
    changed |= repeated_indices(func, &dom);
    for c in proven {
        for &b in &dom.rpo {
            if !dom.dominates(c.body, b) {
                continue;
            }
            for inst in func.dfg.block(b).insts.clone() {
                let Some((array, index)) = checked_access(func, inst) else {
                    continue;
                };
                let (base, d) = offset_of(func, index);
                if base == c.i && -c.lo <= d && d <= c.k && has_length(func, array, c.len) {
                    drop_check(func, inst);
                    changed = true;
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

/// `len(array) > k` in every block `from` dominates: `from` is the true
/// target of a branch on `cmp lt k, len array` (or on a conjunction with
/// that term), and every other edge into `from` comes from a block `from`
/// dominates (a loop's back edge), so every path to those blocks took the
/// true edge (no edge enters the entry block: the verifier's rule). `len`
/// never changes, so the fact holds ever after. `k` is a
/// constant, or a value the conjunction also tests `k >= c` for a constant
/// `c >= 0` (`version`'s guard for `cam[k]`): then `array[k]` fits.
pub(crate) struct LongerThan {
    from: Block,
    array: Value,
    k: Bound,
}

#[derive(Clone, Copy, PartialEq)]
enum Bound {
    Const(i64),
    Index(Value),
}

/// Every `LongerThan` fact of `func`.
pub(crate) fn longer_than(
    func: &Function,
    dom: &DomTree,
    edges: &std::collections::BTreeMap<Block, Vec<crate::util::Edge>>,
) -> Vec<LongerThan> {
    let mut facts = Vec::new();
    for &p in &dom.rpo {
        let Some((cond, then_dest, else_dest)) = branch_at(func, p) else {
            continue;
        };
        let from = then_dest.block;
        let only_way_in = from != else_dest.block
            && edges.get(&from).is_some_and(|es| {
                es.iter()
                    .all(|e| (e.from == p && p != from) || dom.dominates(from, e.from))
            });
        if !only_way_in {
            continue;
        }
        // The terms of the conjunction, walked without recursion (a guard
        // chains one term per access).
        let mut stack = vec![cond];
        let mut below_len: Vec<(Value, Value)> = Vec::new();
        let mut nonnegative: Vec<Value> = Vec::new();
        while let Some(c) = stack.pop() {
            match def_data(func, c) {
                Some(InstData::Select { cond, args }) if is_false(func, args[1]) => {
                    stack.extend([*cond, args[0]]);
                }
                Some(&InstData::Cmp {
                    cond: CmpCond::Lt,
                    args: [k, n],
                }) => {
                    if let Some(InstData::ArrayLen { array }) = def_data(func, n) {
                        below_len.push((k, *array));
                    }
                }
                Some(&InstData::Cmp {
                    cond: CmpCond::Ge,
                    args: [k, c],
                }) if int_const(func, c).is_some_and(|c| c >= 0) => nonnegative.push(k),
                _ => {}
            }
        }
        for (k, array) in below_len {
            let k = match int_const(func, k) {
                Some(c) => Bound::Const(c),
                None if nonnegative.contains(&k) => Bound::Index(k),
                None => continue,
            };
            facts.push(LongerThan { from, array, k });
        }
    }
    facts
}

fn is_false(func: &Function, v: Value) -> bool {
    matches!(
        def_data(func, v),
        Some(InstData::Const {
            value: adc_ir::Constant::Bool(false)
        })
    )
}

/// Whether `array[k]` (a constant index) is in bounds wherever block `at`
/// runs: `array` has a constant length above `k`, or a `LongerThan` fact
/// holds at `at`.
fn constant_in_bounds(
    func: &Function,
    dom: &DomTree,
    longer: &[LongerThan],
    at: Block,
    array: Value,
    k: i64,
) -> bool {
    if k < 0 {
        return false;
    }
    if let Some(n) = constant_len(func, array) {
        return k < n;
    }
    longer.iter().any(|f| {
        f.array == array && matches!(f.k, Bound::Const(m) if k <= m) && dom.dominates(f.from, at)
    })
}

/// Whether `array[index]` is in bounds wherever block `at` runs by a
/// `LongerThan` fact: `index` a constant (`constant_in_bounds`) or the
/// fact's own index.
fn guarded_in_bounds(
    func: &Function,
    dom: &DomTree,
    longer: &[LongerThan],
    at: Block,
    array: Value,
    index: Value,
) -> bool {
    match int_const(func, index) {
        Some(k) => constant_in_bounds(func, dom, longer, at, array, k),
        None => longer
            .iter()
            .any(|f| f.array == array && f.k == Bound::Index(index) && dom.dominates(f.from, at)),
    }
}

/// What `licm` knows of lengths: the counted loops and the `LongerThan`
/// facts.
pub(crate) struct Bounds {
    counted: Vec<Counted>,
    longer: Vec<LongerThan>,
}

pub(crate) fn bounds(
    func: &Function,
    dom: &DomTree,
    edges: &std::collections::BTreeMap<Block, Vec<crate::util::Edge>>,
) -> Bounds {
    Bounds {
        counted: counted_loops(func, dom, edges),
        longer: longer_than(func, dom, edges),
    }
}

/// Whether `array[index]` is in bounds wherever block `at` runs: a
/// constant index (`constant_in_bounds`), or `i + d` inside a counted
/// loop's body that bounds `i` tightly enough.
pub(crate) fn in_bounds_at(
    func: &Function,
    dom: &DomTree,
    facts: &Bounds,
    at: Block,
    array: Value,
    index: Value,
) -> bool {
    if guarded_in_bounds(func, dom, &facts.longer, at, array, index) {
        return true;
    }
    let (base, d) = offset_of(func, index);
    facts.counted.iter().any(|c| {
        base == c.i
            && -c.lo <= d
            && d <= c.k
            && has_length(func, array, c.len)
            && dom.dominates(c.body, at)
    })
}

/// Whether `view array, lo, hi` cannot fail wherever block `at` runs:
/// constant bounds `0 <= lo <= hi` with `hi - 1` in bounds (or `hi = 0`).
pub(crate) fn view_in_bounds_at(
    func: &Function,
    dom: &DomTree,
    facts: &Bounds,
    at: Block,
    [array, lo, hi]: [Value; 3],
) -> bool {
    match (int_const(func, lo), int_const(func, hi)) {
        (Some(lo), Some(hi)) => {
            0 <= lo
                && lo <= hi
                && (hi == 0 || constant_in_bounds(func, dom, &facts.longer, at, array, hi - 1))
        }
        _ => false,
    }
}

/// The length of `x` when it is a constant.
fn constant_len(func: &Function, x: Value) -> Option<i64> {
    match def_data(func, x)? {
        InstData::ArrayNew { len } => int_const(func, *len),
        InstData::ArrayView { lo, hi, .. } => Some(int_const(func, *hi)? - int_const(func, *lo)?),
        _ => None,
    }
}

/// Drops the checks of indices `LongerThan` facts or constant lengths
/// prove in bounds (`guarded_in_bounds`).
fn guarded_indices(func: &mut Function, dom: &DomTree, longer: &[LongerThan]) -> bool {
    let mut proven = Vec::new();
    for &b in &func.layout {
        for &inst in &func.dfg.block(b).insts {
            let Some((array, index)) = checked_access(func, inst) else {
                continue;
            };
            if guarded_in_bounds(func, dom, longer, b, array, index) {
                proven.push(inst);
            }
        }
    }
    for &inst in &proven {
        drop_check(func, inst);
    }
    !proven.is_empty()
}

/// Drops the check of an access whose index a dominating checked access to
/// an array of the same length has checked (see the module doc).
fn repeated_indices(func: &mut Function, dom: &DomTree) -> bool {
    // An array's length as a value: `L` for `new L` or where `len x` is
    // `L`, else the array itself (two arrays share a key only when they
    // have one length).
    let mut len_of: std::collections::BTreeMap<Value, Value> = Default::default();
    for &b in &dom.rpo {
        for &i in &func.dfg.block(b).insts {
            if let InstData::ArrayLen { array } = func.dfg.inst(i) {
                len_of.entry(*array).or_insert(func.dfg.inst_results(i)[0]);
            }
        }
    }
    let length_key = |x: Value| match def_data(func, x) {
        Some(InstData::ArrayNew { len }) => *len,
        _ => len_of.get(&x).copied().unwrap_or(x),
    };
    // The checked accesses by (length key, index), in reverse postorder:
    // the block and position of each.
    let mut seen: std::collections::BTreeMap<(Value, Value), Vec<(Block, usize)>> =
        Default::default();
    let mut repeated = Vec::new();
    for &b in &dom.rpo {
        for (pos, &inst) in func.dfg.block(b).insts.iter().enumerate() {
            let Some((array, index)) = checked_access(func, inst) else {
                continue;
            };
            let at = seen.entry((length_key(array), index)).or_default();
            let dominated = at
                .iter()
                .any(|&(wb, wpos)| (wb == b && wpos < pos) || (wb != b && dom.dominates(wb, b)));
            match dominated {
                true => repeated.push(inst),
                false => at.push((b, pos)),
            }
        }
    }
    for &inst in &repeated {
        drop_check(func, inst);
    }
    !repeated.is_empty()
}
