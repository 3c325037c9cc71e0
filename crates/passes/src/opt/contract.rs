//! `contract`: a float multiply whose only use is an add or subtract
//! becomes one fused multiply-add, rounded once (`fma a, b, c` is
//! `a * b + c`), as C compilers do by default (`-ffp-contract`). An
//! opt-in (`adc --fp-contract`, `CompileOptions::fp_contract`): results
//! can differ from the separately rounded ones in the last bit.
//!
//! - `x * y + c` and `c + x * y` become `fma x, y, c`;
//! - `x * y - c` becomes `fma x, y, neg c`;
//! - `c - x * y` becomes `fma (neg x), y, c`
//!
//! (negation is exact, so each is `x * y ± c` rounded once). Only a plain
//! `mul` fuses, never `mulz`, whose strong zero (a zero times an infinite
//! partial is zero) `fma` would lose, and only on `float` and `double`
//! scalars, one `mul` into its single use.
//!
//! Assumes: verified input, after the derivative passes and `opt` (it runs
//! once, last, in the `final` stage, where the machine has fused
//! multiply-add instructions). Guarantees: verified output, the same
//! values but for the single rounding of each fused pair.

use adc_ir::{BinaryOp, Function, Inst, InstData, MathFunc, Type, UnaryOp, Value, ValueDef};
use std::collections::BTreeSet;

pub fn run(func: &mut Function) -> bool {
    let uses = crate::defs::use_counts(func);
    let mut fused_muls: BTreeSet<Inst> = BTreeSet::new();
    for b in func.layout.clone() {
        let insts = func.dfg.block(b).insts.clone();
        let mut out = Vec::with_capacity(insts.len());
        for inst in insts {
            if let Some(fusion) = fusion(func, inst, &uses, &fused_muls) {
                fused_muls.insert(fusion.mul);
                let ty = func.dfg.value_type(func.dfg.inst_results(inst)[0]);
                let mut negated = |func: &mut Function, arg: Value| {
                    let neg = func.dfg.make_inst(
                        InstData::Unary {
                            op: UnaryOp::Neg,
                            arg,
                        },
                        &[ty],
                    );
                    func.set_span(neg, func.span(inst));
                    func.set_tag(neg, func.tag(inst));
                    out.push(neg);
                    func.dfg.inst_results(neg)[0]
                };
                let [mut x, y, mut c] = fusion.args;
                match fusion.negate {
                    Negate::Nothing => {}
                    Negate::Addend => c = negated(func, c),
                    Negate::Product => x = negated(func, x),
                }
                *func.dfg.inst_mut(inst) = InstData::Math {
                    func: MathFunc::Fma,
                    args: vec![x, y, c],
                };
            }
            out.push(inst);
        }
        func.dfg.block_mut(b).insts = out;
    }
    if fused_muls.is_empty() {
        return false;
    }
    crate::rewrite::remove_insts(func, &fused_muls);
    true
}

/// Which operand of the fused pair is negated.
enum Negate {
    Nothing,
    /// `x * y - c`.
    Addend,
    /// `c - x * y`.
    Product,
}

struct Fusion {
    /// The `mul` whose only use `inst` is.
    mul: Inst,
    /// `x`, `y` and `c`, before negation.
    args: [Value; 3],
    negate: Negate,
}

/// How `inst` fuses with a `mul` operand, if it does (with the first
/// operand's when both are: `a * b + c * d` is `fma a, b, c * d`).
fn fusion(func: &Function, inst: Inst, uses: &[u32], taken: &BTreeSet<Inst>) -> Option<Fusion> {
    let InstData::Binary { op, args } = func.dfg.inst(inst) else {
        return None;
    };
    if !matches!(op, BinaryOp::Add | BinaryOp::Sub) {
        return None;
    }
    let float = |v: Value| matches!(func.dfg.value_type(v), Type::Scalar(s) if s.is_float());
    if !float(args[0]) || !float(args[1]) {
        return None;
    }
    // The `mul` defining `v` if `v` is its only use.
    let product = |v: Value| -> Option<(Inst, [Value; 2])> {
        let ValueDef::Result(mul, 0) = func.dfg.value_def(v) else {
            return None;
        };
        match func.dfg.inst(mul) {
            InstData::Binary {
                op: BinaryOp::Mul,
                args,
            } if uses[v.index()] == 1 && !taken.contains(&mul) => Some((mul, *args)),
            _ => None,
        }
    };
    let [a, b] = *args;
    if let Some((mul, [x, y])) = product(a) {
        let negate = if *op == BinaryOp::Sub {
            Negate::Addend
        } else {
            Negate::Nothing
        };
        return Some(Fusion {
            mul,
            args: [x, y, b],
            negate,
        });
    }
    let (mul, [x, y]) = product(b)?;
    let negate = if *op == BinaryOp::Sub {
        Negate::Product
    } else {
        Negate::Nothing
    };
    Some(Fusion {
        mul,
        args: [x, y, a],
        negate,
    })
}
