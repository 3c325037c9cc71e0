//! Removes redundant block parameters: a parameter whose incoming
//! arguments are all one value `v` (or the parameter itself) is replaced by
//! `v` everywhere. This is the copy propagation of block-parameter SSA and
//! cleans up the frontend's maximal SSA (Braun et al. 2013, "Simple and
//! Efficient Construction of SSA Form", trivial phi removal).
//!
//! Assumes: verified input. Guarantees: verified output; the entry block's
//! parameters are untouched.

use crate::util::{incoming_edges, substitute};
use adc_ir::{Block, Function, Value};
use std::collections::BTreeMap;

pub fn run(func: &mut Function) -> bool {
    let mut changed_any = false;
    loop {
        let edges = incoming_edges(func);
        let mut map: BTreeMap<Value, Value> = BTreeMap::new();
        let mut removals = Vec::new();
        for &b in func.layout.iter().skip(1) {
            for (i, &p) in func.dfg.block_params(b).iter().enumerate() {
                // The distinct incoming values other than `p` itself.
                let mut incoming: Vec<Value> = edges[&b]
                    .iter()
                    .map(|e| e.args[i])
                    .filter(|a| *a != p)
                    .collect();
                incoming.sort();
                incoming.dedup();
                if let [only] = incoming[..] {
                    map.insert(p, only);
                    removals.push((b, i));
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
            let mut sources: Vec<Block> = edges[&b].iter().map(|e| e.from).collect();
            sources.dedup();
            for from in sources {
                let term = func
                    .terminator(from)
                    .expect("invariant: an edge's source ends in a terminator");
                for call in func.dfg.inst_mut(term).successors_mut() {
                    if call.block == b {
                        call.args.remove(i);
                    }
                }
            }
            func.dfg.remove_block_param(b, i);
        }
    }
}
