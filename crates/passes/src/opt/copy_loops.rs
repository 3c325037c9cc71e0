//! `copy-loops`: a loop that only copies a range of one array into another
//! becomes one `copyrange`, which codegen turns into a `memmove`.
//!
//! Assumes: verified IR at the end of `opt`, so `bce` has already proven
//! the accesses of the loops it covers (the pattern needs unchecked ones).
//! It matches a counted loop (`crate::loops`) with step 1 and two blocks:
//!
//! ```text
//! h(i: i64):  c = cmp lt i, L          ; L defined outside the loop
//!             br c, b(), exit(args)
//! b():        v = load.unchecked src, i + d1
//!             store.unchecked dst, i + d2, v
//!             jump h(i + 1)
//! ```
//!
//! with only constants and index additions besides in `b`, only pure
//! instructions that do not use `i` besides in `h`, and neither `c` nor
//! anything `b` defines used after the loop. Uses of `i` after the loop
//! get its final value: `L` if the loop ran, its first value if not.
//! The copy must mean what a `memmove` means:
//! `src` and `dst` are different arrays (each a parameter, and parameters
//! never alias, docs/arrays.md#the-aliasing-rule, or made by `new` or `copy`), or one array read at or
//! ahead of where it is written (`d1 >= d2`).
//! Guarantees (check with `adc ir --after opt`): `h` does
//! `copyrange dst, i + d2, src, i + d1, L - i` and jumps to `exit`; the loop
//! body is unreachable (the `opt` round after this removes it). Not part of
//! the fixed point that derivative code runs on its source, because the
//! derivative passes do not know `copyrange`.

use crate::loops::{counted_header, counted_loops, CountedHeader};
use crate::predicates::is_fresh_array;
use crate::rewrite::Emitter;
use adc_ir::offset::offset_of;
use adc_ir::{
    BinaryOp, Block, BlockCall, CmpCond, Function, InstData, Span, Tag, Type, Value, ValueDef,
};
use std::collections::BTreeSet;

pub fn run(func: &mut Function) -> bool {
    let all: BTreeSet<Block> = func.layout.iter().copied().collect();
    let mut changed = false;
    for lp in counted_loops(func, &all) {
        let from_constant = matches!(lp.init, crate::loops::LoopInit::Const(_));
        if !from_constant || lp.step != 1 || lp.body.len() != 2 {
            continue;
        }
        let Some(copy) = match_copy(func, lp.header, lp.latch, lp.exit) else {
            continue;
        };
        rewrite(func, lp.header, lp.latch, copy);
        changed = true;
    }
    changed
}

struct Copy {
    counter: Value,
    bound: Value,
    src: Value,
    src_offset: i64,
    dst: Value,
    dst_offset: i64,
    exit: BlockCall,
    span: Span,
}

fn match_copy(func: &Function, header: Block, latch: Block, exit: Block) -> Option<Copy> {
    let [counter] = func.dfg.block_params(header) else {
        return None;
    };
    let counter = *counter;
    let in_latch = |v: Value| match func.dfg.value_def(v) {
        ValueDef::Param(b, _) => b == latch,
        ValueDef::Result(i, _) => func.dfg.block(latch).insts.contains(&i),
        ValueDef::Unused => true,
    };
    // The header: `cmp lt i, L`, `br c, latch(), exit(..)`, and pure
    // instructions that do not use the counter (they still run, once).
    let term = func.terminator(header)?;
    let CountedHeader {
        bound,
        cmp,
        test: cond,
        then_dest,
        else_dest,
        ..
    } = counted_header(func, header, counter)?;
    if !func.dfg.block(header).insts.contains(&cmp) {
        return None;
    }
    // What the rewrite changes the meaning of: the comparison and everything
    // the body defines. (The counter keeps its first value in the header,
    // where only the comparison uses it; uses after the loop are given its
    // final value.)
    let changed = |v: Value| v == cond || in_latch(v);
    let header_ok = func.dfg.block(header).insts.iter().all(|&i| {
        let data = func.dfg.inst(i);
        i == term || i == cmp || (!data.has_side_effects() && !data.args().contains(&counter))
    });
    if !header_ok
        || then_dest.block != latch
        || !then_dest.args.is_empty()
        || else_dest.block != exit
        || changed(bound)
        || bound == counter
        || else_dest.args.iter().any(|a| changed(*a))
    {
        return None;
    }
    // The body: one unchecked load, one unchecked store of it.
    let mut load = None;
    let mut store = None;
    for &i in &func.dfg.block(latch).insts {
        match func.dfg.inst(i) {
            InstData::Load {
                array,
                index,
                checked: false,
            } if load.is_none() => load = Some((i, *array, *index)),
            InstData::Store {
                array,
                index,
                value,
                checked: false,
            } if store.is_none() => store = Some((i, *array, *index, *value)),
            InstData::Const { .. } | InstData::Jump { .. } => (),
            InstData::Binary {
                op: BinaryOp::Add, ..
            } if func.dfg.value_type(func.dfg.inst_results(i)[0]) == Type::I64 => (),
            _ => return None,
        }
    }
    let (load_inst, src, src_index) = load?;
    let (store_inst, dst, dst_index, value) = store?;
    let varies = |v: Value| changed(v) || v == counter;
    if value != func.dfg.inst_results(load_inst)[0] || varies(src) || varies(dst) {
        return None;
    }
    let (sb, src_offset) = offset_of(func, src_index);
    let (db, dst_offset) = offset_of(func, dst_index);
    if sb != counter || db != counter {
        return None;
    }
    let distinct_roots = is_fresh_array(func, src) && is_fresh_array(func, dst) && src != dst;
    if !(distinct_roots || (src == dst && src_offset >= dst_offset)) {
        return None;
    }
    // Nothing whose meaning changes is used outside the body block, or
    // in the header other than by the comparison and the branch.
    let used_elsewhere = func.layout.iter().filter(|b| **b != latch).any(|b| {
        func.dfg
            .block(*b)
            .insts
            .iter()
            .any(|&i| i != cmp && i != term && func.dfg.inst(i).args().into_iter().any(changed))
    });
    if used_elsewhere {
        return None;
    }
    Some(Copy {
        counter,
        bound,
        src,
        src_offset,
        dst,
        dst_offset,
        exit: else_dest.clone(),
        span: func.span(store_inst),
    })
}

fn rewrite(func: &mut Function, header: Block, latch: Block, c: Copy) {
    let term = func.dfg.block_mut(header).insts.pop();
    let tag = term.map_or(Tag::Primal, |t| func.tag(t));
    let at = Emitter {
        block: header,
        tag,
        span: c.span,
    };
    // After the loop the counter is `max(L, first)`.
    let runs = InstData::Cmp {
        cond: CmpCond::Lt,
        args: [c.counter, c.bound],
    };
    let runs = at.value(func, runs, Type::BOOL);
    let last = InstData::Select {
        cond: runs,
        args: [c.bound, c.counter],
    };
    let last = at.value(func, last, Type::I64);
    let dst_index = at.index(func, c.counter, c.dst_offset);
    let src_index = at.index(func, c.counter, c.src_offset);
    let count = InstData::Binary {
        op: BinaryOp::Sub,
        args: [c.bound, c.counter],
    };
    let count = at.value(func, count, Type::I64);
    let copy = InstData::CopyRange {
        dst: c.dst,
        dst_index,
        src: c.src,
        src_index,
        count,
    };
    at.inst(func, copy, None);
    let mut exit = c.exit;
    for a in &mut exit.args {
        if *a == c.counter {
            *a = last;
        }
    }
    at.inst(func, InstData::Jump { dest: exit }, None);
    for b in func.layout.clone() {
        if b == header || b == latch {
            continue;
        }
        for i in func.dfg.block(b).insts.clone() {
            func.dfg
                .inst_mut(i)
                .map_args(|v| if v == c.counter { last } else { v });
        }
    }
}
