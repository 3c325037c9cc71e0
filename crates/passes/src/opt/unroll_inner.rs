//! Unrolling by four of small one-block loops with a run-time trip count:
//! the inner loops of `rotate`'s do-while form (a dot product, a squared
//! distance). Four iterations share one test and one branch, and their
//! element addresses become constant offsets from one counter.
//!
//! Pattern: a block `B` whose terminator is `br c, B(next), X(exit)` (the
//! loop on the true edge), where `c = cmp lt n, N` with `n = add i, 1`,
//! `i` a parameter of `B` that `next` passes `n` to, and `N` defined
//! outside `B`; `B` has at most `MAX_INSTS` instructions besides its
//! branch, of the kinds `is_plain` accepts (no calls, tape or memory
//! management), and no value `B` defines is used outside `B`.
//!
//! Then every edge into `B` from outside goes to a new block `P`, which
//! enters a new block `U` when four iterations remain (`i < N - 3`, and
//! `N - 3` does not wrap) and `B` otherwise. `U` holds four copies of
//! `B`'s instructions, copy `k` computing its counter as `i + k`; it loops
//! while four more remain, else goes to a new block `C` that enters `B`
//! for the remaining ones (fewer than four) or leaves by the last copy's
//! exit edge. `B` stays as it was, for the remainder.
//!
//! Assumes: verified input. Guarantees: verified output; every path runs
//! the same instructions in the same order (each copy in `U` runs exactly
//! when the original iteration would: the test at the top of `U` covers
//! the three tests it skips).

use crate::util::{copy_inst, int_const};
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
    // The blocks `unroll` adds are not one-block loops of this shape (`U`
    // tests `N - 3`, not `N`), so one scan of the original blocks is all.
    let blocks: Vec<Block> = func.layout.clone();
    for b in blocks {
        if let Some(p) = plan(func, b) {
            unroll(func, &p);
            changed = true;
        }
    }
    changed
}

struct Plan {
    body: Block,
    /// The counter's index among `body`'s parameters.
    counter: usize,
    /// `n = add i, 1` and the test `cmp lt n, N`.
    increment: adc_ir::Inst,
    test: adc_ir::Inst,
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
    let (&term, body) = insts.split_last()?;
    if body.len() > MAX_INSTS || !body.iter().all(|i| is_plain(func.dfg.inst(*i))) {
        return None;
    }
    let InstData::Branch {
        cond,
        then_dest,
        else_dest,
    } = func.dfg.inst(term)
    else {
        return None;
    };
    if then_dest.block != b || else_dest.block == b {
        return None;
    }
    let own: BTreeSet<adc_ir::Inst> = body.iter().copied().collect();
    let ValueDef::Result(test, _) = func.dfg.value_def(*cond) else {
        return None;
    };
    let InstData::Cmp {
        cond: CmpCond::Lt,
        args: [next, bound],
    } = func.dfg.inst(test)
    else {
        return None;
    };
    if !own.contains(&test) || defined_in(func, *bound, b, &own) {
        return None;
    }
    let ValueDef::Result(increment, _) = func.dfg.value_def(*next) else {
        return None;
    };
    let InstData::Binary {
        op: BinaryOp::Add,
        args: [i, one],
    } = func.dfg.inst(increment)
    else {
        return None;
    };
    if !own.contains(&increment) || int_const(func, *one) != Some(1) {
        return None;
    }
    let ValueDef::Param(pb, counter) = func.dfg.value_def(*i) else {
        return None;
    };
    let counter = counter as usize;
    if pb != b || then_dest.args.get(counter) != Some(next) {
        return None;
    }
    // No value of the loop is used past it but through its exit edge.
    for &other in func.layout.iter().filter(|&&o| o != b) {
        for &inst in &func.dfg.block(other).insts {
            let mut escapes = false;
            func.dfg
                .inst(inst)
                .for_each_arg(|a| escapes |= defined_in(func, a, b, &own));
            if escapes {
                return None;
            }
        }
    }
    Some(Plan {
        body: b,
        counter,
        increment,
        test,
        bound: *bound,
    })
}

fn unroll(func: &mut Function, p: &Plan) {
    let b = p.body;
    let term = func
        .terminator(b)
        .expect("invariant: plan() found the block's branch");
    let (span, tag) = (func.span(term), func.tag(term));
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
    let mut emit = |func: &mut Function, block: Block, data: InstData, ty: &[Type]| {
        let inst = func.append_inst(block, data, ty, span);
        func.set_tag(inst, tag);
        func.dfg.inst_results(inst).first().copied()
    };
    let konst =
        |func: &mut Function,
         block,
         c: i64,
         emit: &mut dyn FnMut(&mut Function, Block, InstData, &[Type]) -> Option<Value>| {
            emit(
                func,
                block,
                InstData::Const {
                    value: Constant::I64(c),
                },
                &[Type::I64],
            )
            .expect("invariant: a constant has a result")
        };
    // P: `i < N - 3`, unless `N - 3` wraps.
    let pre_params: Vec<Value> = types
        .iter()
        .map(|t| func.dfg.append_block_param(pre, *t))
        .collect();
    let three = konst(func, pre, FACTOR - 1, &mut emit);
    let limit = emit(
        func,
        pre,
        InstData::Binary {
            op: BinaryOp::Sub,
            args: [p.bound, three],
        },
        &[Type::I64],
    )
    .expect("invariant: sub has a result");
    let cmp =
        |func: &mut Function,
         block,
         a,
         c,
         emit: &mut dyn FnMut(&mut Function, Block, InstData, &[Type]) -> Option<Value>| {
            emit(
                func,
                block,
                InstData::Cmp {
                    cond: CmpCond::Lt,
                    args: [a, c],
                },
                &[Type::BOOL],
            )
            .expect("invariant: cmp has a result")
        };
    let no_wrap = cmp(func, pre, limit, p.bound, &mut emit);
    let room = cmp(func, pre, pre_params[p.counter], limit, &mut emit);
    let no = emit(
        func,
        pre,
        InstData::Const {
            value: Constant::Bool(false),
        },
        &[Type::BOOL],
    )
    .expect("invariant: a constant has a result");
    let enter = emit(
        func,
        pre,
        InstData::Select {
            cond: no_wrap,
            args: [room, no],
        },
        &[Type::BOOL],
    )
    .expect("invariant: select has a result");
    emit(
        func,
        pre,
        InstData::Branch {
            cond: enter,
            then_dest: BlockCall {
                block: unrolled,
                args: pre_params.clone(),
            },
            else_dest: BlockCall {
                block: b,
                args: pre_params,
            },
        },
        &[],
    );
    // U: four copies, copy k's counter `i + k`.
    let mut current: Vec<Value> = types
        .iter()
        .map(|t| func.dfg.append_block_param(unrolled, *t))
        .collect();
    let start = current[p.counter];
    let body: Vec<adc_ir::Inst> = {
        let insts = &func.dfg.block(b).insts;
        insts[..insts.len() - 1].to_vec()
    };
    let InstData::Branch {
        then_dest,
        else_dest,
        ..
    } = func.dfg.inst(term).clone()
    else {
        unreachable!("invariant: plan() checked the branch")
    };
    let mut exit_args = Vec::new();
    let mut last_test = None;
    for k in 1..=FACTOR {
        let mut map: BTreeMap<Value, Value> = params
            .iter()
            .copied()
            .zip(current.iter().copied())
            .collect();
        for &inst in &body {
            if inst == p.increment {
                let kv = konst(func, unrolled, k, &mut emit);
                let n = emit(
                    func,
                    unrolled,
                    InstData::Binary {
                        op: BinaryOp::Add,
                        args: [start, kv],
                    },
                    &[Type::I64],
                )
                .expect("invariant: add has a result");
                map.insert(func.dfg.inst_results(inst)[0], n);
            } else {
                copy_inst(func, inst, unrolled, &mut map);
            }
        }
        let at = |v: &Value| *map.get(v).unwrap_or(v);
        current = then_dest.args.iter().map(at).collect();
        exit_args = else_dest.args.iter().map(at).collect();
        last_test = Some(at(&func.dfg.inst_results(p.test)[0]));
    }
    let again = cmp(func, unrolled, current[p.counter], limit, &mut emit);
    emit(
        func,
        unrolled,
        InstData::Branch {
            cond: again,
            then_dest: BlockCall {
                block: unrolled,
                args: current.clone(),
            },
            else_dest: BlockCall {
                block: rest,
                args: vec![],
            },
        },
        &[],
    );
    // C: the remainder in `B`, or out by the last copy's exit edge.
    emit(
        func,
        rest,
        InstData::Branch {
            cond: last_test.expect("invariant: FACTOR > 0"),
            then_dest: BlockCall {
                block: b,
                args: current,
            },
            else_dest: BlockCall {
                block: else_dest.block,
                args: exit_args,
            },
        },
        &[],
    );
    // Every edge into `B` from outside now enters `P`.
    for &o in func.layout.clone().iter() {
        if o == b || o == pre || o == unrolled || o == rest {
            continue;
        }
        let Some(t) = func.terminator(o) else {
            continue;
        };
        for call in func.dfg.inst_mut(t).successors_mut() {
            if call.block == b {
                call.block = pre;
            }
        }
    }
}
