//! CFG simplification: a block whose only predecessor ends in an
//! unconditional jump to it is merged into that predecessor (its
//! parameters replaced by the jump's arguments).
//!
//! All merges happen in one walk over the layout: merging a block into its
//! only predecessor changes no other block's number of incoming edges, so
//! the counts taken first stay right, and a block keeps absorbing the next
//! one of its chain while its new terminator allows. The substitutions are
//! applied together at the end (they resolve transitively). Linear in the
//! size of the function.
//!
//! Assumes: verified input. Guarantees: verified output.

use crate::cfg::incoming_edges;
use crate::rewrite::substitute;
use adc_ir::{Function, InstData, Value};
use std::collections::BTreeMap;

pub fn run(func: &mut Function) -> bool {
    let edges = incoming_edges(func);
    let entry = func.entry_block();
    let mut removed = vec![false; func.dfg.num_blocks()];
    let mut map: BTreeMap<Value, Value> = BTreeMap::new();
    for b in func.layout.clone() {
        if removed[b.index()] {
            continue;
        }
        loop {
            let Some(term) = func.terminator(b) else {
                break;
            };
            let InstData::Jump { dest } = func.dfg.inst(term).clone() else {
                break;
            };
            let target = dest.block;
            if target == b
                || Some(target) == entry
                || edges.get(&target).map(|e| e.len()) != Some(1)
            {
                break;
            }
            let params = func.dfg.block_params(target).to_vec();
            map.extend(params.iter().copied().zip(dest.args.iter().copied()));
            let moved = std::mem::take(&mut func.dfg.block_mut(target).insts);
            let insts = &mut func.dfg.block_mut(b).insts;
            insts.pop();
            insts.extend(moved);
            removed[target.index()] = true;
            while !func.dfg.block_params(target).is_empty() {
                let last = func.dfg.block_params(target).len() - 1;
                func.dfg.remove_block_param(target, last);
            }
        }
    }
    let changed = removed.iter().any(|r| *r);
    if changed {
        func.layout.retain(|x| !removed[x.index()]);
        substitute(func, &map);
    }
    changed
}
