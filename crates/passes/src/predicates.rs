//! Predicates the passes decide by: which instructions may be removed,
//! merged or run again elsewhere, which arrays are objects of their
//! own, and whether a function uses a tape. Reads only.

use crate::defs::{def_data, int_const};
use adc_ir::{BinaryOp, Function, InstData, Value, ValueDef};

/// Whether `inst` is a float division, which (unlike an integer one)
/// cannot trap: it may be merged or removed like pure arithmetic.
pub(crate) fn is_float_div(func: &Function, inst: adc_ir::Inst) -> bool {
    matches!(
        func.dfg.inst(inst),
        InstData::Binary {
            op: BinaryOp::Div,
            ..
        }
    ) && func
        .dfg
        .inst_results(inst)
        .first()
        .is_some_and(|r| func.dfg.value_type(*r).elem().is_float())
}

/// Whether `inst` is a division or remainder that cannot trap: a float one, or an
/// integer one by a constant other than 0 and -1 (as a triangular loop's
/// offset `col * (col + 1) / 2`). Such a division may run where the
/// source would not have run it.
pub(crate) fn is_safe_div(func: &Function, inst: adc_ir::Inst) -> bool {
    match func.dfg.inst(inst) {
        InstData::Binary {
            op: BinaryOp::Div | BinaryOp::Rem,
            args,
        } => {
            let float = func
                .dfg
                .inst_results(inst)
                .first()
                .is_some_and(|r| func.dfg.value_type(*r).elem().is_float());
            float || int_const(func, args[1]).is_some_and(|c| c != 0 && c != -1)
        }
        _ => false,
    }
}

/// Whether `inst` is scalar arithmetic that cannot trap, so it can run
/// again wherever its operands are (`unzip`'s and `transpose`'s
/// recomputations): a constant, a unary operation, a comparison, a select,
/// a conversion, or a binary operation other than an integer division or
/// remainder that could trap (`is_safe_div`).
pub(crate) fn is_cheap_arith(func: &Function, inst: adc_ir::Inst) -> bool {
    match func.dfg.inst(inst) {
        InstData::Const { .. }
        | InstData::Unary { .. }
        | InstData::Cmp { .. }
        | InstData::Select { .. }
        | InstData::Convert { .. } => true,
        InstData::Binary { op, .. } => {
            !matches!(op, BinaryOp::Div | BinaryOp::Rem) || is_safe_div(func, inst)
        }
        _ => false,
    }
}

/// Whether removing `inst` when its results are unused changes nothing
/// (`free` of `null` does nothing either).
pub(crate) fn is_removable(func: &Function, inst: adc_ir::Inst) -> bool {
    let frees_null = match func.dfg.inst(inst) {
        InstData::ArrayFree { array } => {
            matches!(def_data(func, *array), Some(InstData::ArrayNull))
        }
        _ => false,
    };
    !func.dfg.inst(inst).has_side_effects() || is_float_div(func, inst) || frees_null
}

/// An array value that is its own object: a parameter (parameters never
/// alias, docs/arrays.md#the-aliasing-rule), or made here by `new` or `copy` (not one passed
/// along through a block parameter). Two different such values never share
/// memory.
pub(crate) fn is_fresh_array(func: &Function, a: Value) -> bool {
    match func.dfg.value_def(a) {
        ValueDef::Param(b, _) => Some(b) == func.entry_block(),
        ValueDef::Result(i, _) => matches!(
            func.dfg.inst(i),
            InstData::ArrayNew { .. } | InstData::ArrayCopy { .. }
        ),
        ValueDef::Unused => false,
    }
}

/// Whether `f` uses a tape or the deferred-free list, or checks shadows'
/// lengths (`lencheck`): generated derivatives keep their own tape and frame.
pub(crate) fn has_tape_insts(f: &Function) -> bool {
    keeps_tape(f)
        || f.layout
            .iter()
            .flat_map(|b| f.dfg.block(*b).insts.iter())
            .any(|i| matches!(f.dfg.inst(*i), InstData::LenCheck { .. }))
}

/// Whether `f` uses a tape or the deferred-free list.
pub(crate) fn keeps_tape(f: &Function) -> bool {
    f.layout
        .iter()
        .flat_map(|b| f.dfg.block(*b).insts.iter())
        .any(|i| {
            matches!(
                f.dfg.inst(*i),
                InstData::TapePush { .. }
                    | InstData::TapePop { .. }
                    | InstData::TapeRead { .. }
                    | InstData::DeferFree { .. }
            )
        })
}

/// Whether `a` and `b` are the same opcode (the lanes `widen` makes of one
/// instruction are).
pub(crate) fn same_opcode(a: &InstData, b: &InstData) -> bool {
    match (a, b) {
        (InstData::Binary { op, .. }, InstData::Binary { op: o, .. }) => op == o,
        (InstData::Unary { op, .. }, InstData::Unary { op: o, .. }) => op == o,
        (InstData::Math { func, .. }, InstData::Math { func: f, .. }) => func == f,
        _ => std::mem::discriminant(a) == std::mem::discriminant(b),
    }
}

/// Whether `b` may be the lane after `a`, as codegen pairs lanes
/// (`translate/simd/lanes.rs`): both `diff`, the same opcode, and `b` not
/// using `a`'s results.
pub(crate) fn lane_neighbours(func: &Function, a: adc_ir::Inst, b: adc_ir::Inst) -> bool {
    let diff = |i| func.tag(i) == adc_ir::Tag::Diff;
    let results = func.dfg.inst_results(a);
    let mut uses = false;
    func.dfg
        .inst(b)
        .for_each_arg(|v| uses |= results.contains(&v));
    diff(a) && diff(b) && same_opcode(func.dfg.inst(a), func.dfg.inst(b)) && !uses
}
