//! `propagate`: classifies every instruction of a generated derivative as
//! primal, differential or mixed, and checks that the classification is
//! consistent.
//!
//! Assumes: `linearize`'s output, whose `diff` tags mark the instructions
//! it emitted for tangents (only `linearize` knows which pointers are
//! shadows, so loads and stores through shadows come tagged).
//! Guarantees (check with `adc ir --after propagate`): the differential
//! values are the scalar tangent parameters, the results of `diff`
//! instructions, the tangent results of derivative calls, and every block
//! parameter that receives one (a fixpoint over the edges). Every other
//! instruction that uses a differential value is a terminator or a
//! derivative call, tagged `mixed`, and so is `dpair.make`, which joins a
//! float and its tangent; a terminator carrying neither a differential nor
//! a pair is primal.
//! No primal instruction uses a differential value, and every `diff`
//! instruction has one of the linear forms `transpose` turns around, with
//! its differential operands where linearity needs them. A forward request
//! is finished here (its request is dropped from the header).

use crate::ad::{diff_values, jvp_source, AdError};
use adc_ir::{AdMode, BinaryOp, FuncId, InstData, Module, Tag, Type, UnaryOp};

pub fn run(module: &mut Module, id: FuncId) -> Result<(), AdError> {
    let func = module.func(id);
    let kinds = diff_values(module, func);
    let mut tags = Vec::new();
    for &b in &func.layout {
        for &i in &func.dfg.block(b).insts {
            let data = func.dfg.inst(i);
            let span = func.span(i);
            let diff_operands: Vec<bool> = data.args().iter().map(|a| kinds[a.index()]).collect();
            let any = diff_operands.iter().any(|d| *d);
            let tag = match (func.tag(i), data) {
                (_, InstData::Jump { .. } | InstData::Branch { .. } | InstData::Return { .. }) => {
                    if let InstData::Branch { cond, .. } = data {
                        if kinds[cond.index()] {
                            return Err(AdError::internal(
                                "internal error: a branch on a differential value",
                                span,
                            ));
                        }
                    }
                    // A DifferentialPair carries a tangent too.
                    let carries_pair = data
                        .args()
                        .iter()
                        .any(|a| matches!(func.dfg.value_type(*a), Type::Pair(_)));
                    if any || carries_pair {
                        Tag::Mixed
                    } else {
                        Tag::Primal
                    }
                }
                (_, InstData::PairMake { .. }) => Tag::Mixed,
                (_, InstData::Call { func: callee, .. })
                    if jvp_source(module, *callee).is_some() =>
                {
                    Tag::Mixed
                }
                (Tag::Diff, d) => {
                    check_linear(d, &diff_operands)
                        .map_err(|m| AdError::internal(format!("internal error: {m}"), span))?;
                    Tag::Diff
                }
                (_, _) if any => {
                    return Err(AdError::internal(
                        format!(
                            "internal error: primal instruction `{}` uses a differential value",
                            adc_ir::print::fmt_inst_data(Some(module), data)
                        ),
                        span,
                    ))
                }
                _ => Tag::Primal,
            };
            tags.push((i, tag));
        }
    }
    let func = module.func_mut(id);
    for (i, t) in tags {
        func.set_tag(i, t);
    }
    // Vector mode keeps it for `widen`, and a dependency sweep for `sets`,
    // which finish the function.
    if func
        .deriv
        .as_ref()
        .is_some_and(|d| d.mode == AdMode::Forward && !d.vector && !d.sets)
    {
        func.deriv = None;
    }
    Ok(())
}

/// The differential forms `transpose` knows, with `diff[k]` telling which
/// operands are differential.
fn check_linear(data: &InstData, diff: &[bool]) -> Result<(), String> {
    let ok = match data {
        InstData::Const { .. } => true,
        InstData::Unary {
            op: UnaryOp::Neg, ..
        }
        | InstData::Convert { .. } => diff[0],
        InstData::Binary {
            op: BinaryOp::Add | BinaryOp::Sub,
            ..
        } => diff[0] && diff[1],
        InstData::Binary {
            op: BinaryOp::MulZ | BinaryOp::DivZ,
            ..
        } => diff[0] && !diff[1],
        InstData::Select { .. } => !diff[0],
        // Loads, stores and frees go through shadows (primal pointers).
        InstData::Load { .. } | InstData::RefLoad { .. } => !diff.iter().any(|d| *d),
        InstData::Store { .. } => !diff[0] && !diff[1],
        InstData::RefStore { .. } => !diff[0],
        InstData::ArrayFree { .. } | InstData::DeferFree { .. } => true,
        // The tangent half of a DifferentialPair.
        InstData::PairDiff { .. } => true,
        // Custom forward derivatives and tape traffic of tangents.
        InstData::Call { .. }
        | InstData::TapePush { .. }
        | InstData::TapePop { .. }
        | InstData::TapeRead { .. } => true,
        _ => false,
    };
    if ok {
        Ok(())
    } else {
        Err(format!(
            "`{}` is not a linear differential instruction",
            adc_ir::print::fmt_inst_data(None, data)
        ))
    }
}
