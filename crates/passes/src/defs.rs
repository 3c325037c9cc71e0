//! What defines a value and what an instruction holds: the defining
//! instruction, the integer or float constant a value is, how often each
//! value is used, an instruction's result types, a checked access's array
//! and index; and [`insert_before`], the one edit here.

use adc_ir::{Block, Constant, Function, Inst, InstData, Type, Value, ValueDef};

/// How many times each value is used as an operand.
pub(crate) fn use_counts(func: &Function) -> Vec<u32> {
    let mut counts = vec![0u32; func.dfg.num_values()];
    for &b in &func.layout {
        for &inst in &func.dfg.block(b).insts {
            func.dfg.inst(inst).for_each_arg(|v| counts[v.index()] += 1);
        }
    }
    counts
}

/// The instruction that defines `v` (its first result), if any.
pub(crate) fn def_data(func: &Function, v: Value) -> Option<&InstData> {
    match func.dfg.value_def(v) {
        ValueDef::Result(inst, 0) => Some(func.dfg.inst(inst)),
        _ => None,
    }
}

pub(crate) fn int_const(func: &Function, v: Value) -> Option<i64> {
    match def_data(func, v) {
        Some(InstData::Const {
            value: Constant::I64(c),
        }) => Some(*c),
        _ => None,
    }
}

/// The array and index of a checked `load` or `store`.
pub(crate) fn checked_access(func: &Function, inst: Inst) -> Option<(Value, Value)> {
    match func.dfg.inst(inst) {
        InstData::Load {
            array,
            index,
            checked: true,
        }
        | InstData::Store {
            array,
            index,
            checked: true,
            ..
        } => Some((*array, *index)),
        _ => None,
    }
}

/// The float constant `v` is, as an `f64`.
pub(crate) fn float_const(func: &Function, v: Value) -> Option<f64> {
    match def_data(func, v) {
        Some(InstData::Const {
            value: Constant::F64(c),
        }) => Some(*c),
        Some(InstData::Const {
            value: Constant::F32(c),
        }) => Some(f64::from(*c)),
        _ => None,
    }
}

/// The types of `inst`'s results.
pub(crate) fn result_types(func: &Function, inst: adc_ir::Inst) -> Vec<adc_ir::Type> {
    func.dfg
        .inst_results(inst)
        .iter()
        .map(|r| func.dfg.value_type(*r))
        .collect()
}

/// A new instruction `data` (of one result of type `ty`) in front of
/// `inst` in block `b`, with `inst`'s span; returns the new instruction.
pub(crate) fn insert_before(
    func: &mut Function,
    b: Block,
    inst: Inst,
    data: InstData,
    ty: Type,
) -> Inst {
    let new = func.dfg.make_inst(data, &[ty]);
    func.set_span(new, func.span(inst));
    let insts = &mut func.dfg.block_mut(b).insts;
    let at = insts
        .iter()
        .position(|i| *i == inst)
        .expect("invariant: `inst` is in block `b`");
    insts.insert(at, new);
    new
}
