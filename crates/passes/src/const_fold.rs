//! Constant folding: an operation whose operands are all constants becomes
//! a constant, with exactly the semantics codegen gives it (IEEE floats,
//! wrapping integers; integer division by zero is left for the runtime
//! check). A branch on a constant becomes a jump.
//!
//! Assumes: verified input. Guarantees: verified output, same behaviour.

use adc_ir::{BinaryOp, CmpCond, Constant, Function, Inst, InstData, Type, UnaryOp, Value, ValueDef};

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
    use Constant::*;
    Some(match (a, b) {
        (I64(x), I64(y)) => I64(match op {
            BinaryOp::Add => x.wrapping_add(y),
            BinaryOp::Sub => x.wrapping_sub(y),
            BinaryOp::Mul => x.wrapping_mul(y),
            BinaryOp::Div if y != 0 => x.wrapping_div(y),
            BinaryOp::Rem if y != 0 => x.wrapping_rem(y),
            BinaryOp::Min => x.min(y),
            BinaryOp::Max => x.max(y),
            BinaryOp::Div | BinaryOp::Rem => return None,
        }),
        (F64(x), F64(y)) => F64(match op {
            BinaryOp::Add => x + y,
            BinaryOp::Sub => x - y,
            BinaryOp::Mul => x * y,
            BinaryOp::Div => x / y,
            BinaryOp::Min => if y < x { y } else { x },
            BinaryOp::Max => if y > x { y } else { x },
            BinaryOp::Rem => return None,
        }),
        (F32(x), F32(y)) => F32(match op {
            BinaryOp::Add => x + y,
            BinaryOp::Sub => x - y,
            BinaryOp::Mul => x * y,
            BinaryOp::Div => x / y,
            BinaryOp::Min => if y < x { y } else { x },
            BinaryOp::Max => if y > x { y } else { x },
            BinaryOp::Rem => return None,
        }),
        _ => return None,
    })
}

fn compare(cond: CmpCond, a: Constant, b: Constant) -> Option<bool> {
    use Constant::*;
    let ord = match (a, b) {
        (I64(x), I64(y)) => x.partial_cmp(&y),
        (F64(x), F64(y)) => x.partial_cmp(&y),
        (F32(x), F32(y)) => x.partial_cmp(&y),
        (Bool(x), Bool(y)) => x.partial_cmp(&y),
        _ => return None,
    };
    use std::cmp::Ordering::*;
    Some(match (cond, ord) {
        (CmpCond::Ne, None) => true,
        (_, None) => false,
        (CmpCond::Eq, Some(o)) => o == Equal,
        (CmpCond::Ne, Some(o)) => o != Equal,
        (CmpCond::Lt, Some(o)) => o == Less,
        (CmpCond::Le, Some(o)) => o != Greater,
        (CmpCond::Gt, Some(o)) => o == Greater,
        (CmpCond::Ge, Some(o)) => o != Less,
    })
}

/// Scalar conversion with codegen's semantics (saturating float to int).
pub fn convert(c: Constant, to: Type) -> Option<Constant> {
    use adc_ir::ScalarType as S;
    use Constant::*;
    let to = to.scalar()?;
    Some(match (c, to) {
        (c, t) if c.ty() == t => c,
        (I64(x), S::F64) => F64(x as f64),
        (I64(x), S::F32) => F32(x as f32),
        (F64(x), S::I64) => I64(x as i64),
        (F32(x), S::I64) => I64(x as i64),
        (F32(x), S::F64) => F64(x as f64),
        (F64(x), S::F32) => F32(x as f32),
        (Bool(b), S::I64) => I64(b as i64),
        (Bool(b), S::F64) => F64(b as i64 as f64),
        (Bool(b), S::F32) => F32(b as i64 as f32),
        (I64(x), S::Bool) => Bool(x != 0),
        (F64(x), S::Bool) => Bool(x != 0.0),
        (F32(x), S::Bool) => Bool(x != 0.0),
        _ => return None,
    })
}

fn fold(func: &Function, inst: Inst) -> Option<Constant> {
    let result_ty = func.dfg.inst_results(inst).first().map(|r| func.dfg.value_type(*r));
    match func.dfg.inst(inst) {
        InstData::Unary { op, arg } => match (op, constant_of(func, *arg)?) {
            (UnaryOp::Neg, Constant::I64(x)) => Some(Constant::I64(x.wrapping_neg())),
            (UnaryOp::Neg, Constant::F64(x)) => Some(Constant::F64(-x)),
            (UnaryOp::Neg, Constant::F32(x)) => Some(Constant::F32(-x)),
            (UnaryOp::Not, Constant::Bool(b)) => Some(Constant::Bool(!b)),
            _ => None,
        },
        InstData::Binary { op, args } => binary(*op, constant_of(func, args[0])?, constant_of(func, args[1])?),
        InstData::Cmp { cond, args } => compare(*cond, constant_of(func, args[0])?, constant_of(func, args[1])?).map(Constant::Bool),
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
            if let InstData::Branch { cond, then_dest, else_dest } = func.dfg.inst(inst).clone() {
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
