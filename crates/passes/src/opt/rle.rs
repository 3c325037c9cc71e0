//! Redundant-load elimination within a block: a `load a, i` that follows a
//! `load a, i` or a `store a, i, v` with no write in between that may reach
//! `a[i]` is replaced by the earlier value. Reverse-mode code reads an
//! adjoint element right after adding to it (`d_u[i]` of a stencil), and
//! source code often reads one element twice (`u[i] * u[i]`); each removed
//! load is also a value the tape no longer keeps.
//!
//! A store of the value an element is known to hold (reverse mode's
//! `d_y[r]` put back as it was read) is removed too.
//!
//! A store to `a[j]` keeps what is known of `a[i]` when `i` and `j` are
//! the same value plus different constants (`i`, `i + 1`), and what is known
//! of other arrays when both are objects of their own (array parameters
//! never alias, docs/arrays.md#the-aliasing-rule; arrays made by `new` or `copy` are fresh). Calls, reference stores and frees forget
//! everything. A checked load may go: the earlier access checked the same
//! index of the same array.
//!
//! Assumes: verified input. Guarantees: verified output.

use crate::predicates::is_fresh_array;
use crate::rewrite::substitute;
use adc_ir::offset::offset_of;
use adc_ir::{Function, InstData, Value};
use std::collections::BTreeMap;

pub fn run(func: &mut Function) -> bool {
    let mut map: BTreeMap<Value, Value> = BTreeMap::new();
    let mut dead = std::collections::BTreeSet::new();
    for &b in &func.layout {
        // (array, index) -> the element's value.
        let mut known: Vec<((Value, Value), Value)> = Vec::new();
        for &inst in &func.dfg.block(b).insts {
            let resolve = |v: Value| *map.get(&v).unwrap_or(&v);
            match func.dfg.inst(inst) {
                InstData::Load { array, index, .. } => {
                    let key = (resolve(*array), resolve(*index));
                    let result = func.dfg.inst_results(inst)[0];
                    match known.iter().find(|(k, _)| *k == key) {
                        Some(&(_, v)) => {
                            map.insert(result, v);
                            dead.insert(inst);
                        }
                        None => known.push((key, result)),
                    }
                }
                InstData::Store {
                    array,
                    index,
                    value,
                    ..
                } => {
                    let (a, j) = (resolve(*array), resolve(*index));
                    if known.contains(&((a, j), resolve(*value))) {
                        // Stores what the element already holds.
                        dead.insert(inst);
                        continue;
                    }
                    let (jb, jd) = offset_of(func, j);
                    known.retain(|&((ka, ki), _)| {
                        let (ib, id) = offset_of(func, ki);
                        let other_array =
                            ka != a && is_fresh_array(func, ka) && is_fresh_array(func, a);
                        other_array || (ka == a && ib == jb && id != jd)
                    });
                    known.push(((a, j), resolve(*value)));
                }
                InstData::Call { .. }
                | InstData::RefStore { .. }
                | InstData::ArrayFree { .. }
                | InstData::CopyRange { .. } => known.clear(),
                _ => (),
            }
        }
    }
    if map.is_empty() && dead.is_empty() {
        return false;
    }
    crate::rewrite::remove_insts(func, &dead);
    substitute(func, &map);
    true
}
