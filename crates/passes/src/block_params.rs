//! Removes redundant block parameters: a parameter whose incoming
//! arguments are all one value `v` (or the parameter itself) is replaced by
//! `v` everywhere. This is the copy propagation of block-parameter SSA and
//! cleans up the frontend's maximal SSA (Braun et al. 2013, "Simple and
//! Efficient Construction of SSA Form", trivial phi removal).
//!
//! Assumes: verified input. Guarantees: verified output; the entry block's
//! parameters are untouched.

use crate::util::{predecessors, substitute};
use adc_ir::{Function, Value};
use std::collections::BTreeMap;

pub fn run(func: &mut Function) -> bool {
    let Some(entry) = func.entry_block() else {
        return false;
    };
    let mut changed_any = false;
    loop {
        let preds = predecessors(func);
        let mut map: BTreeMap<Value, Value> = BTreeMap::new();
        let mut removals = Vec::new();
        for &b in func.layout.iter().skip(1) {
            let params = func.dfg.block_params(b).to_vec();
            for (i, &p) in params.iter().enumerate() {
                let mut same: Option<Value> = None;
                let mut redundant = true;
                for &pred in &preds[&b] {
                    let term = func
                        .terminator(pred)
                        .expect("invariant: verified blocks end in a terminator");
                    for call in func.dfg.inst(term).successors() {
                        if call.block != b {
                            continue;
                        }
                        let a = call.args[i];
                        if a == p || Some(a) == same {
                            continue;
                        }
                        if same.is_none() {
                            same = Some(a);
                        } else {
                            redundant = false;
                        }
                    }
                }
                if redundant {
                    if let Some(v) = same {
                        map.insert(p, v);
                        removals.push((b, i));
                    }
                }
            }
        }
        if removals.is_empty() {
            return changed_any;
        }
        changed_any = true;
        substitute(func, &map);
        // Remove from the highest index down so earlier indices stay valid.
        removals.sort();
        for &(b, i) in removals.iter().rev() {
            let mut unique_preds = preds[&b].clone();
            unique_preds.dedup();
            for &pred in &unique_preds {
                let term = func
                    .terminator(pred)
                    .expect("invariant: verified blocks end in a terminator");
                for call in func.dfg.inst_mut(term).successors_mut() {
                    if call.block == b {
                        call.args.remove(i);
                    }
                }
            }
            func.dfg.remove_block_param(b, i);
        }
        let _ = entry;
    }
}
