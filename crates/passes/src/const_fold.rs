//! Constant folding: an operation whose operands are all constants becomes
//! a constant, with exactly the semantics codegen gives it (IEEE floats,
//! wrapping integers; integer division by zero is left for the runtime
//! check). The semantics are the reference interpreter's, shared. A branch on a constant becomes a jump.
//!
//! Assumes: verified input. Guarantees: verified output, same behaviour.

use adc_ir::interp;
use adc_ir::{
    BinaryOp, CmpCond, Constant, Function, Inst, InstData, Type, UnaryOp, Value, ValueDef,
};

fn constant_of(func: &Function, v: Value) -> Option<Constant> {
    match func.dfg.value_def(v) {
        ValueDef::Result(inst, 0) => match func.dfg.inst(inst) {
            InstData::Const { value } => Some(*value),
            _ => None,
        },
        _ => None,
    }
}

fn binary(op: BinaryOp, a: Constant, b: Constant) -> Option<Constant> {
    // Integer division by zero stays for the runtime check.
    if matches!((op, b), (BinaryOp::Div | BinaryOp::Rem, Constant::I64(0))) || a.ty() != b.ty() {
        return None;
    }
    Some(interp::binary(op, a, b))
}

fn compare(cond: CmpCond, a: Constant, b: Constant) -> Option<bool> {
    (a.ty() == b.ty()).then(|| interp::compare(cond, a, b))
}

fn convert(c: Constant, to: Type) -> Option<Constant> {
    Some(interp::convert(c, to.scalar()?))
}

fn fold(func: &Function, inst: Inst) -> Option<Constant> {
    let result_ty = func
        .dfg
        .inst_results(inst)
        .first()
        .map(|r| func.dfg.value_type(*r));
    match func.dfg.inst(inst) {
        InstData::Unary { op, arg } => match (op, constant_of(func, *arg)?) {
            (UnaryOp::Neg, Constant::I64(x)) => Some(Constant::I64(x.wrapping_neg())),
            (UnaryOp::Neg, Constant::F64(x)) => Some(Constant::F64(-x)),
            (UnaryOp::Neg, Constant::F32(x)) => Some(Constant::F32(-x)),
            (UnaryOp::Not, Constant::Bool(b)) => Some(Constant::Bool(!b)),
            _ => None,
        },
        InstData::Binary { op, args } => binary(
            *op,
            constant_of(func, args[0])?,
            constant_of(func, args[1])?,
        ),
        InstData::Cmp { cond, args } => compare(
            *cond,
            constant_of(func, args[0])?,
            constant_of(func, args[1])?,
        )
        .map(Constant::Bool),
        InstData::Convert { arg } => convert(constant_of(func, *arg)?, result_ty?),
        InstData::Select { cond, args } => match constant_of(func, *cond)? {
            Constant::Bool(true) => constant_of(func, args[0]),
            _ => constant_of(func, args[1]),
        },
        _ => None,
    }
}

pub fn run(func: &mut Function) -> bool {
    let mut changed = false;
    for b in func.layout.clone() {
        for inst in func.dfg.block(b).insts.clone() {
            if let Some(c) = fold(func, inst) {
                *func.dfg.inst_mut(inst) = InstData::Const { value: c };
                changed = true;
            }
            if let InstData::Branch {
                cond,
                then_dest,
                else_dest,
            } = func.dfg.inst(inst).clone()
            {
                if let Some(Constant::Bool(taken)) = constant_of(func, cond) {
                    let dest = if taken { then_dest } else { else_dest };
                    *func.dfg.inst_mut(inst) = InstData::Jump { dest };
                    changed = true;
                }
            }
        }
    }
    changed
}
