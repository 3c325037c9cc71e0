//! Bounds-check elimination for counted loops such as
//! `for (int i = 0; i < len(a); i++) ... a[i] ...` and
//! `for (int i = 1; i < n - 1; i++) ... a[i - 1] + a[i + 1] ...`.
//!
//! Pattern: a block `H` with an `i64` parameter `i` that ends in
//! `br (cmp lt i, L - k), B, ...` (`k` a constant >= 0, `L - 0` meaning `L`),
//! where every edge into `H` passes either a constant `>= c0 >= 0` (from a
//! block `B` does not dominate) or `add i, 1` (from a block `B` dominates).
//! Then `c0 <= i < L - k` holds in every block `B` dominates, and there an
//! access `x[i + d]` (`d` a constant, also `i - d`, or a chain of such
//! additions: `(i - 1) - 1` is `i + -2`) to an array `x` of
//! length `L` (`L` is `len x`, or `x` is `new L`) loses its check when
//! `-c0 <= d <= k`. (`i + 1` cannot overflow there, since `i < L`.)
//!
//! The same holds in a rotated loop (`rotate`, `unroll`: the test at the
//! latch), whose header every edge enters on a tested `cmp lt a, L - k`
//! (`rotated_loops`): the entry with a constant, the back edge with `i + s`.
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
//! And anywhere: a checked access `y[i]` that an access `x[i]` (the same
//! index value) dominates, where `x` and `y` have one length: the same
//! array value, or both `new L`, or `len x` is `L` and `y` is `new L`
//! (`repeated_indices`, `Witnesses`). The earlier check passed, or the
//! program stopped there (an unchecked access is in bounds by the IR's
//! rule).
//!
//! Assumes: verified input. Guarantees: verified output; only checks that
//! can never fail are removed.

use crate::cfg::{branch_at, branch_test, incoming_edges, BranchTest};
use crate::defs::{checked_access, def_data, int_const};
use crate::rewrite::drop_check;
use adc_ir::dom::DomTree;
use adc_ir::offset::{offset_of, offset_through_chain};
use adc_ir::{Block, CmpCond, Function, InstData, Value, ValueDef};
use std::collections::BTreeMap;

fn is_increment_of(func: &Function, v: Value, i: Value) -> bool {
    offset_of(func, v) == (i, 1)
}

/// Whether the array `x` has length `len` (an `i64` value).
fn has_length(func: &Function, x: Value, len: Value) -> bool {
    matches!(def_data(func, len), Some(InstData::ArrayLen { array }) if *array == x)
        || matches!(def_data(func, x), Some(InstData::ArrayNew { len: l, .. }) if *l == len)
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
    let mut proven = counted_loops(func, &dom, &edges);
    proven.extend(rotated_loops(func, &dom, &edges));
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
                let (base, d) = offset_through_chain(func, index);
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
    edges: &std::collections::BTreeMap<Block, Vec<crate::cfg::Edge>>,
) -> Vec<Counted> {
    let mut proven: Vec<Counted> = Vec::new();
    for &h in &dom.rpo {
        let Some(BranchTest {
            cond: CmpCond::Lt,
            args: [i, bound],
            then_dest,
            ..
        }) = branch_test(func, h)
        else {
            continue;
        };
        let body = then_dest.block;
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

/// The rotated counted loops of `func` (as `rotate` and `unroll` leave
/// them: the test at the bottom): a block `H` with an `i64` parameter `i`
/// whose every incoming edge is the true edge of a `br` (its false edge
/// going elsewhere) that tests `cmp lt a, L - k` (`k` a constant >= 0, one
/// `L - k` for all, alone or a term of a conjunction `select p, q,
/// false`) on the value `a` it passes to `i`: from a block `H` dominates,
/// `a = i + s` (`1 <= s <= MAX_STEP`); from any other block, a constant
/// `a >= c0 >= 0`. Then `c0 <= i < L - k` wherever `H` dominates: each
/// entry passes `c0` or more, each back edge a larger `i`, and every
/// edge tested what it passes. (`i + s` does not wrap: `i < L`, and an
/// array's length is far below `i64::MAX - MAX_STEP`, its bytes being
/// addressable.)
pub(crate) fn rotated_loops(
    func: &Function,
    dom: &DomTree,
    edges: &std::collections::BTreeMap<Block, Vec<crate::cfg::Edge>>,
) -> Vec<Counted> {
    let mut proven = Vec::new();
    for &h in &dom.rpo {
        let Some(es) = edges.get(&h).filter(|es| !es.is_empty()) else {
            continue;
        };
        if h == func.layout[0] {
            continue;
        }
        for (n, &i) in func.dfg.block_params(h).iter().enumerate() {
            if func.dfg.value_type(i) != adc_ir::Type::I64 {
                continue;
            }
            let mut bound: Option<Value> = None;
            let mut lo = i64::MAX;
            let ok = es.iter().all(|e| {
                let a = e.args[n];
                let passes = if dom.dominates(h, e.from) {
                    let (base, s) = offset_of(func, a);
                    base == i && s >= 1 && s.unsigned_abs() <= crate::loops::MAX_STEP
                } else {
                    int_const(func, a).is_some_and(|c| {
                        lo = lo.min(c);
                        c >= 0
                    })
                };
                passes && tested_below(func, e.from, h, a, &mut bound)
            });
            // The bound is one value for every iteration: defined before `H`.
            let before =
                |b: Value| def_block(func, b).is_some_and(|d| d != h && dom.dominates(d, h));
            let Some(bound) = bound.filter(|&b| ok && lo != i64::MAX && before(b)) else {
                continue;
            };
            let (len, minus_k) = offset_of(func, bound);
            if minus_k <= 0 {
                proven.push(Counted {
                    body: h,
                    i,
                    len,
                    lo,
                    k: -minus_k,
                });
            }
        }
    }
    proven
}

/// The block that defines `v`.
fn def_block(func: &Function, v: Value) -> Option<Block> {
    match func.dfg.value_def(v) {
        ValueDef::Param(b, _) => Some(b),
        ValueDef::Result(inst, _) => func
            .layout
            .iter()
            .copied()
            .find(|&b| func.dfg.block(b).insts.contains(&inst)),
        _ => None,
    }
}

/// Whether `from` ends in `br c, h(..), x` (`x` not `h`) where `c` is
/// `cmp lt a, b` or a conjunction with that term, `b` being `bound` (set
/// when `None`).
fn tested_below(
    func: &Function,
    from: Block,
    h: Block,
    a: Value,
    bound: &mut Option<Value>,
) -> bool {
    let Some((cond, then_dest, else_dest)) = branch_at(func, from) else {
        return false;
    };
    if then_dest.block != h || else_dest.block == h {
        return false;
    }
    let same = |x: Value| {
        x == a || (int_const(func, x).is_some() && int_const(func, x) == int_const(func, a))
    };
    for c in conjunction_terms(func, cond) {
        if let Some(&InstData::Cmp {
            cond: CmpCond::Lt,
            args: [x, b],
        }) = def_data(func, c)
        {
            if same(x) && bound.is_none_or(|want| want == b) {
                *bound = Some(b);
                return true;
            }
        }
    }
    false
}

/// The terms of a conjunction `select p, q, false` (nested: `version`'s
/// guard chains one term per access), walked without recursion; a value
/// that is no such `select` is its own one term.
fn conjunction_terms(func: &Function, cond: Value) -> Vec<Value> {
    let mut stack = vec![cond];
    let mut terms = Vec::new();
    while let Some(c) = stack.pop() {
        match def_data(func, c) {
            Some(InstData::Select { cond, args }) if is_false(func, args[1]) => {
                stack.extend([*cond, args[0]]);
            }
            _ => terms.push(c),
        }
    }
    terms
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
    edges: &std::collections::BTreeMap<Block, Vec<crate::cfg::Edge>>,
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
        let mut below_len: Vec<(Value, Value)> = Vec::new();
        let mut nonnegative: Vec<Value> = Vec::new();
        for c in conjunction_terms(func, cond) {
            match def_data(func, c) {
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
    witnesses: Witnesses,
}

pub(crate) fn bounds(
    func: &Function,
    dom: &DomTree,
    edges: &std::collections::BTreeMap<Block, Vec<crate::cfg::Edge>>,
) -> Bounds {
    Bounds {
        counted: counted_loops(func, dom, edges),
        longer: longer_than(func, dom, edges),
        witnesses: Witnesses::new(func, dom),
    }
}

/// Whether `array[index]` is in bounds at the end of block `at`: a
/// constant index (`constant_in_bounds`), `i + d` inside a counted loop's
/// body that bounds `i` tightly enough, or an index an access before it
/// has checked (`Witnesses`).
pub(crate) fn in_bounds_at(
    func: &Function,
    dom: &DomTree,
    facts: &Bounds,
    at: Block,
    array: Value,
    index: Value,
) -> bool {
    if guarded_in_bounds(func, dom, &facts.longer, at, array, index)
        || facts
            .witnesses
            .covers(func, dom, (at, usize::MAX), array, index)
    {
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
        InstData::ArrayNew { len, .. } => int_const(func, *len),
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

/// Every `load` and `store` of the function by the length of its array
/// and its index value: an access dominated by one of them is in bounds.
/// (A checked access stops the program when it is not; an unchecked one is
/// in bounds by the IR's rule for `checked`.)
pub(crate) struct Witnesses {
    /// An array's length as a value: `L` for `new L` or where `len x` is
    /// `L`, else the array itself (two arrays share a key only when they
    /// have one length).
    len_of: BTreeMap<Value, Value>,
    /// The block and position of each access, by (length key, index).
    at: BTreeMap<(Value, Value), Vec<(Block, usize)>>,
}

impl Witnesses {
    pub(crate) fn new(func: &Function, dom: &DomTree) -> Witnesses {
        let mut w = Witnesses {
            len_of: BTreeMap::new(),
            at: BTreeMap::new(),
        };
        for &b in &dom.rpo {
            for &i in &func.dfg.block(b).insts {
                if let InstData::ArrayLen { array } = func.dfg.inst(i) {
                    w.len_of
                        .entry(*array)
                        .or_insert(func.dfg.inst_results(i)[0]);
                }
            }
        }
        for &b in &dom.rpo {
            for (pos, &i) in func.dfg.block(b).insts.iter().enumerate() {
                if let Some((array, index)) = access(func, i) {
                    let key = (w.length_key(func, array), index);
                    w.at.entry(key).or_default().push((b, pos));
                }
            }
        }
        w
    }

    fn length_key(&self, func: &Function, x: Value) -> Value {
        match def_data(func, x) {
            Some(InstData::ArrayNew { len, .. }) => *len,
            _ => self.len_of.get(&x).copied().unwrap_or(x),
        }
    }

    /// Whether an access to `array[index]` runs before position `pos` of
    /// block `b` on every path (`pos = usize::MAX`: before `b`'s end).
    pub(crate) fn covers(
        &self,
        func: &Function,
        dom: &DomTree,
        (b, pos): (Block, usize),
        array: Value,
        index: Value,
    ) -> bool {
        let key = (self.length_key(func, array), index);
        self.at.get(&key).is_some_and(|at| {
            at.iter().any(|&(wb, wpos)| {
                if wb == b {
                    wpos < pos
                } else {
                    dom.dominates(wb, b)
                }
            })
        })
    }
}

/// The array and index of a `load` or `store`, checked or not.
fn access(func: &Function, inst: adc_ir::Inst) -> Option<(Value, Value)> {
    match func.dfg.inst(inst) {
        InstData::Load { array, index, .. } | InstData::Store { array, index, .. } => {
            Some((*array, *index))
        }
        _ => None,
    }
}

/// Drops the check of an access that another access to an array of the
/// same length at the same index dominates (see the module doc).
fn repeated_indices(func: &mut Function, dom: &DomTree) -> bool {
    let witnesses = Witnesses::new(func, dom);
    let mut repeated = Vec::new();
    for &b in &dom.rpo {
        for (pos, &inst) in func.dfg.block(b).insts.iter().enumerate() {
            if let Some((array, index)) = checked_access(func, inst) {
                if witnesses.covers(func, dom, (b, pos), array, index) {
                    repeated.push(inst);
                }
            }
        }
    }
    for &inst in &repeated {
        drop_check(func, inst);
    }
    !repeated.is_empty()
}
