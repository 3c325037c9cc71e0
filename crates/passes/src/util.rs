//! Helpers shared by passes: predecessor lists, use counts, value
//! substitution.

use adc_ir::{Block, Function, Value};
use std::collections::BTreeMap;

/// Predecessor blocks of every block, one entry per incoming edge.
pub(crate) fn predecessors(func: &Function) -> BTreeMap<Block, Vec<Block>> {
    let mut preds: BTreeMap<Block, Vec<Block>> = BTreeMap::new();
    for &b in &func.layout {
        preds.entry(b).or_default();
        for s in func.successors(b) {
            preds.entry(s).or_default().push(b);
        }
    }
    preds
}

/// Applies a substitution map (followed transitively) to every operand.
pub(crate) fn substitute(func: &mut Function, map: &BTreeMap<Value, Value>) {
    if map.is_empty() {
        return;
    }
    let resolve = |mut v: Value| {
        let mut steps = 0;
        while let Some(&n) = map.get(&v) {
            v = n;
            steps += 1;
            if steps > map.len() {
                break;
            }
        }
        v
    };
    func.substitute(&resolve);
}

/// How many times each value is used as an operand.
pub(crate) fn use_counts(func: &Function) -> Vec<u32> {
    let mut counts = vec![0u32; func.dfg.num_values()];
    for &b in &func.layout {
        for &inst in &func.dfg.block(b).insts {
            func.dfg.inst(inst).for_each_arg(|v| counts[v.index()] += 1);
        }
    }
    counts
}
