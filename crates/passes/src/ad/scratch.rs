//! Scratch parameters of a function: array parameters whose contents on
//! entry it never reads, because every element it loads was stored earlier
//! in the same call (a checkpointed loop's temporaries, such as a
//! Runge-Kutta step's stage arrays), or that it only asks the length of.
//! `outline` gives a segment function its own array for such a parameter
//! when the caller does not read the array after the loop (`outline/private.rs`);
//! a caller's reverse derivative gives such an array of a `[checkpoint]`
//! callee itself, not a snapshot, to the callee's derivative in the
//! reverse sweep (`unzip/calls.rs`).
//!
//! Must-write reasoning, conservative: a load of the parameter `a` is
//! covered when the elements it may read (one index, or a counted loop's
//! counter plus a constant over the loop's range) lie in the union of
//! intervals written where the load stands, on every path:
//!
//! - a `store a[j + c]` writes `[j + c, j + c + 1)` at the points it
//!   dominates;
//! - a counted loop (`crate::loops`, step 1, test `i < bound` with the bound
//!   defined before the loop, left only by that test into a block of its own)
//!   whose body has a `store a[i + c]` in a block dominating its latch
//!   writes `[init + c, bound + c)` at the points its exit block dominates.
//!
//! Bounds are `base + constant` with the same base compared only (the same
//! value, a constant, or `len` of the same array, or an integer parameter
//! the caller passes as `len` of another argument). Any other use of the
//! parameter (a call argument, a view, an element reference, a copy, a jump
//! argument) makes it not scratch, as does a load nothing covers.

use crate::cfg::incoming_edges;
use crate::defs::{def_data, int_const};
use crate::loops::{counted_header, counted_loops, LoopInit};
use adc_ir::dom::DomTree;
use adc_ir::offset::offset_through_chain;
use adc_ir::{Block, Function, InstData, Type, Value};
use std::collections::{BTreeMap, BTreeSet};

/// What a bound is measured from.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Base {
    Zero,
    Value(Value),
    /// The length of an array.
    Len(Value),
}

/// `base + off`.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
struct Term {
    base: Base,
    off: i64,
}

impl Term {
    fn plus(self, c: i64) -> Option<Term> {
        Some(Term {
            base: self.base,
            off: self.off.checked_add(c)?,
        })
    }

    /// `self <= other` for every value of the base.
    fn le(self, other: Term) -> bool {
        self.base == other.base && self.off <= other.off
    }
}

/// Elements `[lo, hi)` of the array written where `block`'s instruction
/// `from` (and everything it dominates) runs.
struct Written {
    block: Block,
    from: usize,
    lo: Term,
    hi: Term,
}

/// Per parameter of `func`: whether it is a scratch array. `lens` maps an
/// integer parameter to the array parameter whose length the caller
/// passes for it.
pub(crate) fn scratch_params(func: &Function, lens: &BTreeMap<usize, usize>) -> Vec<bool> {
    let Some(entry) = func.entry_block() else {
        return vec![false; func.params.len()];
    };
    let params = func.dfg.block_params(entry).to_vec();
    let facts = Facts::new(func, &params, lens);
    func.params
        .iter()
        .zip(&params)
        .map(|(p, &a)| matches!(p.ty, Type::Array(_)) && facts.scratch(a))
        .collect()
}

struct Facts<'a> {
    func: &'a Function,
    dom: DomTree,
    /// The block of each instruction's result values and block parameters.
    def_block: BTreeMap<Value, Block>,
    /// Integer parameters that stand for `len` of an array parameter.
    len_of: BTreeMap<Value, Value>,
    /// Counted loops with step 1 and a loop-invariant bound: header,
    /// counter, init, bound, the in-loop successor of the test, latch,
    /// body, exit.
    loops: Vec<Counted>,
}

struct Counted {
    counter: Value,
    init: Term,
    bound: Term,
    /// The test's successor in the loop: the counter is below the bound
    /// where it dominates.
    inside: Block,
    latch: Block,
    body: BTreeSet<Block>,
    exit: Block,
}

impl<'a> Facts<'a> {
    fn new(func: &'a Function, params: &[Value], lens: &BTreeMap<usize, usize>) -> Self {
        let dom = DomTree::new(func);
        let mut def_block = BTreeMap::new();
        for &b in &func.layout {
            for &p in func.dfg.block_params(b) {
                def_block.insert(p, b);
            }
            for &i in &func.dfg.block(b).insts {
                for &r in func.dfg.inst_results(i) {
                    def_block.insert(r, b);
                }
            }
        }
        let len_of = lens
            .iter()
            .filter_map(|(&k, &m)| Some((*params.get(k)?, *params.get(m)?)))
            .collect();
        let mut facts = Facts {
            func,
            dom,
            def_block,
            len_of,
            loops: Vec::new(),
        };
        facts.loops = facts.counted();
        facts
    }

    /// The counted loops whose range the analysis can state.
    fn counted(&self) -> Vec<Counted> {
        let func = self.func;
        let all: BTreeSet<Block> = func.layout.iter().copied().collect();
        let preds = incoming_edges(func);
        let single_pred = |b: Block| preds.get(&b).is_some_and(|e| e.len() == 1);
        let mut out = Vec::new();
        for lp in counted_loops(func, &all) {
            let counter = func.dfg.block_params(lp.header)[lp.param];
            let Some(test) = counted_header(func, lp.header, counter) else {
                continue;
            };
            let inside = test.then_dest.block;
            let invariant = self
                .def_block
                .get(&test.bound)
                .is_some_and(|&d| d != lp.header && self.dom.dominates(d, lp.header));
            if lp.step != 1
                || !lp.body.contains(&inside)
                || test.else_dest.block != lp.exit
                || !single_pred(inside)
                || !single_pred(lp.exit)
                || !invariant
            {
                continue;
            }
            let init = match lp.init {
                LoopInit::Const(c) => Term {
                    base: Base::Zero,
                    off: c,
                },
                LoopInit::Value(v) => self.term(v),
            };
            out.push(Counted {
                counter,
                init,
                bound: self.term(test.bound),
                inside,
                latch: lp.latch,
                body: lp.body,
                exit: lp.exit,
            });
        }
        out
    }

    /// `v` as `base + constant`.
    fn term(&self, v: Value) -> Term {
        if let Some(c) = int_const(self.func, v) {
            return Term {
                base: Base::Zero,
                off: c,
            };
        }
        let (b, off) = offset_through_chain(self.func, v);
        if let Some(total) = int_const(self.func, b).and_then(|c| c.checked_add(off)) {
            return Term {
                base: Base::Zero,
                off: total,
            };
        }
        let base = match (def_data(self.func, b), self.len_of.get(&b)) {
            (Some(InstData::ArrayLen { array }), _) => Base::Len(*array),
            (_, Some(&a)) => Base::Len(a),
            _ => Base::Value(b),
        };
        Term { base, off }
    }

    /// Whether every use of the array `a` is a store, a `len`, a length
    /// check, or a load that stores before it cover.
    fn scratch(&self, a: Value) -> bool {
        let written = self.written(a);
        uses_of(self.func, a)
            .into_iter()
            .all(|(b, pos, data)| match data {
                InstData::Load { array, index, .. } if *array == a && *index != a => {
                    self.covered(&written, b, pos, *index)
                }
                InstData::ArrayLen { .. } | InstData::LenCheck { .. } => true,
                _ => stores_into(data, a),
            })
    }

    /// The intervals of `a` that stores write: one element per store, and
    /// a counted loop's range where a store at its counter runs every
    /// iteration.
    fn written(&self, a: Value) -> Vec<Written> {
        let func = self.func;
        let mut out = Vec::new();
        for &b in &func.layout {
            for (pos, &i) in func.dfg.block(b).insts.iter().enumerate() {
                let InstData::Store { array, index, .. } = func.dfg.inst(i) else {
                    continue;
                };
                if *array != a {
                    continue;
                }
                let lo = self.term(*index);
                if let Some(hi) = lo.plus(1) {
                    out.push(Written {
                        block: b,
                        from: pos + 1,
                        lo,
                        hi,
                    });
                }
                let (base, c) = offset_through_chain(func, *index);
                for lp in &self.loops {
                    if lp.counter != base
                        || !lp.body.contains(&b)
                        || !self.dom.dominates(b, lp.latch)
                    {
                        continue;
                    }
                    if let (Some(lo), Some(hi)) = (lp.init.plus(c), lp.bound.plus(c)) {
                        out.push(Written {
                            block: lp.exit,
                            from: 0,
                            lo,
                            hi,
                        });
                    }
                }
            }
        }
        out
    }

    /// Whether the load at `block`'s instruction `pos` of `index` reads
    /// only elements `written` there.
    fn covered(&self, written: &[Written], block: Block, pos: usize, index: Value) -> bool {
        let here: Vec<(Term, Term)> = written
            .iter()
            .filter(|w| {
                if w.block == block {
                    w.from <= pos
                } else {
                    self.dom.dominates(w.block, block)
                }
            })
            .map(|w| (w.lo, w.hi))
            .collect();
        let point = self.term(index);
        if point.plus(1).is_some_and(|end| cover(&here, point, end)) {
            return true;
        }
        // The load in a counted loop, at its counter plus a constant.
        let (base, c) = offset_through_chain(self.func, index);
        self.loops.iter().any(|lp| {
            lp.counter == base
                && self.dom.dominates(lp.inside, block)
                && match (lp.init.plus(c), lp.bound.plus(c)) {
                    (Some(lo), Some(hi)) => cover(&here, lo, hi),
                    _ => false,
                }
        })
    }
}

/// Each instruction of `func` that has `a` among its operands: its block,
/// its position there, its data.
pub(crate) fn uses_of(func: &Function, a: Value) -> Vec<(Block, usize, &InstData)> {
    let mut out = Vec::new();
    for &b in &func.layout {
        for (pos, &i) in func.dfg.block(b).insts.iter().enumerate() {
            let data = func.dfg.inst(i);
            let mut uses = false;
            data.for_each_arg(|v| uses |= v == a);
            if uses {
                out.push((b, pos, data));
            }
        }
    }
    out
}

/// Whether `data` is a store into `a` that uses `a` only as its array.
pub(crate) fn stores_into(data: &InstData, a: Value) -> bool {
    matches!(data, InstData::Store { array, index, value, .. } if *array == a && *index != a && *value != a)
}

/// Whether `[lo, hi)` lies in the union of the intervals `have`: from `lo`,
/// each interval starting at or before a point reached extends the reach
/// to its end (whatever the values of the bases, also when an interval is
/// empty).
fn cover(have: &[(Term, Term)], lo: Term, hi: Term) -> bool {
    let mut reach = vec![lo];
    let mut used = vec![false; have.len()];
    loop {
        if reach.iter().any(|r| hi.le(*r)) {
            return true;
        }
        let mut grew = false;
        for (k, (a, b)) in have.iter().enumerate() {
            if !used[k] && reach.iter().any(|r| a.le(*r)) {
                used[k] = true;
                reach.push(*b);
                grew = true;
            }
        }
        if !grew {
            return false;
        }
    }
}

#[cfg(test)]
mod tests;
