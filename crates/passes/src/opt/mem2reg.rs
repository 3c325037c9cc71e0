//! `mem2reg`: promotes stack slots to SSA values.
//!
//! A slot whose reference is only ever loaded from and stored to (never
//! passed to a call, stored, or sent along a branch) becomes a value: each
//! load reads the value of the last store on its dominator-tree path, and
//! blocks in the iterated dominance frontier of the stores take it as a
//! block parameter. A load before any store reads zero (slots are only
//! read after a store in IR the frontend and the derivative passes build;
//! zero is what the derivative passes store first anyway).
//!
//! Assumes: verified input. Guarantees: verified output; fewer
//! `slot`/`rload`/`rstore`. The derivative passes keep adjoints that cross
//! blocks in slots, so this is what turns them into registers.

use crate::rewrite::substitute;
use adc_ir::dom::dominators;
use adc_ir::{Block, Constant, Function, Inst, InstData, Type, Value};
use std::collections::{BTreeMap, BTreeSet};

pub fn run(func: &mut Function) -> bool {
    // Most functions, most rounds of the fixed point, have no slot left:
    // done before any analysis.
    let has_slot = func.layout.iter().any(|&b| {
        (func.dfg.block(b).insts.iter()).any(|&i| matches!(func.dfg.inst(i), InstData::Slot))
    });
    if !has_slot {
        return false;
    }
    let (rpo, idom) = dominators(func);
    let reachable: BTreeSet<Block> = rpo.iter().copied().collect();
    // Unreachable blocks would need arguments for new parameters too;
    // `simplify-cfg` removes them first.
    if rpo.is_empty() || func.layout.iter().any(|b| !reachable.contains(b)) {
        return false;
    }
    // Candidate slots (every block is reachable here), then those used
    // otherwise than as the reference of a load or store.
    let mut slots: BTreeMap<Value, (Block, Inst)> = BTreeMap::new();
    for &b in &func.layout {
        for &i in &func.dfg.block(b).insts {
            if let InstData::Slot = func.dfg.inst(i) {
                slots.insert(func.dfg.inst_results(i)[0], (b, i));
            }
        }
    }
    let mut bad: BTreeSet<Value> = BTreeSet::new();
    for &b in &func.layout {
        for &i in &func.dfg.block(b).insts {
            match func.dfg.inst(i) {
                InstData::Slot | InstData::RefLoad { .. } => (),
                InstData::RefStore { value, .. } => {
                    if slots.contains_key(value) {
                        bad.insert(*value);
                    }
                }
                other => other.for_each_arg(|a| {
                    if slots.contains_key(&a) {
                        bad.insert(a);
                    }
                }),
            }
        }
    }
    slots.retain(|s, _| !bad.contains(s));
    if slots.is_empty() {
        return false;
    }
    let entry = rpo[0];
    // Dominance frontiers.
    let preds = crate::cfg::incoming_edges(func);
    let mut frontier: BTreeMap<Block, BTreeSet<Block>> = BTreeMap::new();
    for &b in &rpo {
        let ps: Vec<Block> = preds[&b]
            .iter()
            .map(|e| e.from)
            .filter(|p| reachable.contains(p))
            .collect();
        if ps.len() < 2 {
            continue;
        }
        for p in ps {
            let mut runner = p;
            while Some(runner) != idom[b.index()] {
                frontier.entry(runner).or_default().insert(b);
                match idom[runner.index()] {
                    Some(up) if up != runner => runner = up,
                    _ => break,
                }
            }
        }
    }
    // The blocks that store to each slot, in layout order, each once.
    let mut stored_in: BTreeMap<Value, Vec<Block>> = BTreeMap::new();
    for &b in &func.layout {
        for &i in &func.dfg.block(b).insts {
            if let InstData::RefStore { ptr, .. } = func.dfg.inst(i) {
                if slots.contains_key(ptr) {
                    let blocks = stored_in.entry(*ptr).or_default();
                    if blocks.last() != Some(&b) {
                        blocks.push(b);
                    }
                }
            }
        }
    }
    // Blocks that take each slot's value as a parameter.
    let mut params: BTreeMap<Block, Vec<(Value, Value)>> = BTreeMap::new();
    for &s in slots.keys() {
        let ty = Type::Scalar(func.dfg.value_type(s).elem());
        let mut work: Vec<Block> = stored_in.remove(&s).unwrap_or_default();
        let mut placed = BTreeSet::new();
        while let Some(b) = work.pop() {
            for &f in frontier.get(&b).into_iter().flatten() {
                if placed.insert(f) {
                    let p = func.dfg.append_block_param(f, ty);
                    params.entry(f).or_default().push((s, p));
                    work.push(f);
                }
            }
        }
    }
    // Zero, the value before any store, defined first in the entry block.
    let mut zeros: BTreeMap<Value, Value> = BTreeMap::new();
    let mut new_entry = Vec::new();
    for &s in slots.keys() {
        let t = func.dfg.value_type(s).elem();
        let z = func.dfg.make_inst(
            InstData::Const {
                value: Constant::zero(t),
            },
            &[Type::Scalar(t)],
        );
        func.set_span(z, adc_ir::Span::UNDEFINED);
        new_entry.push(z);
        zeros.insert(s, func.dfg.inst_results(z)[0]);
    }
    let old = std::mem::take(&mut func.dfg.block_mut(entry).insts);
    func.dfg.block_mut(entry).insts = new_entry.into_iter().chain(old).collect();
    // Rename along the dominator tree.
    let mut children: BTreeMap<Block, Vec<Block>> = BTreeMap::new();
    for &b in &rpo[1..] {
        if let Some(p) = idom[b.index()] {
            children.entry(p).or_default().push(b);
        }
    }
    let mut loads: BTreeMap<Value, Value> = BTreeMap::new();
    let mut dead: BTreeSet<Inst> = slots.values().map(|(_, i)| *i).collect();
    // The current value of each slot, with an undo log per block of the
    // dominator-tree walk (copying the whole map per block would make the
    // walk quadratic in the number of slots times blocks).
    let mut cur = zeros;
    let mut undo: Vec<Vec<(Value, Value)>> = vec![Vec::new(); func.dfg.num_blocks()];
    let mut stack = vec![(entry, true)];
    while let Some((b, enter)) = stack.pop() {
        if !enter {
            for (s, old) in std::mem::take(&mut undo[b.index()]).into_iter().rev() {
                cur.insert(s, old);
            }
            continue;
        }
        let mut log = Vec::new();
        for (s, p) in params.get(&b).into_iter().flatten() {
            if let Some(old) = cur.insert(*s, *p) {
                log.push((*s, old));
            }
        }
        for &i in &func.dfg.block(b).insts.clone() {
            match func.dfg.inst(i).clone() {
                InstData::RefLoad { ptr } if cur.contains_key(&ptr) => {
                    loads.insert(func.dfg.inst_results(i)[0], cur[&ptr]);
                    dead.insert(i);
                }
                InstData::RefStore { ptr, value } if cur.contains_key(&ptr) => {
                    if let Some(old) = cur.insert(ptr, value) {
                        log.push((ptr, old));
                    }
                    dead.insert(i);
                }
                _ => (),
            }
        }
        if let Some(t) = func.terminator(b) {
            let mut data = func.dfg.inst(t).clone();
            for call in data.successors_mut() {
                for (s, _) in params.get(&call.block).into_iter().flatten() {
                    call.args.push(cur[s]);
                }
            }
            *func.dfg.inst_mut(t) = data;
        }
        undo[b.index()] = log;
        stack.push((b, false));
        for &c in children.get(&b).into_iter().flatten().rev() {
            stack.push((c, true));
        }
    }
    for b in func.layout.clone() {
        func.dfg.block_mut(b).insts.retain(|i| !dead.contains(i));
    }
    // A stored value may itself be a promoted load: resolve transitively.
    substitute(func, &loads);
    true
}
