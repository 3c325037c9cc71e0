//! `jam`: unroll-and-jam by two of a loop nest whose inner loop carries a
//! chain of dependent operations. Two iterations of the outer loop run
//! their inner loops side by side in one loop, so the processor overlaps
//! the two chains (llsq's `r -= x[j] * p; p *= t`, a product and a
//! difference waiting on the last, twice as many per step). Every value
//! is computed by the same operations on the same operands as before, so
//! results are bit-identical; only independent work is interleaved.
//!
//! Pattern (after `rotate`): an outer loop, header `O`, latch `L` ending
//! in `br (c + 1 < N), O(.., c + 1, ..), X(..)` (`c` a parameter of `O`,
//! `N` defined outside the loop), whose only inner cycle is a one-block
//! loop `B`: `B` loops on itself while `j + 1 < M`, else goes to `E`. The
//! blocks before it (`O` to the block `J` that jumps into it, perhaps
//! through `rotate`'s test `G`, one comparison of the counter `j` that
//! goes to `B` or `E`) and those after it (`E` to `L`) are acyclic and
//! leave the loop only at `L`. `j` starts at a value and `M` is a value,
//! both defined outside the loop, so every outer iteration runs `B`
//! equally often.
//!
//! The loop's instructions are arithmetic, comparisons, selects,
//! conversions, math functions, lengths and unchecked loads: nothing
//! writes memory, calls, or fails at run time (so running the second
//! iteration's blocks before `J` and `B` before the first's blocks after
//! `B` is not observable). The outer state other than `c` is used only
//! after `B` (a reduction such as a sum or a running minimum, updated in
//! order); no value of the loop is used outside it but through `X`'s
//! arguments. `B` has at most [`MAX_INNER`] instructions, the loop
//! [`MAX_NEST`].
//!
//! Then every edge into `O` (from outside and from `L`) goes to a new
//! block `P`, which goes to the jammed loop when two iterations are left
//! (`c < N - 1`, unless `N - 1` wraps) and to `O` (one iteration, as
//! before) otherwise. The jammed loop runs the blocks from `O` to `J`
//! for `c`, then for `c + 1` (`c`'s `J` enters the second copy of `O`),
//! then `G` and `B` for both (one counter `j`, the other parameters
//! twice), then the blocks from `E` to `L` for `c` (whose test is known
//! to hold: its `L` enters the second copy of `E`, which takes the first
//! one's new state) and for `c + 1`, whose `L` branches back to `P` or
//! out. The original blocks stay, for the last iteration when their
//! number is odd.
//!
//! Assumes: verified input, before `unroll-inner` (which would make `B`
//! several blocks). Guarantees: verified output; every value the nest
//! computed is computed by the same instruction on the same operands.

use crate::cfg::branch_test;
use crate::defs::int_const;
use adc_ir::{BinaryOp, Block, CmpCond, Function, Inst, InstData, Type, Value, ValueDef};
use std::collections::{BTreeMap, BTreeSet};

/// Instructions in `B` besides its branch.
const MAX_INNER: usize = 24;
/// Instructions in `O`, `B` and `E` together.
const MAX_NEST: usize = 80;
/// Parameters of `B` (its state, twice in `B2`, lives in registers).
const MAX_INNER_PARAMS: usize = 6;

mod copy;

use copy::jam;

pub fn run(func: &mut Function) -> bool {
    let mut changed = false;
    let blocks: Vec<Block> = func.layout.clone();
    let mut done = BTreeSet::new();
    // Built on the first counted latch, again after each jam.
    let mut cfg = None;
    for latch in blocks {
        if done.contains(&latch) {
            continue;
        }
        if let Some(nest) = plan(func, latch, &mut cfg) {
            done.extend(nest.before.iter().chain(&nest.after).copied());
            jam(func, &nest);
            cfg = None;
            changed = true;
        }
    }
    changed
}

/// The predecessors of every block and the block of every instruction,
/// which `plan` reads (the same for every latch until a jam).
struct Cfg {
    preds: BTreeMap<Block, BTreeSet<Block>>,
    block_of: BTreeMap<Inst, Block>,
}

impl Cfg {
    fn new(func: &Function) -> Cfg {
        let mut preds: BTreeMap<Block, BTreeSet<Block>> = BTreeMap::new();
        let mut block_of = BTreeMap::new();
        for &blk in &func.layout {
            for s in func.successors(blk) {
                preds.entry(s).or_default().insert(blk);
            }
            for &i in &func.dfg.block(blk).insts {
                block_of.insert(i, blk);
            }
        }
        Cfg { preds, block_of }
    }
}

pub(super) struct Nest {
    /// `O`, first of the blocks before `B` (in reverse postorder, `J` last).
    pub before: Vec<Block>,
    /// `G` and the index of `j` among its parameters.
    pub guard: Option<(Block, usize)>,

    pub inner: Block,
    /// `E`, first of the blocks after `B` (in reverse postorder, `L` last).
    pub after: Vec<Block>,
    /// `c`'s index among `O`'s parameters; `c + 1`, tested against `bound`.
    pub counter: usize,
    pub bound: Value,
}

/// Whether `inst` computes without side effects or run-time errors: a
/// pure instruction, an unchecked load, or a float division (`is_pure`
/// leaves out every division, for the integer ones' division by zero).
fn is_quiet(func: &Function, inst: Inst) -> bool {
    let data = func.dfg.inst(inst);
    match data {
        InstData::Load { checked, .. } => !checked,
        InstData::Binary {
            op: BinaryOp::Div | BinaryOp::Rem,
            ..
        } => {
            let result = func.dfg.inst_results(inst).first();
            result.is_some_and(|r| func.dfg.value_type(*r) != Type::I64)
        }
        _ => data.is_pure(),
    }
}

/// The instructions of `b` but its terminator.
pub(super) fn body(func: &Function, b: Block) -> &[Inst] {
    let insts = &func.dfg.block(b).insts;
    &insts[..insts.len().saturating_sub(1)]
}

/// `block`'s counter: the parameter `i` that its edge to `to` passes as
/// `i + 1`, tested `i + 1 < bound` on that edge; its index and the bound.
pub(super) fn counted_edge(
    func: &Function,
    block: Block,
    to: Block,
    header: Block,
) -> Option<(usize, Value)> {
    let t = branch_test(func, block)?;
    let [next, bound] = t.args;
    if t.cond != CmpCond::Lt || t.then_dest.block != to || t.else_dest.block == to {
        return None;
    }
    let ValueDef::Result(increment, _) = func.dfg.value_def(next) else {
        return None;
    };
    let InstData::Binary {
        op: BinaryOp::Add,
        args: [i, one],
    } = func.dfg.inst(increment)
    else {
        return None;
    };
    let ValueDef::Param(pb, counter) = func.dfg.value_def(*i) else {
        return None;
    };
    let counter = counter as usize;
    (pb == header
        && int_const(func, *one) == Some(1)
        && t.then_dest.args.get(counter) == Some(&next))
    .then_some((counter, bound))
}

/// `rotate`'s test `G` before the inner loop `b`, if `g` is one: one
/// comparison and a branch into `b` or `e`, on `j < M` where `j` is the
/// parameter `G` passes `b` as its counter (its index returned).
fn guard_of(func: &Function, g: Block, b: Block, inner_counter: usize) -> Option<(usize, Block)> {
    let t = branch_test(func, g)?;
    let into_b = [t.then_dest, t.else_dest]
        .into_iter()
        .find(|c| c.block == b)?;
    let other = [t.then_dest, t.else_dest]
        .into_iter()
        .find(|c| c.block != b)?;
    let ValueDef::Param(pb, k) = func.dfg.value_def(*into_b.args.get(inner_counter)?) else {
        return None;
    };
    (pb == g && body(func, g).len() == 1).then_some((k as usize, other.block))
}

/// The outer loop with header `o` and latch `latch`: its blocks, `o`
/// first, in reverse postorder of the loop without its back edge.
fn loop_blocks(
    func: &Function,
    o: Block,
    latch: Block,
    preds: &BTreeMap<Block, BTreeSet<Block>>,
) -> Vec<Block> {
    let mut body = BTreeSet::from([o, latch]);
    let mut work = vec![latch];
    while let Some(x) = work.pop() {
        if x == o {
            continue;
        }
        for p in preds.get(&x).into_iter().flatten() {
            if body.insert(*p) {
                work.push(*p);
            }
        }
    }
    // Reverse postorder from `o` over the loop's edges but the back edge.
    let (mut order, mut seen) = (Vec::new(), BTreeSet::new());
    let mut stack = vec![(o, false)];
    while let Some((x, finished)) = stack.pop() {
        if finished {
            order.push(x);
            continue;
        }
        if !seen.insert(x) {
            continue;
        }
        stack.push((x, true));
        for s in func.successors(x) {
            if body.contains(&s) && s != o && !seen.contains(&s) {
                stack.push((s, false));
            }
        }
    }
    order.reverse();
    order
}

fn plan(func: &Function, latch: Block, cfg: &mut Option<Cfg>) -> Option<Nest> {
    let o = func.successors(latch).first().copied()?;
    let (counter, bound) = counted_edge(func, latch, o, o)?;
    let Cfg { preds, block_of } = &*cfg.get_or_insert_with(|| Cfg::new(func));
    let order = loop_blocks(func, o, latch, preds);
    let rank: BTreeMap<Block, usize> = order.iter().enumerate().map(|(k, b)| (*b, k)).collect();
    let in_loop = |v: Value| {
        let d = match func.dfg.value_def(v) {
            ValueDef::Param(b, _) => Some(b),
            ValueDef::Result(i, _) => block_of.get(&i).copied(),
            ValueDef::Unused => None,
        };
        d.is_some_and(|d| rank.contains_key(&d))
    };
    // One inner cycle, `B` on itself; every edge of the loop but that and
    // the back edge goes forward; only the latch leaves.
    let mut inner = None;
    for &x in &order {
        for s in func.successors(x) {
            match rank.get(&s) {
                Some(_) if s == x && inner.is_none() => inner = Some(x),
                Some(&r) if r > rank[&x] => {}
                Some(_) if x == latch && s == o => {}
                None if x == latch => {}
                _ => return None,
            }
        }
    }
    let b = inner?;
    let (inner_counter, inner_bound) = counted_edge(func, b, b, b)?;
    let e = func.successors(b).into_iter().find(|x| *x != b)?;
    let head = preds.get(&b)?.iter().copied().find(|x| *x != b)?;
    let (guard, jump_block) = match guard_of(func, head, b, inner_counter) {
        Some((k, to_e)) if to_e == e => (Some((head, k)), preds.get(&head)?.first().copied()?),
        Some(_) => return None,
        None => (None, head),
    };
    // `J` jumps to `G` or `B`, or branches to `B` or `E` on a condition
    // from outside the loop (the same for both iterations).
    let inner_init = match func.dfg.inst(func.terminator(jump_block)?) {
        InstData::Jump { dest } => *dest.args.get(guard.map_or(inner_counter, |(_, k)| k))?,
        InstData::Branch {
            cond,
            then_dest,
            else_dest,
        } if guard.is_none() && !in_loop(*cond) => {
            let into_b = [then_dest, else_dest].into_iter().find(|c| c.block == b)?;
            if ![then_dest.block, else_dest.block].contains(&e) {
                return None;
            }
            *into_b.args.get(inner_counter)?
        }
        _ => return None,
    };
    let single = |x: Block, want: &[Block]| {
        let want: BTreeSet<Block> = want.iter().copied().collect();
        preds.get(&x) == Some(&want)
    };
    let branches = matches!(
        func.dfg.inst(func.terminator(jump_block)?),
        InstData::Branch { .. }
    );
    let into_e = match (guard, branches) {
        (Some((g, _)), _) => vec![g, b],
        (None, true) => vec![jump_block, b],
        (None, false) => vec![b],
    };
    if !single(b, &[head, b])
        || guard.is_some_and(|(g, _)| !single(g, &[jump_block]))
        || !single(e, &into_e)
    {
        return None;
    }
    // Before `B`: the blocks ranked before `G` (or `B`), which must all
    // lead to `J`; after it: from `E`.
    let first_inner = guard.map_or(b, |(g, _)| g);
    let (split, e_rank) = (*rank.get(&first_inner)?, *rank.get(&e)?);
    let before: Vec<Block> = order[..split].to_vec();
    let after: Vec<Block> = order[e_rank..].to_vec();
    let middle = guard.map_or(1, |_| 2);
    let middle_blocks: Vec<Block> = guard.map_or(vec![b], |(g, _)| vec![g, b]);
    if before.last() != Some(&jump_block)
        || e_rank != split + middle
        || order[split..e_rank] != middle_blocks[..]
        || after.first() != Some(&e)
        || after.last() != Some(&latch)
        || before.iter().any(|x| {
            let leaves = |s: &Block| rank.get(s).map_or(true, |r| *r > split);
            func.successors(*x)
                .iter()
                .any(|s| leaves(s) && !(*x == jump_block && *s == e))
        })
    {
        return None;
    }
    if in_loop(bound) || in_loop(inner_bound) || in_loop(inner_init) {
        return None;
    }
    // The guard's test reads values from outside and its counter only, so
    // it decides alike for both iterations.
    if let Some((g, k)) = guard {
        let test = branch_test(func, g)?;
        let counter = func.dfg.block_params(g)[k];
        if test.args.iter().any(|a| *a != counter && in_loop(*a)) {
            return None;
        }
    }
    let size: usize = order.iter().map(|x| body(func, *x).len()).sum();
    if body(func, b).len() > MAX_INNER
        || size > MAX_NEST
        || func.dfg.block_params(b).len() > MAX_INNER_PARAMS
        || !order
            .iter()
            .all(|x| body(func, *x).iter().all(|i| is_quiet(func, *i)))
    {
        return None;
    }
    let loop_set: BTreeSet<Block> = order.iter().copied().collect();
    if !contained(func, o, counter, &after, &loop_set, &in_loop) {
        return None;
    }
    Some(Nest {
        before,
        guard,

        inner: b,
        after,
        counter,
        bound,
    })
}

/// Whether the outer state but `c` (the parameters of `o` but its
/// `counter`th) is used only in `after`, and no value of the loop's blocks
/// is used outside them.
fn contained(
    func: &Function,
    o: Block,

    counter: usize,

    after: &[Block],
    loop_set: &BTreeSet<Block>,
    in_loop: &dyn Fn(Value) -> bool,
) -> bool {
    let state: BTreeSet<Value> = func
        .dfg
        .block_params(o)
        .iter()
        .enumerate()
        .filter(|(k, _)| *k != counter)
        .map(|(_, v)| *v)
        .collect();
    func.layout.iter().all(|blk| {
        func.dfg.block(*blk).insts.iter().all(|&i| {
            let mut ok = true;
            func.dfg.inst(i).for_each_arg(|a| {
                let uses_state = state.contains(&a) && !after.contains(blk);
                ok &= !uses_state && (loop_set.contains(blk) || !in_loop(a));
            });
            ok
        })
    })
}
