//! `hoist`: an instruction that both arms of a branch compute the same way
//! is computed once, before the branch (code hoisting).
//!
//! Code ported from C repeats work in the arms of an `if`: GradBench's det
//! has `if (sign > 0) detM = detM + M0j * detS; else detM = detM - M0j *
//! detS;`. Left in the arms, the product is computed in either, and a
//! reverse derivative tapes its operands in each arm's block (both are
//! needed by the arm's adjoint); hoisted, the product's adjoint is in the
//! branching block, which tapes them once, and the arms tape nothing.
//!
//! Assumes: verified input. It matches a block `b` ending in `br c, s1,
//! s2` with `s1 != s2`, each arm entered from `b` only. An instruction
//! `x` of `s1` moves to the end of `b` (before the branch) when it is pure
//! float arithmetic that cannot trap (`InstData::is_pure`, or a division
//! that cannot trap: `predicates::is_safe_div`; not a constant), its operands are defined
//! outside `s1` or are results already moved, and `s2` holds an
//! instruction `y` with the same operation, operands (those of `s2`'s
//! moved results read as their counterparts in `s1`) and result types;
//! `y`'s results are then replaced by `x`'s and `y` removed.
//!
//! Guarantees: exactly one arm runs after `b`, and both computed `x`'s
//! value from the same operands, so computing it in `b` instead changes
//! no value; it cannot trap, so running it before the arm's other
//! instructions changes no effect.

use crate::cfg::{branch_at, incoming_edges};
use crate::predicates::is_safe_div;
use adc_ir::{Block, Function, Inst, InstData, Value};
use std::collections::{BTreeMap, BTreeSet};

pub fn run(func: &mut Function) -> bool {
    let edges = incoming_edges(func);
    let mut changed = false;
    for b in func.layout.clone() {
        let Some((_, t, e)) = branch_at(func, b) else {
            continue;
        };
        let (s1, s2) = (t.block, e.block);
        let only_from_b = |s: Block| edges.get(&s).is_some_and(|es| es.len() == 1);
        if s1 == s2 || s1 == b || s2 == b || !only_from_b(s1) || !only_from_b(s2) {
            continue;
        }
        changed |= hoist_pair(func, b, s1, s2);
    }
    changed
}

/// Values defined in block `s` (its parameters and results).
fn defined_in(func: &Function, s: Block) -> BTreeSet<Value> {
    let mut defs: BTreeSet<Value> = func.dfg.block_params(s).iter().copied().collect();
    for &i in &func.dfg.block(s).insts {
        defs.extend(func.dfg.inst_results(i).iter().copied());
    }
    defs
}

/// Float arithmetic only: constants and integer (index) arithmetic cost
/// next to nothing in either arm, and the reverse sweep computes them
/// again rather than taping them; moved, they only changed register
/// allocation (GradBench ht's plain Jacobian took 1.03x as long).
fn hoistable(func: &Function, inst: Inst) -> bool {
    let data = func.dfg.inst(inst);
    let float = func
        .dfg
        .inst_results(inst)
        .first()
        .is_some_and(|r| func.dfg.value_type(*r).elem().is_float());
    !data.is_terminator()
        && !matches!(data, InstData::Const { .. })
        && (data.is_pure() || is_safe_div(func, inst))
        && float
}

/// Moves the instructions `s1` and `s2` share to the end of `b`.
fn hoist_pair(func: &mut Function, b: Block, s1: Block, s2: Block) -> bool {
    let local1 = defined_in(func, s1);
    let local2 = defined_in(func, s2);
    // Results of `s2` moved, read as their `s1` counterparts.
    let mut map: BTreeMap<Value, Value> = BTreeMap::new();
    // Results of `s1` moved (available in `b` from now on).
    let mut moved: BTreeSet<Value> = BTreeSet::new();
    let mut pairs: Vec<(Inst, Inst)> = Vec::new();
    let mut taken: BTreeSet<Inst> = BTreeSet::new();
    for &x in &func.dfg.block(s1).insts {
        if !hoistable(func, x) {
            continue;
        }
        let xd = func.dfg.inst(x);
        let mut ready = true;
        xd.for_each_arg(|a| ready &= !local1.contains(&a) || moved.contains(&a));
        if !ready {
            continue;
        }
        let types = crate::defs::result_types(func, x);
        let found = func.dfg.block(s2).insts.iter().copied().find(|&y| {
            if taken.contains(&y) || !hoistable(func, y) {
                return false;
            }
            let mut yd = func.dfg.inst(y).clone();
            let mut ok = true;
            yd.map_args(|a| match map.get(&a) {
                Some(&m) => m,
                None => {
                    ok &= !local2.contains(&a);
                    a
                }
            });
            ok && yd == *xd && crate::defs::result_types(func, y) == types
        });
        let Some(y) = found else { continue };
        taken.insert(y);
        for (&ry, &rx) in func
            .dfg
            .inst_results(y)
            .iter()
            .zip(func.dfg.inst_results(x))
        {
            map.insert(ry, rx);
            moved.insert(rx);
        }
        pairs.push((x, y));
    }
    if pairs.is_empty() {
        return false;
    }
    let xs: BTreeSet<Inst> = pairs.iter().map(|p| p.0).collect();
    let ys: BTreeSet<Inst> = pairs.iter().map(|p| p.1).collect();
    func.dfg.block_mut(s1).insts.retain(|i| !xs.contains(i));
    func.dfg.block_mut(s2).insts.retain(|i| !ys.contains(i));
    let insts = &mut func.dfg.block_mut(b).insts;
    let at = insts.len() - 1;
    for (n, (x, _)) in pairs.iter().enumerate() {
        insts.insert(at + n, *x);
    }
    crate::rewrite::substitute(func, &map);
    true
}
