//! Redundant-load elimination within a block: a `load a, i` that follows a
//! `load a, i` or a `store a, i, v` with no write in between that may reach
//! `a[i]` is replaced by the earlier value. Reverse-mode code reads an
//! adjoint element right after adding to it (`d_u[i]` of a stencil), and
//! source code often reads one element twice (`u[i] * u[i]`); each removed
//! load is also a value the tape no longer keeps.
//!
//! A store of the value an element is known to hold (reverse mode's
//! `d_y[r]` put back as it was read) is removed too, and so is a store that
//! a later store to the same element (same array value, same index value)
//! overwrites before anything may read it: no load of an element that may
//! be it, no instruction that may read memory or stop the program (a
//! checked access, a call, ...) in between. Vector mode's unrolled inner
//! products stored each lane's partial sum after every term.
//!
//! A store to `a[j]` keeps what is known of `a[i]` when `i` and `j` are
//! the same value plus different constants (`i`, `i + 1`) or two different
//! constants (a bit-set sweep's count and next bit), and what is known
//! of other arrays when the two never share an element (`alias::Alias`:
//! objects of their own, such as two parameters, docs/arrays.md#the-aliasing-rule,
//! or views of one array over ranges that are apart, such as vector mode's
//! lanes). Calls, reference stores and frees forget everything. A checked
//! load may go: the earlier access checked the same index of the same array.
//!
//! Assumes: verified input. Guarantees: verified output.

use crate::alias::{Alias, ElemMap};
use crate::predicates::is_float_div;
use crate::rewrite::substitute;
use adc_ir::{Function, Inst, InstData, Value};
use std::collections::BTreeMap;

pub fn run(func: &mut Function) -> bool {
    let mut map: BTreeMap<Value, Value> = BTreeMap::new();
    let mut dead = std::collections::BTreeSet::new();
    let alias = Alias::new(func);
    for &b in &func.layout {
        // (array, index) -> the element's value.
        let mut known: ElemMap<Value> = ElemMap::new();
        // Stores no instruction may have read yet, by (array, index).
        let mut unread: ElemMap<Inst> = ElemMap::new();
        for &inst in &func.dfg.block(b).insts {
            let resolve = |v: Value| *map.get(&v).unwrap_or(&v);
            match func.dfg.inst(inst) {
                InstData::Load {
                    array,
                    index,
                    checked,
                } => {
                    let key = (resolve(*array), resolve(*index));
                    let result = func.dfg.inst_results(inst)[0];
                    match known.get(&alias, key) {
                        Some(&v) => {
                            map.insert(result, v);
                            dead.insert(inst);
                        }
                        None => {
                            known.insert(&alias, key, result);
                            if *checked {
                                unread.clear();
                            }
                            unread.retain_apart(&alias, key);
                        }
                    }
                }
                InstData::Store {
                    array,
                    index,
                    value,
                    checked,
                } => {
                    let key = (resolve(*array), resolve(*index));
                    let value = resolve(*value);
                    if known.get(&alias, key) == Some(&value) {
                        // Stores what the element already holds.
                        dead.insert(inst);
                        continue;
                    }
                    known.retain_apart(&alias, key);
                    known.insert(&alias, key, value);
                    // An earlier store to the element that nothing read is
                    // overwritten.
                    if let Some(earlier) = unread.remove(&alias, key) {
                        dead.insert(earlier);
                    }
                    if *checked {
                        // May stop the program (not at this element, which
                        // an earlier store reached), with the others done.
                        unread.clear();
                    }
                    unread.insert(&alias, key, inst);
                }
                InstData::Call { .. }
                | InstData::RefStore { .. }
                | InstData::ArrayFree { .. }
                | InstData::CopyRange { .. } => {
                    known.clear();
                    unread.clear();
                }
                // Reads memory, or may stop the program with the stores
                // done so far.
                d if d.has_side_effects() && !is_float_div(func, inst) => unread.clear(),
                InstData::RefLoad { .. } => unread.clear(),
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
