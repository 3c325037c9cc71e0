//! `lower-pairs`: splits every DifferentialPair (`dpair<T>`) into its two
//! halves, the float and its tangent.
//!
//! Assumes: a verified function in which pairs are made only by
//! `dpair.make`, taken apart only by `dpair.primal` / `dpair.diff`, and
//! otherwise only passed to block parameters. That is what `linearize`
//! emits: a float that crosses a block boundary travels with its tangent as
//! one `dpair` block argument.
//! Guarantees (check with `adc ir --after lower-pairs`): no `dpair` type and
//! no `dpair.*` instruction is left. A block parameter `p: dpair<T>` has
//! become two parameters `(primal: T, tangent: T)` at its place, every
//! branch to it passes the two values the pair was made of, and each use of
//! `dpair.primal p` / `dpair.diff p` uses the matching half. Tags are kept,
//! and the tangent half is differential exactly when the pair's tangent
//! was, so `propagate`'s classification still holds. This is the "pair
//! lowering" that finishes a forward-mode derivative and that `unzip`
//! expects before it starts.

use crate::ad::AdError;
use crate::rewrite::{remove_insts, substitute};
use adc_ir::{Function, Inst, InstData, Type, Value};
use std::collections::{BTreeMap, BTreeSet};

pub fn run(func: &mut Function) -> Result<(), AdError> {
    let mut halves: BTreeMap<Value, (Value, Value)> = BTreeMap::new();
    for b in func.layout.clone() {
        let mut i = 0;
        while i < func.dfg.block_params(b).len() {
            let p = func.dfg.block_params(b)[i];
            let Type::Pair(s) = func.dfg.value_type(p) else {
                i += 1;
                continue;
            };
            let primal = func.dfg.insert_block_param(b, i, Type::Scalar(s));
            let tangent = func.dfg.insert_block_param(b, i + 1, Type::Scalar(s));
            func.dfg.remove_block_param(b, i + 2);
            halves.insert(p, (primal, tangent));
            i += 2;
        }
    }
    let insts: Vec<Inst> = func
        .layout
        .iter()
        .flat_map(|b| func.dfg.block(*b).insts.iter().copied())
        .collect();
    let mut dead = BTreeSet::new();
    // Pairs made anywhere, before any use is rewritten (layout order need
    // not be dominance order).
    for &inst in &insts {
        if let InstData::PairMake { args } = func.dfg.inst(inst) {
            halves.insert(func.dfg.inst_results(inst)[0], (args[0], args[1]));
            dead.insert(inst);
        }
    }
    let mut alias = BTreeMap::new();
    for &inst in &insts {
        let is_pair = |v: &Value| matches!(func.dfg.value_type(*v), Type::Pair(_));
        let unknown = || {
            AdError::internal(
                "internal error: a dpair that is neither made nor a block parameter",
                func.span(inst),
            )
        };
        match func.dfg.inst(inst) {
            InstData::PairMake { .. } => (),
            InstData::PairPrimal { pair } | InstData::PairDiff { pair } => {
                let (primal, tangent) = *halves.get(pair).ok_or_else(unknown)?;
                let half = match func.dfg.inst(inst) {
                    InstData::PairPrimal { .. } => primal,
                    _ => tangent,
                };
                alias.insert(func.dfg.inst_results(inst)[0], half);
                dead.insert(inst);
            }
            data if data.is_terminator() => {
                let mut data = data.clone();
                for call in data.successors_mut() {
                    let mut args = Vec::with_capacity(call.args.len());
                    for a in &call.args {
                        match halves.get(a) {
                            Some(&(primal, tangent)) => args.extend([primal, tangent]),
                            None if is_pair(a) => return Err(unknown()),
                            None => args.push(*a),
                        }
                    }
                    call.args = args;
                }
                *func.dfg.inst_mut(inst) = data;
            }
            data if data.args().iter().any(is_pair) => {
                return Err(AdError::internal(
                    "internal error: a dpair used other than by `dpair.primal`, `dpair.diff` or a branch",
                    func.span(inst),
                ))
            }
            _ => (),
        }
    }
    remove_insts(func, &dead);
    substitute(func, &alias);
    Ok(())
}

/// True when `func` has a value of type `dpair`.
pub fn has_pairs(func: &Function) -> bool {
    func.layout.iter().any(|b| {
        let block = func.dfg.block(*b);
        block
            .params
            .iter()
            .chain(block.insts.iter().flat_map(|i| func.dfg.inst_results(*i)))
            .any(|v| matches!(func.dfg.value_type(*v), Type::Pair(_)))
    })
}
