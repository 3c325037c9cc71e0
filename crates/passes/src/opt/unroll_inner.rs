//! Unrolling by four of small one-block loops with a run-time trip count:
//! the inner loops of `rotate`'s do-while form (a dot product, a squared
//! distance) and the reverse sweeps' loops counting down. Four iterations
//! share one test and one branch, and their element addresses become
//! constant offsets from one counter.
//!
//! Pattern: a block `B` that branches to itself or to an exit `X`, on a
//! test of its counter `i` (a parameter of `B`, which the back edge passes
//! `n`) against a bound defined outside `B`: counting up, `n = add i, 1`
//! and `br (cmp lt n, N), B(..), X(..)` (or `cmp ne`); counting down,
//! `n = sub i, 1` and `br (cmp eq n, L), X(..), B(..)` (or `cmp ne`, the
//! loop on the true edge). `B` has at most `MAX_INSTS`
//! instructions besides its branch, of the kinds `is_plain` accepts (no
//! calls or memory management; tape pushes and pops keep their order), and
//! no value `B` defines is
//! used outside `B`.
//!
//! Then every edge into `B` from outside goes to a new block `P`, which
//! enters a new block `U` when at least four iterations remain (`i < N -
//! 3`, or `L + 3 < i`, when that bound does not wrap) and `B` otherwise.
//! `U` holds four copies of `B`'s instructions, copy `k` computing its
//! counter as `i + k` (or `i + -k`); it loops while four more remain, else
//! goes to a new block `C`, `B`'s branch as the last copy would take it:
//! into `B` for the remaining iterations (fewer than four) or out. `B`
//! stays as it was, for the remainder. When the exit edge's arguments are
//! values from outside `B` or values its back edge passes (the loop's
//! state), `C` takes the state as parameters and tests it (`state_test`),
//! and `P`'s edge into `B` goes through `C` too.
//!
//! Assumes: verified input. Guarantees: verified output; every path runs
//! the same instructions in the same order (each copy in `U` runs exactly
//! when the original iteration would: the test at the top of `U` covers
//! the three tests it skips).

use crate::cfg::{branch_test, BranchTest};
use crate::defs::int_const;
use crate::rewrite::copy_inst;
use adc_ir::{
    BinaryOp, Block, BlockCall, CmpCond, Constant, Function, InstData, Type, Value, ValueDef,
};
use std::collections::{BTreeMap, BTreeSet};

/// Instructions in `B` besides its branch.
const MAX_INSTS: usize = 24;
/// Copies of the body in `U`.
const FACTOR: i64 = 4;

pub fn run(func: &mut Function) -> bool {
    let mut changed = false;
    let (escaping, mut preds) = scan(func);
    // The blocks `unroll` adds are not one-block loops of this shape (`U`
    // tests `N - 3`, not `N`), so one scan of the original blocks is all.
    let blocks: Vec<Block> = func.layout.clone();
    for b in blocks {
        if escaping.contains(&b) {
            continue;
        }
        if let Some(p) = plan(func, b) {
            unroll(func, &p, &mut preds);
            changed = true;
        }
    }
    changed
}

/// One walk of the function (a walk per loop made 3,000 loops take
/// seconds): the blocks some of whose values are used in another block,
/// and each block's predecessors.
fn scan(func: &Function) -> (BTreeSet<Block>, BTreeMap<Block, BTreeSet<Block>>) {
    let mut block_of = vec![None; func.dfg.num_insts()];
    for &b in &func.layout {
        for &i in &func.dfg.block(b).insts {
            block_of[i.index()] = Some(b);
        }
    }
    let mut escaping = BTreeSet::new();
    let mut preds: BTreeMap<Block, BTreeSet<Block>> = BTreeMap::new();
    for &b in &func.layout {
        for &i in &func.dfg.block(b).insts {
            func.dfg.inst(i).for_each_arg(|a| {
                let def = match func.dfg.value_def(a) {
                    ValueDef::Param(db, _) => Some(db),
                    ValueDef::Result(di, _) => block_of[di.index()],
                    ValueDef::Unused => None,
                };
                if let Some(db) = def.filter(|db| *db != b) {
                    escaping.insert(db);
                }
            });
        }
        for s in func.successors(b) {
            preds.entry(s).or_default().insert(b);
        }
    }
    (escaping, preds)
}

struct Plan {
    body: Block,
    /// The counter's index among `body`'s parameters.
    counter: usize,
    /// `n = i + 1` (or `i - 1`), and its test against `bound`.
    increment: adc_ir::Inst,
    down: bool,
    /// The test's condition.
    test: CmpCond,
    bound: Value,
}

/// Whether `inst` may be copied into the unrolled block: arithmetic,
/// element loads and stores.
fn is_plain(data: &InstData) -> bool {
    matches!(
        data,
        InstData::Const { .. }
            | InstData::Unary { .. }
            | InstData::Binary { .. }
            | InstData::Cmp { .. }
            | InstData::Select { .. }
            | InstData::Convert { .. }
            | InstData::Math { .. }
            | InstData::ArrayLen { .. }
            | InstData::Load { .. }
            | InstData::Store { .. }
            | InstData::TapePop { .. }
            | InstData::TapePush { .. }
    )
}

fn defined_in(func: &Function, v: Value, b: Block, insts: &BTreeSet<adc_ir::Inst>) -> bool {
    match func.dfg.value_def(v) {
        ValueDef::Param(pb, _) => pb == b,
        ValueDef::Result(i, _) => insts.contains(&i),
        ValueDef::Unused => false,
    }
}

fn plan(func: &Function, b: Block) -> Option<Plan> {
    let insts = &func.dfg.block(b).insts;
    let (_, body) = insts.split_last()?;
    if body.len() > MAX_INSTS || !body.iter().all(|i| is_plain(func.dfg.inst(*i))) {
        return None;
    }
    let BranchTest {
        cmp: test,
        cond: test_cond,
        args: [next, bound],
        then_dest,
        else_dest,
    } = branch_test(func, b)?;
    let own: BTreeSet<adc_ir::Inst> = body.iter().copied().collect();
    let ValueDef::Result(increment, _) = func.dfg.value_def(next) else {
        return None;
    };
    let InstData::Binary { op, args: [i, one] } = func.dfg.inst(increment) else {
        return None;
    };
    // On with `n < N` or `n != N` counting up, off at `n == L` or on with
    // `n != L` counting down (a `!=` loop entered past its bound wraps
    // around: `P` leaves it to `B`).
    let (down, back) = match (op, test_cond) {
        (BinaryOp::Add, CmpCond::Lt | CmpCond::Ne) if else_dest.block != b => (false, then_dest),
        (BinaryOp::Sub, CmpCond::Ne) if else_dest.block != b => (true, then_dest),
        (BinaryOp::Sub, CmpCond::Eq) if then_dest.block != b => (true, else_dest),
        _ => return None,
    };
    if back.block != b
        || !own.contains(&test)
        || !own.contains(&increment)
        || defined_in(func, bound, b, &own)
        || int_const(func, *one) != Some(1)
    {
        return None;
    }
    let ValueDef::Param(pb, counter) = func.dfg.value_def(*i) else {
        return None;
    };
    let counter = counter as usize;
    if pb != b || back.args.get(counter) != Some(&next) {
        return None;
    }
    // (No value of the loop is used past it but through its exit edge:
    // `run` skips the blocks `scan` found.)
    Some(Plan {
        body: b,
        counter,
        increment,
        down,
        test: test_cond,
        bound,
    })
}

/// Appends instructions with the span and tag of the loop's branch.
struct Emitter {
    span: adc_ir::Span,
    tag: adc_ir::Tag,
}

impl Emitter {
    fn inst(
        &self,
        func: &mut Function,
        block: Block,
        data: InstData,
        ty: &[Type],
    ) -> Option<Value> {
        let inst = func.append_inst(block, data, ty, self.span);
        func.set_tag(inst, self.tag);
        func.dfg.inst_results(inst).first().copied()
    }

    /// An instruction with one result.
    fn value(&self, func: &mut Function, block: Block, data: InstData, ty: Type) -> Value {
        self.inst(func, block, data, &[ty])
            .expect("invariant: the instruction has one result")
    }

    fn int(&self, func: &mut Function, block: Block, c: i64) -> Value {
        let value = Constant::I64(c);
        self.value(func, block, InstData::Const { value }, Type::I64)
    }

    fn bool(&self, func: &mut Function, block: Block, b: bool) -> Value {
        let value = Constant::Bool(b);
        self.value(func, block, InstData::Const { value }, Type::BOOL)
    }

    fn binary(&self, func: &mut Function, block: Block, op: BinaryOp, args: [Value; 2]) -> Value {
        self.value(func, block, InstData::Binary { op, args }, Type::I64)
    }

    fn less(&self, func: &mut Function, block: Block, args: [Value; 2]) -> Value {
        let cond = CmpCond::Lt;
        self.value(func, block, InstData::Cmp { cond, args }, Type::BOOL)
    }

    /// `counter` has at least four iterations left before `limit`.
    fn room(
        &self,
        func: &mut Function,
        block: Block,
        down: bool,
        counter: Value,
        limit: Value,
    ) -> Value {
        match down {
            false => self.less(func, block, [counter, limit]),
            true => self.less(func, block, [limit, counter]),
        }
    }
}

fn unroll(func: &mut Function, p: &Plan, preds: &mut BTreeMap<Block, BTreeSet<Block>>) {
    let b = p.body;
    let term = func
        .terminator(b)
        .expect("invariant: plan() found the block's branch");
    let e = Emitter {
        span: func.span(term),
        tag: func.tag(term),
    };
    let params = func.dfg.block_params(b).to_vec();
    let types: Vec<Type> = params.iter().map(|v| func.dfg.value_type(*v)).collect();
    let (pre, unrolled, rest) = (
        func.dfg.make_block(),
        func.dfg.make_block(),
        func.dfg.make_block(),
    );
    let pos = func
        .layout
        .iter()
        .position(|x| *x == b)
        .expect("invariant: the loop is laid out");
    func.layout.splice(pos..pos, [pre, unrolled, rest]);
    // P: `i < N - 3` (or `L + 3 < i`), unless that limit wraps.
    let pre_params: Vec<Value> = types
        .iter()
        .map(|t| func.dfg.append_block_param(pre, *t))
        .collect();
    let three = e.int(func, pre, FACTOR - 1);
    let (op, sign) = match p.down {
        false => (BinaryOp::Sub, 1),
        true => (BinaryOp::Add, -1),
    };
    let limit = e.binary(func, pre, op, [p.bound, three]);
    let no_wrap = match p.down {
        false => e.less(func, pre, [limit, p.bound]),
        true => e.less(func, pre, [p.bound, limit]),
    };
    let room = e.room(func, pre, p.down, pre_params[p.counter], limit);
    let no = e.bool(func, pre, false);
    // (For `C`'s `first`, when `state_test` takes `P`'s other edge; dead
    // otherwise.)
    let yes = e.bool(func, pre, true);
    let select = InstData::Select {
        cond: no_wrap,
        args: [room, no],
    };
    let enter = e.value(func, pre, select, Type::BOOL);
    let to = |block, args| BlockCall { block, args };
    let branch = InstData::Branch {
        cond: enter,
        then_dest: to(unrolled, pre_params.clone()),
        else_dest: to(b, pre_params),
    };
    e.inst(func, pre, branch, &[]);
    // U: four copies, copy k's counter `i + k` (or `i + -k`).
    let mut current: Vec<Value> = types
        .iter()
        .map(|t| func.dfg.append_block_param(unrolled, *t))
        .collect();
    let start = current[p.counter];
    let body: Vec<adc_ir::Inst> = {
        let insts = &func.dfg.block(b).insts;
        insts[..insts.len() - 1].to_vec()
    };
    let branch = func.dfg.inst(term).clone();
    let mut last = branch.clone();
    for k in 1..=FACTOR {
        let mut map: BTreeMap<Value, Value> = params
            .iter()
            .copied()
            .zip(current.iter().copied())
            .collect();
        for &inst in &body {
            if inst == p.increment {
                // An `add` of a constant, which codegen folds into the
                // element addresses that use it.
                let kv = e.int(func, unrolled, sign * k);
                let n = e.binary(func, unrolled, BinaryOp::Add, [start, kv]);
                map.insert(func.dfg.inst_results(inst)[0], n);
            } else {
                copy_inst(func, inst, unrolled, &mut map);
            }
        }
        last = branch.clone();
        last.map_args(|a| *map.get(&a).unwrap_or(&a));
        current = last
            .successors()
            .into_iter()
            .find(|c| c.block == b)
            .expect("invariant: plan() found the back edge")
            .args
            .clone();
    }
    let again = e.room(func, unrolled, p.down, current[p.counter], limit);
    let exit = exit_in_state(func, &last, b, unrolled, &current);
    let exit_edge = match exit {
        Some(_) => to(rest, [&current[..], &[no]].concat()),
        None => to(rest, vec![]),
    };
    let branch = InstData::Branch {
        cond: again,
        then_dest: to(unrolled, current),
        else_dest: exit_edge,
    };
    e.inst(func, unrolled, branch, &[]);
    match exit {
        Some(exit) => state_test(func, &e, p, [pre, rest], yes, &types, &last, &exit),
        // C: the last copy's branch, into `B` for the rest or out.
        None => {
            e.inst(func, rest, last, &[]);
        }
    }
    // Every edge into `B` from outside now enters `P`; `C` is a new
    // predecessor of the exit.
    let outside: Vec<Block> = preds
        .get(&b)
        .map(|s| s.iter().copied().filter(|o| *o != b).collect())
        .unwrap_or_default();
    for o in outside {
        let Some(t) = func.terminator(o) else {
            continue;
        };
        for call in func.dfg.inst_mut(t).successors_mut() {
            if call.block == b {
                call.block = pre;
            }
        }
    }
    for s in func.successors(rest) {
        preds.entry(s).or_default().insert(rest);
    }
    let b_preds = func.successors(pre).contains(&b).then_some(pre);
    preds.insert(b, b_preds.into_iter().chain([rest, b]).collect());
}

/// An argument of the loop's exit edge, in terms of the loop's state.
#[derive(Clone, Copy)]
enum ExitArg {
    /// A value defined outside `U`.
    Outside(Value),
    /// The state's `j`th value: what `U`'s back edge passes as `B`'s `j`th
    /// parameter.
    State(usize),
}

/// The last copy's exit arguments as values defined outside `U` or
/// values of the state `U` passes on (`current`), when each of them is one.
fn exit_in_state(
    func: &Function,
    last: &InstData,
    b: Block,
    unrolled: Block,
    current: &[Value],
) -> Option<Vec<ExitArg>> {
    let exit = last.successors().into_iter().find(|c| c.block != b)?;
    let own: BTreeSet<adc_ir::Inst> = func.dfg.block(unrolled).insts.iter().copied().collect();
    exit.args
        .iter()
        .map(|&a| match current.iter().position(|c| *c == a) {
            Some(j) => Some(ExitArg::State(j)),
            None => (!defined_in(func, a, unrolled, &own)).then_some(ExitArg::Outside(a)),
        })
        .collect()
}

/// `C` as a test of the state that `U` (four iterations done) or `P` (none
/// done) hands it, so that the state is a parameter with two incoming
/// values: Cranelift keeps it a phi, where a parameter with one incoming
/// edge would be folded and the counter's `i + 4` recomputed in `C`,
/// keeping `i` and `i + 4` both live across `U`'s branch (a move and a
/// jump more on every back edge). `C`'s parameters are `B`'s and `first`:
/// from `P`, its parameters and `true` (`B` runs at least once, as it did
/// when `P` entered it directly); from `U`, the state and `false`. `C`
/// enters `B` when `first` holds or `B`'s test of the state's counter
/// says so, else leaves with the last copy's exit arguments.
fn state_test(
    func: &mut Function,
    e: &Emitter,
    p: &Plan,
    [pre, rest]: [Block; 2],
    yes: Value,
    types: &[Type],
    last: &InstData,
    exit: &[ExitArg],
) {
    let state: Vec<Value> = types
        .iter()
        .map(|t| func.dfg.append_block_param(rest, *t))
        .collect();
    let first = func.dfg.append_block_param(rest, Type::BOOL);
    let pre_term = func
        .terminator(pre)
        .expect("invariant: `unroll` gave `P` its branch");
    if let InstData::Branch { else_dest, .. } = func.dfg.inst_mut(pre_term) {
        else_dest.block = rest;
        else_dest.args.push(yes);
    }
    let InstData::Branch {
        then_dest,
        else_dest,
        ..
    } = last
    else {
        unreachable!("invariant: plan() found the loop's branch");
    };
    let cmp = InstData::Cmp {
        cond: p.test,
        args: [state[p.counter], p.bound],
    };
    let t = e.value(func, rest, cmp, Type::BOOL);
    // `first` decides for the edge into `B`.
    let into_b_on_true = then_dest.block == p.body;
    let forced = e.bool(func, rest, into_b_on_true);
    let select = InstData::Select {
        cond: first,
        args: [forced, t],
    };
    let go = e.value(func, rest, select, Type::BOOL);
    let exit_args: Vec<Value> = exit
        .iter()
        .map(|a| match a {
            ExitArg::Outside(v) => *v,
            ExitArg::State(j) => state[*j],
        })
        .collect();
    let exit_block = match into_b_on_true {
        true => else_dest.block,
        false => then_dest.block,
    };
    let into_b = BlockCall {
        block: p.body,
        args: state,
    };
    let out = BlockCall {
        block: exit_block,
        args: exit_args,
    };
    let (then_dest, else_dest) = match into_b_on_true {
        true => (into_b, out),
        false => (out, into_b),
    };
    let branch = InstData::Branch {
        cond: go,
        then_dest,
        else_dest,
    };
    e.inst(func, rest, branch, &[]);
}
