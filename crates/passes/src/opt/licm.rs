//! `licm`: loop-invariant code motion. A pure instruction in a loop whose
//! operands are all defined outside the loop moves to the loop's preheader,
//! so it runs once per entry instead of once per iteration.
//!
//! Assumes: verified input. A loop is the natural loop of a back edge
//! (`latch -> header`, `header` dominating `latch`); its preheader is the
//! only block outside the loop that branches to the header (with a `jump`,
//! or a `br` whose other target skips the loop, as the guard of a rotated
//! loop does). Only instructions that can neither trap nor observe memory
//! move: pure ones (`InstData::is_pure`, which includes `len`) and float
//! divisions. Since they cannot fail, running them when the loop body
//! would not have is harmless.
//! Guarantees: verified output, same behaviour; inner loops are handled
//! before outer ones, so an invariant of a nest moves as far out as it can.

use crate::loops::natural_loop;
use crate::util::{incoming_edges, is_float_div};
use adc_ir::dom::DomTree;
use adc_ir::{Block, Function, Inst, Value};
use std::collections::BTreeSet;

pub fn run(func: &mut Function) -> bool {
    let dom = DomTree::new(func);
    let edges = incoming_edges(func);
    let mut loops: Vec<(Block, BTreeSet<Block>)> = Vec::new();
    for &h in &dom.rpo {
        for e in edges.get(&h).into_iter().flatten() {
            if dom.dominates(h, e.from) {
                match loops.iter_mut().find(|(lh, _)| *lh == h) {
                    Some((_, body)) => body.extend(natural_loop(&edges, h, e.from)),
                    None => loops.push((h, natural_loop(&edges, h, e.from))),
                }
            }
        }
    }
    loops.sort_by_key(|(_, body)| body.len());
    let mut changed = false;
    for (header, body) in loops {
        let outside: Vec<Block> = edges[&header]
            .iter()
            .map(|e| e.from)
            .filter(|b| !body.contains(b))
            .collect();
        let [pre] = outside.as_slice() else { continue };
        // A preheader that only may enter the loop (the guard `rotate`
        // leaves, `br c, header, exit`) runs the hoisted instructions
        // whether or not the loop runs: harmless, they cannot fail.
        let branches_to_header = func.terminator(*pre).is_some_and(|t| {
            func.dfg
                .inst(t)
                .successors()
                .iter()
                .any(|c| c.block == header)
        });
        if !branches_to_header {
            continue;
        }
        changed |= hoist(func, *pre, &dom.rpo, &body);
    }
    changed
}

fn movable(func: &Function, inst: Inst) -> bool {
    func.dfg.inst(inst).is_pure() || is_float_div(func, inst)
}

fn hoist(func: &mut Function, pre: Block, rpo: &[Block], body: &BTreeSet<Block>) -> bool {
    let mut inside: BTreeSet<Value> = BTreeSet::new();
    for &b in body {
        inside.extend(func.dfg.block_params(b).iter().copied());
        for &i in &func.dfg.block(b).insts {
            inside.extend(func.dfg.inst_results(i).iter().copied());
        }
    }
    let mut moved: Vec<Inst> = Vec::new();
    // Reverse post-order: an instruction's operands moved before it.
    for &b in rpo.iter().filter(|b| body.contains(b)) {
        for &i in &func.dfg.block(b).insts {
            if movable(func, i) && !func.dfg.inst(i).args().iter().any(|a| inside.contains(a)) {
                for r in func.dfg.inst_results(i) {
                    inside.remove(r);
                }
                moved.push(i);
            }
        }
    }
    if moved.is_empty() {
        return false;
    }
    let set: BTreeSet<Inst> = moved.iter().copied().collect();
    for &b in body {
        func.dfg.block_mut(b).insts.retain(|i| !set.contains(i));
    }
    let insts = &mut func.dfg.block_mut(pre).insts;
    let at = insts.len() - 1;
    insts.splice(at..at, moved);
    true
}
