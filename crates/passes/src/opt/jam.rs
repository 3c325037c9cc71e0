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
use crate::rewrite::copy_inst;
use adc_ir::{
    BinaryOp, Block, BlockCall, CmpCond, Constant, Function, Inst, InstData, Type, Value, ValueDef,
};
use std::collections::{BTreeMap, BTreeSet};

/// Instructions in `B` besides its branch.
const MAX_INNER: usize = 24;
/// Instructions in `O`, `B` and `E` together.
const MAX_NEST: usize = 80;
/// Parameters of `B` (its state, twice in `B2`, lives in registers).
const MAX_INNER_PARAMS: usize = 6;

pub fn run(func: &mut Function) -> bool {
    let mut changed = false;
    let blocks: Vec<Block> = func.layout.clone();
    let mut done = BTreeSet::new();
    for latch in blocks {
        if done.contains(&latch) {
            continue;
        }
        if let Some(nest) = plan(func, latch) {
            done.extend(nest.before.iter().chain(&nest.after).copied());
            jam(func, &nest);
            changed = true;
        }
    }
    changed
}

struct Nest {
    /// `O`, first of the blocks before `B` (in reverse postorder, `J` last).
    before: Vec<Block>,
    /// `G` and the index of `j` among its parameters.
    guard: Option<(Block, usize)>,
    inner: Block,
    /// `E`, first of the blocks after `B` (in reverse postorder, `L` last).
    after: Vec<Block>,
    /// `c`'s index among `O`'s parameters; `c + 1`, tested against `bound`.
    counter: usize,
    bound: Value,
}
/// Whether `data` computes without side effects or run-time errors.
fn is_quiet(func: &Function, inst: Inst) -> bool {
    match func.dfg.inst(inst) {
        InstData::Const { .. }
        | InstData::Unary { .. }
        | InstData::Cmp { .. }
        | InstData::Select { .. }
        | InstData::Convert { .. }
        | InstData::Math { .. }
        | InstData::ArrayLen { .. } => true,
        InstData::Load { checked, .. } => !checked,
        InstData::Binary { op, .. } => {
            let int = func
                .dfg
                .inst_results(inst)
                .first()
                .map(|r| func.dfg.value_type(*r))
                == Some(Type::I64);
            !(int && matches!(op, BinaryOp::Div | BinaryOp::Rem | BinaryOp::DivZ))
        }
        _ => false,
    }
}

/// The instructions of `b` but its terminator.
fn body(func: &Function, b: Block) -> &[Inst] {
    let insts = &func.dfg.block(b).insts;
    &insts[..insts.len().saturating_sub(1)]
}

/// `block`'s counter: the parameter `i` that its edge to `to` passes as
/// `i + 1`, tested `i + 1 < bound` on that edge; its index and the bound.
fn counted_edge(func: &Function, block: Block, to: Block, header: Block) -> Option<(usize, Value)> {
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

fn plan(func: &Function, latch: Block) -> Option<Nest> {
    let o = func.successors(latch).first().copied()?;
    let (counter, bound) = counted_edge(func, latch, o, o)?;
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
    let order = loop_blocks(func, o, latch, &preds);
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
    // The outer state but `c` is used only after `B`; nothing of the loop
    // is used outside it.
    let state: BTreeSet<Value> = func
        .dfg
        .block_params(o)
        .iter()
        .enumerate()
        .filter(|(k, _)| *k != counter)
        .map(|(_, v)| *v)
        .collect();
    let after_set: BTreeSet<Block> = after.iter().copied().collect();
    for &blk in &func.layout {
        for &i in &func.dfg.block(blk).insts {
            let mut bad = false;
            func.dfg.inst(i).for_each_arg(|a| {
                let uses_state = state.contains(&a) && !after_set.contains(&blk);
                bad |= uses_state || (!rank.contains_key(&blk) && in_loop(a));
            });
            if bad {
                return None;
            }
        }
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

/// Appends instructions with one span and tag.
struct Emitter {
    span: adc_ir::Span,
    tag: adc_ir::Tag,
}

impl Emitter {
    fn value(&self, func: &mut Function, block: Block, data: InstData, ty: Type) -> Value {
        let inst = func.append_inst(block, data, &[ty], self.span);
        func.set_tag(inst, self.tag);
        func.dfg.inst_results(inst)[0]
    }

    fn int(&self, func: &mut Function, block: Block, c: i64) -> Value {
        let data = InstData::Const {
            value: Constant::I64(c),
        };
        self.value(func, block, data, Type::I64)
    }

    fn branch(&self, func: &mut Function, block: Block, data: InstData) {
        let inst = func.append_inst(block, data, &[], self.span);
        func.set_tag(inst, self.tag);
    }
}

/// New parameters of `block` of the types of `like`'s.
fn params_like(func: &mut Function, block: Block, like: &[Value]) -> Vec<Value> {
    like.iter()
        .map(|v| {
            let t = func.dfg.value_type(*v);
            func.dfg.append_block_param(block, t)
        })
        .collect()
}

fn copy_body(func: &mut Function, from: Block, to: Block, map: &mut BTreeMap<Value, Value>) {
    for inst in body(func, from).to_vec() {
        copy_inst(func, inst, to, map);
    }
}

/// Both iterations' values of `args` (a block's arguments): the first's,
/// then the second's but at `shared` (the inner counter, one for both).
fn lanes(args: &[Value], shared: usize, maps: [&BTreeMap<Value, Value>; 2]) -> Vec<Value> {
    let get = |m: &BTreeMap<Value, Value>, v: &Value| *m.get(v).unwrap_or(v);
    let mut all: Vec<Value> = args.iter().map(|v| get(maps[0], v)).collect();
    let second = args.iter().enumerate().filter(|(k, _)| *k != shared);
    all.extend(second.map(|(_, v)| get(maps[1], v)));
    all
}

/// `like`'s parameters twice over in `to` (but once at `shared`), entered
/// in `maps`: the first iteration's, then the second's.
fn lane_params(
    func: &mut Function,
    to: Block,
    like: Block,
    shared: Option<usize>,
    maps: [&mut BTreeMap<Value, Value>; 2],
) {
    let params = func.dfg.block_params(like).to_vec();
    let a = params_like(func, to, &params);
    let mut b = Vec::new();
    for (k, v) in params.iter().enumerate() {
        b.push(match shared == Some(k) {
            true => a[k],
            false => params_like(func, to, &[*v])[0],
        });
    }
    let [map_a, map_b] = maps;
    map_a.extend(params.iter().copied().zip(a));
    map_b.extend(params.iter().copied().zip(b));
}

/// `from`'s branch for both iterations, appended to `into`: the first's
/// condition; each edge retargeted by `target`, which also gives the
/// position of the inner counter among the new target's parameters (its
/// one argument for both), or `usize::MAX`.
fn lane_branch(
    func: &mut Function,
    em: &Emitter,
    (from, into): (Block, Block),
    target: &dyn Fn(Block) -> (Block, usize),
    maps: [&BTreeMap<Value, Value>; 2],
) {
    let term = func
        .terminator(from)
        .expect("invariant: plan() read its branch");
    let mut data = func.dfg.inst(term).clone();
    if let InstData::Branch { cond, .. } = &mut data {
        *cond = *maps[0].get(cond).unwrap_or(cond);
    }
    for call in data.successors_mut() {
        let (block, shared) = target(call.block);
        call.args = lanes(&call.args, shared, maps);
        call.block = block;
    }
    em.branch(func, into, data);
}

/// Copies of `blocks` (in reverse postorder) for one iteration: parameters
/// and instructions through `map`; edges among them to the copies, the
/// last block's terminator left to the caller. Returns the copies.
fn copy_region(
    func: &mut Function,
    blocks: &[Block],
    map: &mut BTreeMap<Value, Value>,
    entry_params: bool,
) -> Vec<Block> {
    let copies: Vec<Block> = blocks.iter().map(|_| func.dfg.make_block()).collect();
    let to_copy: BTreeMap<Block, Block> =
        blocks.iter().copied().zip(copies.iter().copied()).collect();
    for (k, (&from, &to)) in blocks.iter().zip(&copies).enumerate() {
        if k > 0 || entry_params {
            let params = func.dfg.block_params(from).to_vec();
            let new = params_like(func, to, &params);
            map.extend(params.into_iter().zip(new));
        }
        copy_body(func, from, to, map);
        if k + 1 < blocks.len() {
            let term = func
                .terminator(from)
                .expect("invariant: a block of the loop ends in a branch");
            let mut data = func.dfg.inst(term).clone();
            data.map_args(|a| *map.get(&a).unwrap_or(&a));
            for call in data.successors_mut() {
                call.block = to_copy[&call.block];
            }
            let (span, tag) = (func.span(term), func.tag(term));
            let inst = func.append_inst(to, data, &[], span);
            func.set_tag(inst, tag);
        }
    }
    copies
}

fn jam(func: &mut Function, n: &Nest) {
    let (o, b, e) = (n.before[0], n.inner, n.after[0]);
    let latch = *n.after.last().expect("invariant: plan() found the latch");
    let jump_block = *n.before.last().expect("invariant: plan() found `J`");
    let l_term = func
        .terminator(latch)
        .expect("invariant: plan() read L's branch");
    let em = Emitter {
        span: func.span(l_term),
        tag: func.tag(l_term),
    };
    let o_params = func.dfg.block_params(o).to_vec();
    let (inner_counter, _) = counted_edge(func, b, b, b).expect("invariant: plan() found it");
    let first_new = func.dfg.num_blocks();
    // P: two iterations left, `c < N - 1`, unless `N - 1` wraps.
    let pre = func.dfg.make_block();
    let pre_params = params_like(func, pre, &o_params);
    let one = em.int(func, pre, 1);
    let sub = InstData::Binary {
        op: BinaryOp::Sub,
        args: [n.bound, one],
    };
    let limit = em.value(func, pre, sub, Type::I64);
    let less = |args| InstData::Cmp {
        cond: CmpCond::Lt,
        args,
    };
    let no_wrap = em.value(func, pre, less([limit, n.bound]), Type::BOOL);
    let room = em.value(func, pre, less([pre_params[n.counter], limit]), Type::BOOL);
    let no = InstData::Const {
        value: Constant::Bool(false),
    };
    let no = em.value(func, pre, no, Type::BOOL);
    let select = InstData::Select {
        cond: no_wrap,
        args: [room, no],
    };
    let two_left = em.value(func, pre, select, Type::BOOL);
    let to = |block, args: Vec<Value>| BlockCall { block, args };
    // The blocks before `B`, for `c` then `c + 1`.
    let (mut map_a, mut map_b) = (BTreeMap::new(), BTreeMap::new());
    let before_a = copy_region(func, &n.before, &mut map_a, true);
    let before_b = copy_region(func, &n.before, &mut map_b, true);
    let enter = InstData::Branch {
        cond: two_left,
        then_dest: to(before_a[0], pre_params.clone()),
        else_dest: to(o, pre_params),
    };
    em.branch(func, pre, enter);
    let j_a = *before_a.last().expect("invariant: `J` is copied");
    let one = em.int(func, j_a, 1);
    let add = InstData::Binary {
        op: BinaryOp::Add,
        args: [map_a[&o_params[n.counter]], one],
    };
    let counter_b = em.value(func, j_a, add, Type::I64);
    let mut into_b: Vec<Value> = o_params.iter().map(|v| map_a[v]).collect();
    into_b[n.counter] = counter_b;
    em.branch(
        func,
        j_a,
        InstData::Jump {
            dest: to(before_b[0], into_b),
        },
    );
    // G2 and B2: `G` and `B` for both, one counter.
    let (guard, guard_counter) = n.guard.unwrap_or((b, inner_counter));
    let (g2, b2) = (func.dfg.make_block(), func.dfg.make_block());
    let after_a0 = func.dfg.make_block();
    let target = |x: Block| match x {
        _ if x == b => (b2, inner_counter),
        _ if x == e => (after_a0, usize::MAX),
        _ => (g2, guard_counter),
    };
    let j_b = *before_b.last().expect("invariant: `J` is copied");
    lane_branch(func, &em, (jump_block, j_b), &target, [&map_a, &map_b]);
    if n.guard.is_some() {
        lane_params(
            func,
            g2,
            guard,
            Some(guard_counter),
            [&mut map_a, &mut map_b],
        );
        copy_body(func, guard, g2, &mut map_a);
        copy_body(func, guard, g2, &mut map_b);
        lane_branch(func, &em, (guard, g2), &target, [&map_a, &map_b]);
    }
    lane_params(func, b2, b, Some(inner_counter), [&mut map_a, &mut map_b]);
    copy_body(func, b, b2, &mut map_a);
    copy_body(func, b, b2, &mut map_b);
    lane_branch(func, &em, (b, b2), &target, [&map_a, &map_b]);
    // The blocks after `B` for `c`: `E`'s copy takes both iterations'
    // arguments; its `L` enters the copy for `c + 1`, passing the second
    // iteration's and, for the outer state, the first's new one.
    lane_params(func, after_a0, e, None, [&mut map_a, &mut map_b]);
    let e_b_args: Vec<Value> = func.dfg.block_params(e).iter().map(|v| map_b[v]).collect();
    copy_body(func, e, after_a0, &mut map_a);
    let mut after_a = vec![after_a0];
    if n.after.len() > 1 {
        // (`E`'s own branch, to the next copies.)
        let rest = copy_region(func, &n.after[1..], &mut map_a, true);
        let term = func.terminator(e).expect("invariant: `E` ends in a branch");
        let mut data = func.dfg.inst(term).clone();
        data.map_args(|a| *map_a.get(&a).unwrap_or(&a));
        for call in data.successors_mut() {
            let k = n
                .after
                .iter()
                .position(|x| *x == call.block)
                .expect("invariant: `E` leads on in the loop");
            call.block = rest[k - 1];
        }
        em.branch(func, after_a0, data);
        after_a.extend(rest);
    }
    let back = func
        .dfg
        .inst(l_term)
        .successors()
        .into_iter()
        .find(|c| c.block == o)
        .expect("invariant: plan() found the back edge")
        .args
        .clone();
    for (k, v) in back.iter().enumerate() {
        map_b.insert(o_params[k], *map_a.get(v).unwrap_or(v));
    }
    let after_b = copy_region(func, &n.after, &mut map_b, true);
    let l_a = *after_a.last().expect("invariant: `L` is copied");
    em.branch(
        func,
        l_a,
        InstData::Jump {
            dest: to(after_b[0], e_b_args),
        },
    );
    let l_b = *after_b.last().expect("invariant: `L` is copied");
    let mut last = func.dfg.inst(l_term).clone();
    last.map_args(|a| *map_b.get(&a).unwrap_or(&a));
    em.branch(func, l_b, last);
    // Layout: the new blocks before `O`; every edge into `O` but `P`'s
    // (from outside, `L`'s and the second `L`'s) enters `P`.
    let pos = func
        .layout
        .iter()
        .position(|x| *x == o)
        .expect("invariant: the loop is laid out");
    let mut new: Vec<Block> = vec![pre];
    new.extend(&before_a);
    new.extend(&before_b);
    if n.guard.is_some() {
        new.push(g2);
    }
    new.push(b2);
    new.extend(&after_a);
    new.extend(&after_b);
    debug_assert!(new.iter().all(|x| x.index() >= first_new));
    func.layout.splice(pos..pos, new);
    for blk in func.layout.clone() {
        let Some(t) = func.terminator(blk).filter(|_| blk != pre) else {
            continue;
        };
        for call in func.dfg.inst_mut(t).successors_mut() {
            if call.block == o {
                call.block = pre;
            }
        }
    }
}
