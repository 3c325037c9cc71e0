//! Register promotion of an array element a loop accumulates into:
//! `for (p ...) o[k] += a[...] * b[...]` keeps `o[k]` in a loop-carried
//! value instead of loading and storing it every iteration.
//!
//! Pattern: a counted loop (`loops::stepped_loops`: header `h`, one entry
//! edge, one latch, the only exit `x` the header's branch) whose body holds
//! exactly one load and one store of `arr[idx]`, in one block `B` that
//! dominates the latch (so both run every iteration), the load first, with
//! `arr` and `idx` defined outside the loop. Nothing else in the loop may
//! touch memory `arr` could share: no other access to `arr` or to an array
//! that may alias it (only distinct fresh arrays, `predicates::is_fresh_array`
//! after `Function::array_root`, are known not to), no call, element
//! reference, reference load or store, `copyrange` or `free`. The element
//! must be accessed before the loop, by a load or store in a block that
//! dominates the entry edge, so it is in bounds (arrays never shrink).
//! `x` must have `h` as its only predecessor.
//!
//! Then the entry edge loads the element (unchecked, proven in bounds)
//! into a new parameter of `h`, the load in `B` becomes that parameter, the
//! store's value goes to `h` over the back edge instead of to memory, and
//! `x` stores the parameter back on entry.
//!
//! Assumes: verified input. Guarantees: verified output; memory holds the
//! same values as before wherever code outside the loop can read it.

use crate::cfg::incoming_edges;
use crate::loops::{stepped_loops, SteppedLoop};
use crate::predicates::is_fresh_array;
use crate::rewrite::substitute;
use adc_ir::dom::DomTree;
use adc_ir::{Block, Function, Inst, InstData, Value, ValueDef};
use std::collections::{BTreeMap, BTreeSet};

pub fn run(func: &mut Function) -> bool {
    let mut changed = false;
    // Each promotion changes the loops' blocks: find them again.
    for _ in 0..64 {
        let all: BTreeSet<Block> = func.layout.iter().copied().collect();
        let dom = DomTree::new(func);
        let edges = incoming_edges(func);
        let found = stepped_loops(func, &all)
            .into_iter()
            .filter(|lp| edges[&lp.exit].len() == 1)
            .find_map(|lp| candidate(func, &dom, &lp).map(|c| (lp, c)));
        let Some((lp, c)) = found else { break };
        rewrite(func, &lp, &c);
        changed = true;
    }
    changed
}

struct Candidate {
    array: Value,
    index: Value,
    load: Inst,
    store: Inst,
    /// The value the store writes.
    value: Value,
}

fn defined_in(func: &Function, v: Value, blocks: &BTreeSet<Block>) -> bool {
    match func.dfg.value_def(v) {
        ValueDef::Param(b, _) => blocks.contains(&b),
        ValueDef::Result(i, _) => blocks.iter().any(|b| func.dfg.block(*b).insts.contains(&i)),
        ValueDef::Unused => true,
    }
}

/// Whether two arrays are known not to share an element.
fn disjoint(func: &Function, a: Value, b: Value) -> bool {
    let (ra, rb) = (func.array_root(a), func.array_root(b));
    ra != rb && is_fresh_array(func, ra) && is_fresh_array(func, rb)
}

/// Assumes `lp`'s exit has one predecessor (the caller checks).
fn candidate(func: &Function, dom: &DomTree, lp: &SteppedLoop) -> Option<Candidate> {
    // Accesses in the loop, by (array, index), in block order.
    let mut accesses: Vec<(Inst, Block, Value, Value, bool)> = Vec::new();
    for &b in &lp.body {
        for &i in &func.dfg.block(b).insts {
            match func.dfg.inst(i) {
                InstData::Load { array, index, .. } => accesses.push((i, b, *array, *index, false)),
                InstData::Store { array, index, .. } => accesses.push((i, b, *array, *index, true)),
                InstData::Call { .. }
                | InstData::ElemRef { .. }
                | InstData::RefLoad { .. }
                | InstData::RefStore { .. }
                | InstData::CopyRange { .. }
                | InstData::ArrayFree { .. }
                | InstData::DeferFree { .. } => return None,
                _ => (),
            }
        }
    }
    let mut groups: BTreeMap<(Value, Value), Vec<usize>> = BTreeMap::new();
    for (k, a) in accesses.iter().enumerate() {
        groups.entry((a.2, a.3)).or_default().push(k);
    }
    'next: for (&(array, index), ks) in &groups {
        let [l, s] = ks.as_slice() else { continue };
        let (load, store) = (accesses[*l], accesses[*s]);
        if load.4 || !store.4 || load.1 != store.1 || load.1 == lp.header {
            continue;
        }
        let block = load.1;
        let insts = &func.dfg.block(block).insts;
        let pos = |i: Inst| insts.iter().position(|x| *x == i);
        if pos(load.0) >= pos(store.0) || !dom.dominates(block, lp.latch) {
            continue;
        }
        if defined_in(func, array, &lp.body) || defined_in(func, index, &lp.body) {
            continue;
        }
        for a in &accesses {
            let same = a.2 == array && a.3 == index;
            if !same && !disjoint(func, a.2, array) {
                continue 'next;
            }
        }
        if !accessed_before(func, dom, &lp.body, lp.entry, array, |x| x == index) {
            continue;
        }
        let InstData::Store { value, .. } = func.dfg.inst(store.0) else {
            continue;
        };
        return Some(Candidate {
            array,
            index,
            load: load.0,
            store: store.0,
            value: *value,
        });
    }
    None
}

/// A load or store of `array[x]`, `x` an index `same_index` takes, outside
/// the loop `body` in a block that dominates the entry edge's source
/// `entry` (then `array[x]` is in bounds there: arrays never shrink).
pub(crate) fn accessed_before(
    func: &Function,
    dom: &DomTree,
    body: &BTreeSet<Block>,
    entry: Block,
    array: Value,
    same_index: impl Fn(Value) -> bool,
) -> bool {
    func.layout.iter().any(|&b| {
        !body.contains(&b)
            && dom.dominates(b, entry)
            && func
                .dfg
                .block(b)
                .insts
                .iter()
                .any(|&i| match func.dfg.inst(i) {
                    InstData::Load {
                        array: a, index: x, ..
                    }
                    | InstData::Store {
                        array: a, index: x, ..
                    } => *a == array && same_index(*x),
                    _ => false,
                })
    })
}

fn rewrite(func: &mut Function, lp: &SteppedLoop, c: &Candidate) {
    let elem = func.dfg.value_type(c.value);
    let span = func.span(c.load);
    let tag = func.tag(c.load);
    let acc = func.dfg.append_block_param(lp.header, elem);
    // The entry edge: load the element before the jump.
    let init = func.dfg.make_inst(
        InstData::Load {
            array: c.array,
            index: c.index,
            checked: false,
        },
        &[elem],
    );
    func.set_span(init, span);
    func.set_tag(init, tag);
    let init_value = func.dfg.inst_results(init)[0];
    let entry_insts = &mut func.dfg.block_mut(lp.entry).insts;
    entry_insts.insert(entry_insts.len() - 1, init);
    for (from, arg) in [(lp.entry, init_value), (lp.latch, c.value)] {
        let term = func
            .terminator(from)
            .expect("invariant: verified blocks end in a terminator");
        for call in func.dfg.inst_mut(term).successors_mut() {
            if call.block == lp.header {
                call.args.push(arg);
            }
        }
    }
    // The exit stores the element back.
    let store = func.dfg.make_inst(
        InstData::Store {
            array: c.array,
            index: c.index,
            value: acc,
            checked: false,
        },
        &[],
    );
    let store_span = func.span(c.store);
    func.set_span(store, store_span);
    func.set_tag(store, tag);
    func.dfg.block_mut(lp.exit).insts.insert(0, store);
    let load_value = func.dfg.inst_results(c.load)[0];
    for b in func.layout.clone() {
        func.dfg
            .block_mut(b)
            .insts
            .retain(|i| *i != c.load && *i != c.store);
    }
    substitute(func, &[(load_value, acc)].into_iter().collect());
}
