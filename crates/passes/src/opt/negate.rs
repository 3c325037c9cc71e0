//! `negate`: a negation folded into the operation that uses it, by
//! identities that hold bit for bit in IEEE arithmetic (round to nearest,
//! signed zeros included; only a NaN's sign may differ) and in wrapping
//! integers:
//!
//! - `a + (-b)` and `(-b) + a` are `a - b`; `a - (-b)` is `a + b`;
//! - `-(-a)` is `a`;
//! - `(-a) + (-a)` and `(-a) - a` are `-(a + a)` (the same `a` twice: not
//!   so `(-a) + (-b)`, which is `+0.0` where `-(a + b)` is `-0.0` for
//!   `b = -a`), when nothing else uses `-a`;
//! - `(-a) == c` and `(-a) != c` are `a == -c` and `a != -c` for a constant
//!   `c`.
//!
//! Reverse mode writes the adjoint of `x - y` as a negation added into
//! `y`'s, and forward over reverse negates each lane again: a negation is
//! a constant load and an `xor` in the machine code, where a subtraction
//! costs nothing more than the addition it replaces.
//!
//! Assumes: verified input. Guarantees: verified output, the same values;
//! the negations it bypasses are left for `dce`.

use crate::defs::{self, def_data, use_counts};
use adc_ir::{BinaryOp, Block, CmpCond, Constant, Function, Inst, InstData, Type, UnaryOp, Value};
use std::collections::BTreeMap;

/// `x` if `v` is `neg x`.
fn negated(func: &Function, v: Value) -> Option<Value> {
    match def_data(func, v) {
        Some(InstData::Unary {
            op: UnaryOp::Neg,
            arg,
        }) => Some(*arg),
        _ => None,
    }
}

/// A constant's negation (wrapping for integers), if it is a number.
fn negated_constant(c: Constant) -> Option<Constant> {
    match c {
        Constant::F64(x) => Some(Constant::F64(-x)),
        Constant::F32(x) => Some(Constant::F32(-x)),
        Constant::I64(x) => Some(Constant::I64(x.wrapping_neg())),
        _ => None,
    }
}

/// What `inst` becomes: the value it equals, an instruction in its place,
/// `add a, a` in front of it and `neg` of that in its place, or a compare
/// of `a` with a new constant.
enum Fold {
    Same(Value),
    Becomes(InstData),
    NegOfDouble(Value),
    CompareWith(CmpCond, Value, Constant),
}

fn fold(func: &Function, inst: Inst, uses: &[u32]) -> Option<Fold> {
    match *func.dfg.inst(inst) {
        InstData::Unary {
            op: UnaryOp::Neg,
            arg,
        } => negated(func, arg).map(Fold::Same),
        InstData::Binary {
            op: BinaryOp::Add,
            args: [a, b],
        } => match (negated(func, a), negated(func, b)) {
            (Some(x), Some(_)) if a == b && uses[a.index()] == 2 => Some(Fold::NegOfDouble(x)),
            (_, Some(y)) => Some(Fold::Becomes(InstData::Binary {
                op: BinaryOp::Sub,
                args: [a, y],
            })),
            (Some(x), None) => Some(Fold::Becomes(InstData::Binary {
                op: BinaryOp::Sub,
                args: [b, x],
            })),
            (None, None) => None,
        },
        InstData::Binary {
            op: BinaryOp::Sub,
            args: [a, b],
        } => match (negated(func, a), negated(func, b)) {
            (_, Some(y)) => Some(Fold::Becomes(InstData::Binary {
                op: BinaryOp::Add,
                args: [a, y],
            })),
            (Some(x), None) if x == b && uses[a.index()] == 1 => Some(Fold::NegOfDouble(x)),
            _ => None,
        },
        InstData::Cmp {
            cond: cond @ (CmpCond::Eq | CmpCond::Ne),
            args: [a, c],
        } => {
            let x = negated(func, a)?;
            let Some(InstData::Const { value }) = def_data(func, c) else {
                return None;
            };
            Some(Fold::CompareWith(cond, x, negated_constant(*value)?))
        }
        _ => None,
    }
}

/// `data` (of one result of type `ty`) in front of `inst` in `b`, with its
/// span and tag; returns the result.
fn insert_before(func: &mut Function, b: Block, inst: Inst, data: InstData, ty: Type) -> Value {
    let new = defs::insert_before(func, b, inst, data, ty);
    func.set_tag(new, func.tag(inst));
    func.dfg.inst_results(new)[0]
}

pub fn run(func: &mut Function) -> bool {
    let uses = use_counts(func);
    let mut changed = false;
    let mut same = BTreeMap::new();
    for b in func.layout.clone() {
        for inst in func.dfg.block(b).insts.clone() {
            match fold(func, inst, &uses) {
                Some(Fold::Same(v)) => {
                    same.insert(func.dfg.inst_results(inst)[0], v);
                }
                Some(Fold::Becomes(data)) => {
                    *func.dfg.inst_mut(inst) = data;
                    changed = true;
                }
                Some(Fold::NegOfDouble(x)) => {
                    let double = InstData::Binary {
                        op: BinaryOp::Add,
                        args: [x, x],
                    };
                    let ty = func.dfg.value_type(x);
                    let arg = insert_before(func, b, inst, double, ty);
                    *func.dfg.inst_mut(inst) = InstData::Unary {
                        op: UnaryOp::Neg,
                        arg,
                    };
                    changed = true;
                }
                Some(Fold::CompareWith(cond, x, c)) => {
                    let ty = func.dfg.value_type(x);
                    let k = insert_before(func, b, inst, InstData::Const { value: c }, ty);
                    *func.dfg.inst_mut(inst) = InstData::Cmp { cond, args: [x, k] };
                    changed = true;
                }
                None => (),
            }
        }
    }
    changed |= !same.is_empty();
    crate::rewrite::substitute(func, &same);
    changed
}
