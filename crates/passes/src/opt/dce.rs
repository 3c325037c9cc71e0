//! Dead-code elimination: removes unreachable blocks and instructions
//! without side effects whose results are unused (to a fixed point).
//!
//! Assumes: verified input. Guarantees: verified output.

use crate::util::use_counts;
use adc_ir::dom::dominators;
use adc_ir::Function;

pub fn run(func: &mut Function) -> bool {
    let mut reachable = vec![false; func.dfg.num_blocks()];
    for b in dominators(func).0 {
        reachable[b.index()] = true;
    }
    let before = func.layout.len();
    func.layout.retain(|b| reachable[b.index()]);
    let mut changed = func.layout.len() != before;
    loop {
        let counts = use_counts(func);
        let mut removed = false;
        for b in func.layout.clone() {
            let insts = func.dfg.block(b).insts.clone();
            let keep: Vec<_> = insts
                .iter()
                .copied()
                .filter(|&inst| {
                    !crate::util::is_removable(func, inst)
                        || func
                            .dfg
                            .inst_results(inst)
                            .iter()
                            .any(|r| counts[r.index()] > 0)
                })
                .collect();
            if keep.len() != insts.len() {
                func.dfg.block_mut(b).insts = keep;
                removed = true;
            }
        }
        if !removed {
            return changed;
        }
        changed = true;
    }
}
