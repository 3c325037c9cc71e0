//! Common-subexpression elimination over the dominator tree: a pure
//! instruction identical to one whose block dominates it (and that comes
//! first when in the same block) is replaced by the earlier result.
//!
//! A depth-first walk of the dominator tree keeps the instructions of the
//! blocks on the current path in scope (a scoped table, popped when the
//! walk leaves a block), so each instruction is looked up once: linear in
//! the size of the function however deep the tree.
//!
//! Assumes: verified input. Guarantees: verified output.

use crate::rewrite::substitute;
use adc_ir::dom::dominators;
use adc_ir::{Block, Function, Value};
use std::collections::{BTreeMap, HashMap};

pub fn run(func: &mut Function) -> bool {
    let (rpo, idom) = dominators(func);
    let Some(&entry) = rpo.first() else {
        return false;
    };
    let mut children: Vec<Vec<Block>> = vec![Vec::new(); func.dfg.num_blocks()];
    for &b in rpo.iter().skip(1) {
        if let Some(d) = idom[b.index()] {
            children[d.index()].push(b);
        }
    }
    // Key -> the value in scope (at most one: of two identical instructions
    // on one dominator-tree path, the later is replaced by the earlier).
    let mut scope: HashMap<String, Value> = HashMap::new();
    let mut map: BTreeMap<Value, Value> = BTreeMap::new();
    // (block, entering?); on leaving, the keys the block put in scope go.
    let mut stack = vec![(entry, true)];
    let mut added: Vec<Vec<String>> = vec![Vec::new(); func.dfg.num_blocks()];
    while let Some((b, enter)) = stack.pop() {
        if !enter {
            for key in std::mem::take(&mut added[b.index()]) {
                scope.remove(&key);
            }
            continue;
        }
        stack.push((b, false));
        for &c in children[b.index()].iter().rev() {
            stack.push((c, true));
        }
        for &inst in &func.dfg.block(b).insts {
            let mut data = func.dfg.inst(inst).clone();
            if !data.is_pure() && !crate::predicates::is_float_div(func, inst) {
                continue;
            }
            data.map_args(|v| *map.get(&v).unwrap_or(&v));
            let result = func.dfg.inst_results(inst)[0];
            let key = format!(
                "{}:{}",
                func.dfg.value_type(result),
                adc_ir::print::fmt_inst_data(None, &data)
            );
            match scope.get(&key) {
                Some(v) => {
                    map.insert(result, *v);
                }
                None => {
                    scope.insert(key.clone(), result);
                    added[b.index()].push(key);
                }
            }
        }
    }
    let changed = !map.is_empty();
    substitute(func, &map);
    changed
}
