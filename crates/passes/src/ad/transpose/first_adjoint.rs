//! First adjoints and dead clears (`transpose`): the shadow loads of the
//! differential part whose transpose may store its adjoint into the element
//! instead of adding it there, because the element holds zero at that point
//! of the reverse sweep, and the shadow stores whose transpose need not
//! clear the element.
//!
//! The reverse sweep runs the differential part backwards: each shadow load
//! `D[j]` becomes `D[j] += a`, each shadow store `D[j] = x` reads `D[j]`
//! (the adjoint of `x`) and clears it. So when the reverse of a load `l` of
//! `D[j]` runs, `D[j]` holds the sum of the adjoints of the loads of `D[j]`
//! the differential part makes after `l` and before it next stores to
//! `D[j]` (a store clears the element), or before its end (`D` is made
//! zero-filled, `new`, and only the reverse sweep writes it). When there is
//! no such load, `D[j]` is zero and `D[j] = a` does the same as
//! `D[j] += a` (but for the sign of a zero). A Runge-Kutta step's
//! `k[i] = f(y[i - 1])` reverse loops then store the adjoints of `y[i - 1]`
//! instead of reading and adding to them, as does the reverse of the loop
//! that reads the `k`s.
//!
//! Pattern: the load `l` of `D` at `i + c` (`c <= 0` a constant), where
//! - `D` is a zero-filled `new` made once per call (in a block on no cycle) and used
//!   only as the array of loads, stores, `len` and frees, every load and
//!   store in a differential block;
//! - `i` is the counter of the innermost loop `L` around `l`, a counted
//!   loop (`crate::loops`) that starts at a constant `lo`, steps up and runs
//!   while `i < n`, `n` a constant or defined once per call; `l` is the
//!   only access of `D` in `L` (later iterations read higher elements);
//! - every path from `L`'s exit to a block that loads `D` takes the exit
//!   edge of a counted loop `L'` that stores `D[i']` in every iteration
//!   (its store's block dominates its latch), `i'` its counter from a
//!   constant `lo'` stepping by 1 while `i' < n` (the same `n`), with no
//!   load of `D` in `L'`; and, for each `j` in `[lo + c, lo')`, through a
//!   block (loading nothing of `D`) that stores `D[j]`, `j` a constant.
//!   Those stores write every element `l` may have read, `[lo + c, n + c)`,
//!   before any load may read it again.
//!
//! Dead clears: the reverse of a shadow store `s` of `D` at `i + c` (`i`
//! the counter of its innermost loop, a counted loop as above in which `s`
//! is the only access of `D`, writing `[lo + c, n + c)`) reads the element
//! without storing zero when, for each element, either the next access to
//! it in the reverse sweep overwrites it, or it is zero already:
//! - every path back from the loop's entry to a block that accesses `D`
//!   (but at a constant index below `lo + c`) goes back through the exit
//!   edge of a counted loop `L'` (from `lo'` by 1 while `i' < n`) whose
//!   every iteration runs a first adjoint's load at `i' + c'`,
//!   `lo' + c' <= lo + c`: the elements below `n + c'` were last read
//!   there, and the reverse of that load overwrites them;
//! - when `c' < c`, the elements from `n + c'` up are read by no load
//!   after `s` (loads of counted loops to `n` at offsets up to `c'` read
//!   below `n + c'`) before a cover as above stores them again: their
//!   adjoint is zero when `s`'s reverse runs. (A Runge-Kutta stage's
//!   `t[i] = y[i] + h * k[i]` is read as `t[i - 1]` only.)
//! After the reverse of a store each element so holds zero or is
//! overwritten before it is read, which the reasoning above relies on.

use crate::cfg::incoming_edges;
use crate::defs::int_const;
use crate::loops::{counted_header, loop_bodies, CountedLoop, LoopInit};
use adc_ir::dom::{blocks_on_cycles, DomTree};
use adc_ir::offset::offset_of;
use adc_ir::{Block, Function, Inst, InstData, Value, ValueDef};
use std::collections::{BTreeMap, BTreeSet};

/// The most constant-index stores a cover may need.
const MAX_CONST_STORES: i64 = 4;

/// What `transpose` may skip in shadow memory (module comment).
#[derive(Default)]
pub(super) struct ShadowFacts {
    /// Shadow loads whose transpose stores its adjoint into the element.
    pub first_adjoints: BTreeSet<Inst>,
    /// Shadow stores whose transpose reads the element without clearing it.
    pub dead_clears: BTreeSet<Inst>,
}

/// The facts of `u`'s differential blocks `dset`; `counted` the counted
/// loops of the differential part.
pub(super) fn shadow_facts(
    u: &Function,
    dset: &BTreeSet<Block>,
    counted: &[CountedLoop],
) -> ShadowFacts {
    let mut facts = ShadowFacts::default();
    let cycles = blocks_on_cycles(u);
    let arrays = local_shadows(u, dset, &cycles);
    if arrays.is_empty() {
        return facts;
    }
    let dom = DomTree::new(u);
    let edges = incoming_edges(u);
    let bodies = loop_bodies(&dom, &edges);
    let ctx = Ctx {
        u,
        counted,
        cycles: &cycles,
        dom: &dom,
        preds: &edges,
        bodies: &bodies,
    };
    for acc in arrays.values() {
        for &(l, b, is_load) in acc.iter().filter(|a| a.2) {
            let found = innermost_counted(counted, &bodies, b)
                .is_some_and(|k| ctx.first_adjoint(acc, l, k));
            if found && is_load {
                facts.first_adjoints.insert(l);
            }
        }
        for &(st, b, _) in acc.iter().filter(|a| !a.2) {
            let dead = innermost_counted(counted, &bodies, b)
                .is_some_and(|k| ctx.dead_clear(acc, &facts.first_adjoints, st, k));
            if dead {
                facts.dead_clears.insert(st);
            }
        }
    }
    facts
}

/// Each array made by a `new` once per call and used only as the array of
/// loads and stores in differential blocks, `len` and frees: its loads and
/// stores (instruction, block, whether a load).
fn local_shadows(
    u: &Function,
    dset: &BTreeSet<Block>,
    cycles: &BTreeSet<Block>,
) -> BTreeMap<Value, Vec<(Inst, Block, bool)>> {
    let mut arrays: BTreeMap<Value, Vec<(Inst, Block, bool)>> = BTreeMap::new();
    for &b in &u.layout {
        for &i in &u.dfg.block(b).insts {
            if matches!(u.dfg.inst(i), InstData::ArrayNew { zeroed: true, .. })
                && !cycles.contains(&b)
            {
                arrays.insert(u.dfg.inst_results(i)[0], Vec::new());
            }
        }
    }
    let mut escaped = BTreeSet::new();
    for &b in &u.layout {
        for &i in &u.dfg.block(b).insts {
            let data = u.dfg.inst(i);
            let (access, is_load) = match data {
                InstData::Load { array, index, .. } => (Some((*array, [*index, *index])), true),
                InstData::Store {
                    array,
                    index,
                    value,
                    ..
                } => (Some((*array, [*index, *value])), false),
                _ => (None, false),
            };
            let allowed = |a: Value| match data {
                InstData::ArrayLen { array }
                | InstData::ArrayFree { array }
                | InstData::DeferFree { array } => *array == a,
                _ => false,
            };
            data.for_each_arg(|a| {
                if arrays.contains_key(&a) && access.is_none() && !allowed(a) {
                    escaped.insert(a);
                }
            });
            if let Some((array, others)) = access {
                if others.contains(&array) || !dset.contains(&b) {
                    escaped.insert(array);
                }
                if let Some(acc) = arrays.get_mut(&array) {
                    acc.push((i, b, is_load));
                }
                for o in others.iter().filter(|o| arrays.contains_key(o)) {
                    escaped.insert(*o);
                }
            }
        }
        // Block parameters passed along edges count as uses too: the
        // terminator's arguments went through `for_each_arg` above.
    }
    arrays.retain(|a, _| !escaped.contains(a));
    arrays
}

/// The counted loop that is the innermost loop around `b`, if any.
fn innermost_counted(
    counted: &[CountedLoop],
    bodies: &[(Block, BTreeSet<Block>)],
    b: Block,
) -> Option<usize> {
    let smallest = bodies
        .iter()
        .filter(|(_, body)| body.contains(&b))
        .min_by_key(|(_, body)| body.len())?;
    counted
        .iter()
        .position(|lp| lp.header == smallest.0 && lp.body == smallest.1)
}

struct Ctx<'a> {
    u: &'a Function,
    counted: &'a [CountedLoop],
    cycles: &'a BTreeSet<Block>,
    dom: &'a DomTree,
    preds: &'a BTreeMap<Block, Vec<crate::cfg::Edge>>,
    bodies: &'a [(Block, BTreeSet<Block>)],
}

impl Ctx<'_> {
    /// The elements `[from, n)` the access `a` (of index `i + c`, `i` the
    /// counter of counted loop `k`, the only access of its array in `k`)
    /// may touch: `from = lo + c`, `n + c` at most `n` when `c <= 0`.
    fn range(&self, acc: &[(Inst, Block, bool)], a: Inst, k: usize) -> Option<(i64, i64, Value)> {
        let u = self.u;
        let lp = &self.counted[k];
        let (InstData::Load { index, .. } | InstData::Store { index, .. }) = *u.dfg.inst(a) else {
            return None;
        };
        let counter = u.dfg.block_params(lp.header)[lp.param];
        let (base, c) = offset_of(u, index);
        let (LoopInit::Const(lo), Some(n)) = (lp.init, self.bound(lp)) else {
            return None;
        };
        if base != counter || lp.step <= 0 {
            return None;
        }
        if acc.iter().any(|&(i, b, _)| i != a && lp.body.contains(&b)) {
            return None;
        }
        Some((lo.checked_add(c)?, c, n))
    }

    /// Whether the load `l` in counted loop `k` is the last read of its
    /// element before a store or the end (module comment).
    fn first_adjoint(&self, acc: &[(Inst, Block, bool)], l: Inst, k: usize) -> bool {
        let Some((from, c, n)) = self.range(acc, l, k) else {
            return false;
        };
        if c > 0 {
            return false;
        }
        let exit = self.counted[k].exit;
        let loads: BTreeSet<Block> = acc.iter().filter(|a| a.2).map(|a| a.1).collect();
        self.counted
            .iter()
            .enumerate()
            .any(|(k2, cover)| k2 != k && self.covers(acc, &loads, exit, cover, from, n))
    }

    /// Whether the store `st` in counted loop `k` is, for each element it
    /// may write, the first access of the differential part, or comes
    /// after a load of `first` (whose transpose overwrites the element the
    /// transpose of `st` would clear): every path back from the loop's
    /// entry to an access that may touch `[from, n + c)` goes back through
    /// the exit edge of a counted loop `L'` whose every iteration runs a
    /// load of `first` at `i' + c'`, from `lo'` by 1 while `i' < n`, with
    /// `c' >= c` and `lo' + c' <= from`.
    fn dead_clear(
        &self,
        acc: &[(Inst, Block, bool)],
        first: &BTreeSet<Inst>,
        st: Inst,
        k: usize,
    ) -> bool {
        let u = self.u;
        let Some((from, c, n)) = self.range(acc, st, k) else {
            return false;
        };
        // Accesses that may touch the range: all but those at a constant
        // index below it.
        let touching: BTreeSet<Block> = acc
            .iter()
            .filter(|&&(i, _, _)| {
                let (InstData::Load { index, .. } | InstData::Store { index, .. }) = *u.dfg.inst(i)
                else {
                    return true;
                };
                int_const(u, index).is_none_or(|j| j >= from)
            })
            .map(|a| a.1)
            .collect();
        let start = self.counted[k].entry;
        self.counted.iter().enumerate().any(|(k2, cover)| {
            let counter = u.dfg.block_params(cover.header)[cover.param];
            let LoopInit::Const(lo) = cover.init else {
                return false;
            };
            // The offset of the cover's load: elements from `n + c2` up are
            // not covered when `c2 < c`.
            let c2 = acc.iter().find_map(|&(i, b, _)| {
                let InstData::Load { index, .. } = *u.dfg.inst(i) else {
                    return None;
                };
                let (base, c2) = offset_of(u, index);
                let each = first.contains(&i)
                    && cover.body.contains(&b)
                    && self.dom.dominates(b, cover.latch)
                    && base == counter
                    && lo.checked_add(c2).is_some_and(|f| f <= from);
                each.then_some(c2)
            });
            let Some(c2) = c2 else {
                return false;
            };
            k2 != k
                && cover.step == 1
                && self.bound(cover) == Some(n)
                && !self.reaches(start, &touching, true, |p, b| {
                    p == cover.header && b == cover.exit
                })
                && (c2 >= c || self.zero_above(acc, k, c2, from, n))
        })
    }

    /// Whether the elements from `n + c2` up that the store of counted loop
    /// `k` may write (from `from`) hold a zero adjoint in the reverse of
    /// that store: no load of the differential part reads them after it
    /// before a counted loop (and constant-index stores) writes them all
    /// again, on every path from the loop's exit. Loads of counted loops
    /// running to `n` at an offset up to `c2` read below `n + c2`.
    fn zero_above(
        &self,
        acc: &[(Inst, Block, bool)],
        k: usize,
        c2: i64,
        from: i64,
        n: Value,
    ) -> bool {
        let below = |l: Inst, b: Block| {
            innermost_counted(self.counted, self.bodies, b)
                .and_then(|k3| self.range(acc, l, k3))
                .is_some_and(|(_, c3, n3)| c3 <= c2 && n3 == n)
        };
        let targets: BTreeSet<Block> = acc
            .iter()
            .filter(|&&(l, b, is_load)| is_load && !below(l, b))
            .map(|a| a.1)
            .collect();
        let exit = self.counted[k].exit;
        targets.is_empty()
            || self
                .counted
                .iter()
                .enumerate()
                .any(|(k3, cover)| k3 != k && self.covers(acc, &targets, exit, cover, from, n))
    }

    /// The bound `n` of `lp`'s test `i < n` (which stays in the loop when
    /// true), when it is the same on every run of the loop: a constant or
    /// a value defined once per call.
    fn bound(&self, lp: &CountedLoop) -> Option<Value> {
        let u = self.u;
        let counter = u.dfg.block_params(lp.header)[lp.param];
        let h = counted_header(u, lp.header, counter)?;
        if !lp.body.contains(&h.then_dest.block) || h.else_dest.block != lp.exit {
            return None;
        }
        let n = h.bound;
        let once = match u.dfg.value_def(n) {
            ValueDef::Param(b, _) => !self.cycles.contains(&b),
            ValueDef::Result(i, _) => u
                .layout
                .iter()
                .find(|b| u.dfg.block(**b).insts.contains(&i))
                .is_some_and(|b| !self.cycles.contains(b)),
            ValueDef::Unused => false,
        };
        (once || int_const(u, n).is_some()).then_some(n)
    }

    /// Whether loop `cover` and constant-index stores before it write
    /// `d[from..n)` on every path from `start` to a block of `loads`.
    fn covers(
        &self,
        acc: &[(Inst, Block, bool)],
        loads: &BTreeSet<Block>,
        start: Block,
        cover: &CountedLoop,
        from: i64,
        n: Value,
    ) -> bool {
        let u = self.u;
        let counter = u.dfg.block_params(cover.header)[cover.param];
        let LoopInit::Const(lo) = cover.init else {
            return false;
        };
        if cover.step != 1 || self.bound(cover) != Some(n) {
            return false;
        }
        if cover.body.iter().any(|b| loads.contains(b)) {
            return false;
        }
        let stores_each_iteration = acc.iter().any(|&(i, b, is_load)| {
            !is_load
                && cover.body.contains(&b)
                && self.dom.dominates(b, cover.latch)
                && matches!(*u.dfg.inst(i), InstData::Store { index, .. } if index == counter)
        });
        if !stores_each_iteration || lo.saturating_sub(from) > MAX_CONST_STORES {
            return false;
        }
        // The edge from the header to the exit, cut: no load is reachable.
        if self.reaches(start, loads, false, |from, to| {
            from == cover.header && to == cover.exit
        }) {
            return false;
        }
        (from..lo).all(|j| {
            acc.iter().any(|&(i, b, is_load)| {
                let InstData::Store { index, .. } = *u.dfg.inst(i) else {
                    return false;
                };
                !is_load
                    && !loads.contains(&b)
                    && int_const(u, index) == Some(j)
                    && !self.reaches(start, loads, false, |_, to| to == b)
            })
        })
    }

    /// Whether a block of `targets` is reachable from `start` (itself
    /// included) along edges (`back`: walking them backwards) without an
    /// edge `cut` accepts (as `cut(from, to)`).
    fn reaches(
        &self,
        start: Block,
        targets: &BTreeSet<Block>,
        back: bool,
        cut: impl Fn(Block, Block) -> bool,
    ) -> bool {
        let mut seen = BTreeSet::from([start]);
        let mut work = vec![start];
        while let Some(b) = work.pop() {
            if targets.contains(&b) {
                return true;
            }
            let edges: Vec<(Block, Block)> = if back {
                let preds = self.preds.get(&b).into_iter().flatten();
                preds.map(|e| (e.from, b)).collect()
            } else {
                self.u.successors(b).into_iter().map(|s| (b, s)).collect()
            };
            for (from, to) in edges {
                let next = if back { from } else { to };
                if !cut(from, to) && seen.insert(next) {
                    work.push(next);
                }
            }
        }
        false
    }
}
