//! Constant folding: an operation whose operands are all constants becomes
//! a constant, with exactly the semantics codegen gives it (IEEE floats,
//! wrapping integers; integer division by zero is left for the runtime
//! check). The semantics are the reference interpreter's, shared. A branch on a constant becomes a jump.
//! Exact identities too: integer `x + 0`, `x - 0`, `x * 1` are `x`, a
//! `select` on a constant condition or with equal arms is its arm, a bool
//! `c ? true : false` is `c`, `x + 0.0` is `x` when `x` is never -0.0 (a
//! square, `abs`, `exp`), and a
//! float `x * 2` becomes `x + x` (the same IEEE result for every `x`), and
//! the length of an array made by `new n` is `n`.
//!
//! Assumes: verified input. Guarantees: verified output, same behaviour.

use crate::defs::insert_before;
use adc_ir::interp;
use adc_ir::{
    BinaryOp, CmpCond, Constant, Function, Inst, InstData, MathFunc, Type, UnaryOp, Value, ValueDef,
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

/// What an identity makes of `inst`: the value it equals, or a cheaper
/// instruction.
enum Identity {
    Same(Value),
    Becomes(InstData),
}

fn identity(func: &Function, inst: Inst) -> Option<Identity> {
    if let InstData::ArrayLen { array } = func.dfg.inst(inst) {
        // `new n` succeeded, so `n >= 0` is its length.
        return match crate::defs::def_data(func, *array) {
            Some(InstData::ArrayNew { len, .. }) => Some(Identity::Same(*len)),
            _ => None,
        };
    }
    if let InstData::Select { cond, args } = func.dfg.inst(inst) {
        // A select on a constant is the arm it picks; one whose arms are
        // the same value is that value; on bools, `c ? true : false` is `c`
        // (the tests `version` chains are `a ? b : false`).
        let [a, b] = *args;
        return match (
            constant_of(func, *cond),
            constant_of(func, a),
            constant_of(func, b),
        ) {
            (Some(Constant::Bool(true)), _, _) => Some(Identity::Same(a)),
            (Some(Constant::Bool(false)), _, _) => Some(Identity::Same(b)),
            _ if a == b => Some(Identity::Same(a)),
            (_, Some(Constant::Bool(true)), Some(Constant::Bool(false))) => {
                Some(Identity::Same(*cond))
            }
            _ => None,
        };
    }
    let InstData::Binary { op, args } = func.dfg.inst(inst) else {
        return None;
    };
    let [a, b] = *args;
    let (ca, cb) = (constant_of(func, a), constant_of(func, b));
    match (op, ca, cb) {
        (BinaryOp::Add, _, Some(Constant::I64(0))) | (BinaryOp::Sub, _, Some(Constant::I64(0))) => {
            Some(Identity::Same(a))
        }
        (BinaryOp::Add, Some(Constant::I64(0)), _) => Some(Identity::Same(b)),
        // x + (-0.0) is x for every float x, -0.0 and NaN included (not so
        // x + 0.0: -0.0 + 0.0 is 0.0). Adjoint slots are cleared to -0.0
        // (`transpose`) so that reverse loops carry no `0 + adjoint`.
        (BinaryOp::Add, _, Some(c)) if is_negative_zero(c) => Some(Identity::Same(a)),
        (BinaryOp::Add, Some(c), _) if is_negative_zero(c) => Some(Identity::Same(b)),
        // x + 0.0 is x when x is never -0.0: a square `y * y` (+0.0 for a
        // zero `y` of either sign, NaN stays NaN), `abs`, `exp`. A sum
        // started at 0.0 (`sqsum`'s `res = 0.0; res += x * x`) then starts
        // at its first term.
        (BinaryOp::Add, _, Some(c)) if is_zero(c) && never_negative_zero(func, a) => {
            Some(Identity::Same(a))
        }
        (BinaryOp::Add, Some(c), _) if is_zero(c) && never_negative_zero(func, b) => {
            Some(Identity::Same(b))
        }
        (BinaryOp::Mul, _, Some(Constant::I64(1))) => Some(Identity::Same(a)),
        (BinaryOp::Mul, Some(Constant::I64(1)), _) => Some(Identity::Same(b)),
        // Integer `x * 0` is 0 (wrapping arithmetic; `version`'s terms for
        // an index that does not move).
        (BinaryOp::Mul, _, Some(Constant::I64(0))) => Some(Identity::Same(b)),
        (BinaryOp::Mul, Some(Constant::I64(0)), _) => Some(Identity::Same(a)),
        // The strong zero of `mulz x, c` / `divz x, c` changes nothing when
        // `c` is a finite constant: `x * c` is already a zero for a zero
        // `x` (of either sign: docs/derivatives.md leaves a zero
        // derivative's sign open), and equal to `mulz` for every other `x`
        // (not so `divz x, 0`, which is 0 for `x = 0` where `0 / 0` is NaN).
        // A plain product needs no mask (`strong_zero.rs`).
        (BinaryOp::MulZ, _, Some(c)) | (BinaryOp::DivZ, _, Some(c))
            if is_finite(c) && (*op == BinaryOp::MulZ || !is_zero(c)) =>
        {
            let op = if *op == BinaryOp::MulZ {
                BinaryOp::Mul
            } else {
                BinaryOp::Div
            };
            Some(Identity::Becomes(InstData::Binary { op, args: [a, b] }))
        }
        // `mulz c, x` is zero only where `c` is: for a finite nonzero `c`,
        // never (a constant seed of one, `specialize`).
        (BinaryOp::MulZ, Some(c), _) if is_one(c) => Some(Identity::Same(b)),
        (BinaryOp::MulZ, Some(c), _) if is_finite(c) && !is_zero(c) => {
            Some(Identity::Becomes(InstData::Binary {
                op: BinaryOp::Mul,
                args: [a, b],
            }))
        }
        // `x * 1.0` is `x` for every float `x`.
        (BinaryOp::Mul, _, Some(c)) if is_one(c) => Some(Identity::Same(a)),
        (BinaryOp::Mul, Some(c), _) if is_one(c) => Some(Identity::Same(b)),
        (BinaryOp::Mul, Some(c), _) | (BinaryOp::Mul, _, Some(c)) if is_two(c) => {
            let x = if ca.is_some_and(is_two) { b } else { a };
            Some(Identity::Becomes(InstData::Binary {
                op: BinaryOp::Add,
                args: [x, x],
            }))
        }
        _ => None,
    }
}

/// `x / c` for a float constant `c = 2^k` whose reciprocal is a normal
/// number: `x * 2^-k` gives the same result bit for bit (both scale `x`
/// exactly and round once) and a multiplication is several times cheaper.
/// Returns `x` and the reciprocal.
fn exact_reciprocal(func: &Function, inst: Inst) -> Option<(Value, Constant)> {
    let InstData::Binary {
        op: BinaryOp::Div,
        args: [x, c],
    } = *func.dfg.inst(inst)
    else {
        return None;
    };
    let power_of_two = |v: f64| v != 0.0 && v.is_finite() && v.abs().log2().fract() == 0.0;
    match constant_of(func, c)? {
        Constant::F64(v) if power_of_two(v) && (1.0 / v).is_normal() => {
            Some((x, Constant::F64(1.0 / v)))
        }
        Constant::F32(v) if power_of_two(v as f64) && (1.0 / v).is_normal() => {
            Some((x, Constant::F32(1.0 / v)))
        }
        _ => None,
    }
}

fn is_negative_zero(c: Constant) -> bool {
    matches!(c, Constant::F64(x) if x == 0.0 && x.is_sign_negative())
        || matches!(c, Constant::F32(x) if x == 0.0 && x.is_sign_negative())
}

/// Whether `v` is a float that is never -0.0: `y * y`, `abs`, `exp`.
fn never_negative_zero(func: &Function, v: Value) -> bool {
    match crate::defs::def_data(func, v) {
        Some(InstData::Binary {
            op: BinaryOp::Mul,
            args,
        }) => args[0] == args[1] && func.dfg.value_type(v).elem().is_float(),
        Some(InstData::Math {
            func: MathFunc::Abs | MathFunc::Exp,
            ..
        }) => true,
        _ => false,
    }
}

fn is_finite(c: Constant) -> bool {
    matches!(c, Constant::F64(x) if x.is_finite()) || matches!(c, Constant::F32(x) if x.is_finite())
}

fn is_zero(c: Constant) -> bool {
    matches!(c, Constant::F64(x) if x == 0.0) || matches!(c, Constant::F32(x) if x == 0.0)
}

fn is_one(c: Constant) -> bool {
    matches!(c, Constant::F64(x) if x == 1.0) || matches!(c, Constant::F32(x) if x == 1.0)
}

fn is_two(c: Constant) -> bool {
    matches!(c, Constant::F64(x) if x == 2.0) || matches!(c, Constant::F32(x) if x == 2.0)
}

pub fn run(func: &mut Function) -> bool {
    let mut changed = false;
    let mut same = std::collections::BTreeMap::new();
    for b in func.layout.clone() {
        for inst in func.dfg.block(b).insts.clone() {
            if let Some(c) = fold(func, inst) {
                *func.dfg.inst_mut(inst) = InstData::Const { value: c };
                changed = true;
            }
            if let Some((x, r)) = exact_reciprocal(func, inst) {
                let ty = func.dfg.value_type(x);
                let k = insert_before(func, b, inst, InstData::Const { value: r }, ty);
                let rv = func.dfg.inst_results(k)[0];
                *func.dfg.inst_mut(inst) = InstData::Binary {
                    op: BinaryOp::Mul,
                    args: [x, rv],
                };
                changed = true;
            }
            match identity(func, inst) {
                Some(Identity::Same(v)) => {
                    same.insert(func.dfg.inst_results(inst)[0], v);
                }
                Some(Identity::Becomes(data)) => {
                    *func.dfg.inst_mut(inst) = data;
                    changed = true;
                }
                None => (),
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
    // The identities' results are now unused; `dce` removes them.
    changed |= !same.is_empty();
    crate::rewrite::substitute(func, &same);
    changed
}
