//! Common-subexpression elimination over the dominator tree: a pure
//! instruction identical to one whose block dominates it (and that comes
//! first when in the same block) is replaced by the earlier result.
//!
//! Assumes: verified input. Guarantees: verified output.

use crate::util::substitute;
use adc_ir::verify::{dominates, dominators};
use adc_ir::{Block, Function, Value};
use std::collections::BTreeMap;

pub fn run(func: &mut Function) -> bool {
    let (rpo, idom) = dominators(func);
    let mut seen: BTreeMap<String, Vec<(Value, Block)>> = BTreeMap::new();
    let mut map: BTreeMap<Value, Value> = BTreeMap::new();
    for &b in &rpo {
        for &inst in &func.dfg.block(b).insts {
            let mut data = func.dfg.inst(inst).clone();
            if !data.is_pure() && !crate::util::is_float_div(func, inst) {
                continue;
            }
            data.map_args(|v| *map.get(&v).unwrap_or(&v));
            let result = func.dfg.inst_results(inst)[0];
            let key = format!(
                "{}:{}",
                func.dfg.value_type(result),
                adc_ir::print::fmt_inst_data(None, &data)
            );
            let candidates = seen.entry(key).or_default();
            // Blocks are visited in reverse post-order, so a dominating
            // block's instructions (and earlier ones in this block) come first.
            match candidates.iter().find(|(_, db)| dominates(&idom, *db, b)) {
                Some((v, _)) => {
                    map.insert(result, *v);
                }
                None => candidates.push((result, b)),
            }
        }
    }
    let changed = !map.is_empty();
    substitute(func, &map);
    changed
}
