//! CFG simplification: a block whose only predecessor ends in an
//! unconditional jump to it is merged into that predecessor (its
//! parameters replaced by the jump's arguments).
//!
//! Assumes: verified input. Guarantees: verified output.

use crate::util::{incoming_edges, substitute};
use adc_ir::{Function, InstData, Value};
use std::collections::BTreeMap;

pub fn run(func: &mut Function) -> bool {
    let mut changed = false;
    loop {
        let edges = incoming_edges(func);
        let entry = func.entry_block();
        let mut merged = false;
        for &b in func.layout.clone().iter() {
            let Some(term) = func.terminator(b) else {
                continue;
            };
            let InstData::Jump { dest } = func.dfg.inst(term).clone() else {
                continue;
            };
            let target = dest.block;
            if target == b
                || Some(target) == entry
                || edges.get(&target).map(|e| e.len()) != Some(1)
            {
                continue;
            }
            let params = func.dfg.block_params(target).to_vec();
            let map: BTreeMap<Value, Value> = params
                .iter()
                .copied()
                .zip(dest.args.iter().copied())
                .collect();
            let moved = std::mem::take(&mut func.dfg.block_mut(target).insts);
            let insts = &mut func.dfg.block_mut(b).insts;
            insts.pop();
            insts.extend(moved);
            func.layout.retain(|x| *x != target);
            while !func.dfg.block_params(target).is_empty() {
                let last = func.dfg.block_params(target).len() - 1;
                func.dfg.remove_block_param(target, last);
            }
            substitute(func, &map);
            merged = true;
            break;
        }
        if !merged {
            return changed;
        }
        changed = true;
    }
}
