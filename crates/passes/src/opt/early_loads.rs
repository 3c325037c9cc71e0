//! Early loads of cold parameters: in a function whose callers mark some
//! array parameters cold (`Function::cold`: few of their elements are
//! read per call, far apart, such as an element Jacobian's input shadows,
//! docs/jacobians.md#element-jacobians), an unchecked load of such an
//! array that no write to it may precede at that element moves up to a
//! checked access of the same index (a load or store of an array as long)
//! that runs before it in every call: there the index is in bounds.
//!
//! The reverse run adds each read's adjoint into the shadow, `d[j] += a`,
//! at the end of the run; the read of `x[j]` is at its start. ba's point
//! shadows (two lanes, `len(X)` apart) are cache misses, and a load that
//! misses holds up the instructions after it: started beside the primal
//! read `x[j]`, itself a miss, the three misses overlap instead of
//! following one another. The values loaded are the same (nothing writes
//! the element in between), so the results are bit for bit the same.
//!
//! A write *may precede* the load when its block reaches the load's block
//! (through one edge or more), or it comes first in the same block. Such a
//! store is harmless when `alias::Alias::apart` proves it another element
//! (another lane's view, or the same index value plus another constant);
//! any other use of the array's root that may write it (a call, a branch
//! or jump passing it, a reference to an element, ...) keeps the load in
//! place. The access it goes after is on no cycle (unless in the load's
//! block), so no load enters a loop.
//!
//! Runs after `inline` (the reads of a callee's reverse run are the
//! caller's then), first of the loop-shape passes. Assumes: verified
//! input. Guarantees: verified output, the same values.

use crate::alias::Alias;
use crate::cfg::incoming_edges;
use adc_ir::dom::{blocks_on_cycles, DomTree};
use adc_ir::{Block, Function, Inst, InstData, Type, Value, ValueDef};
use std::collections::{BTreeMap, BTreeSet};

pub fn run(func: &mut Function) -> bool {
    let Some(entry) = func.entry_block() else {
        return false;
    };
    let params = func.dfg.block_params(entry).to_vec();
    let roots: BTreeSet<Value> = (func.cold.iter())
        .filter_map(|&k| params.get(k).copied())
        .filter(|&p| matches!(func.dfg.value_type(p), Type::Array(_)))
        .collect();
    if roots.is_empty() {
        return false;
    }
    let alias = Alias::new(func);
    let reaches = reaching(func);
    // Per block, its instructions that touch a cold root: loads (the
    // candidates), stores (with their element) and other uses (writes of
    // any element, for all this pass knows).
    let mut loads: Vec<(Block, usize, Inst, Value, Value)> = Vec::new();
    let mut stores: Vec<(Block, usize, Value, Value)> = Vec::new();
    let mut others: Vec<(Block, usize)> = Vec::new();
    for &b in &func.layout {
        for (n, &inst) in func.dfg.block(b).insts.iter().enumerate() {
            let data = func.dfg.inst(inst);
            let cold = |v: Value| {
                matches!(func.dfg.value_type(v), Type::Array(_)) && roots.contains(&alias.root(v))
            };
            match data {
                InstData::Load {
                    array,
                    index,
                    checked,
                } if cold(*array) => {
                    if !checked {
                        loads.push((b, n, inst, *array, *index));
                    }
                }
                InstData::Store { array, index, .. } if cold(*array) => {
                    stores.push((b, n, *array, *index));
                }
                // Reads only, or makes a view (whose accesses are the
                // root's, seen above).
                InstData::Load { .. }
                | InstData::ArrayLen { .. }
                | InstData::ArrayView { .. }
                | InstData::LenCheck { .. }
                | InstData::AliasCheck { .. } => (),
                d if d.args().into_iter().any(cold) => others.push((b, n)),
                _ => (),
            }
        }
    }
    // Whether something at `(wb, wn)` may run before `(b, n)` in one call.
    let before = |(wb, wn): (Block, usize), (b, n): (Block, usize)| {
        reaches.get(&b).is_some_and(|r| r.contains(&wb)) || (wb == b && wn < n)
    };
    let mut first: Vec<(Inst, Block, usize, Value, Value)> = Vec::new();
    for &(b, n, inst, array, index) in &loads {
        let blocked = others.iter().any(|&w| before(w, (b, n)))
            || stores.iter().any(|&(sb, sn, sa, si)| {
                before((sb, sn), (b, n)) && !alias.apart((array, index), (sa, si))
            });
        if !blocked {
            first.push((inst, b, n, array, index));
        }
    }
    if first.is_empty() {
        return false;
    }
    let moves = placements(func, &alias, &first);
    if moves.is_empty() {
        return false;
    }
    for (load, after) in moves {
        for &b in &func.layout {
            func.dfg.block_mut(b).insts.retain(|x| *x != load);
        }
        let b = *func
            .layout
            .iter()
            .find(|&&b| func.dfg.block(b).insts.contains(&after))
            .expect("invariant: the checked access is in the layout");
        let insts = &mut func.dfg.block_mut(b).insts;
        let at = insts
            .iter()
            .position(|x| *x == after)
            .expect("invariant: found above");
        insts.insert(at + 1, load);
    }
    true
}

/// For each first load `(inst, block, position, array, index)`, the
/// checked access it goes after, if any: a checked load or store at the
/// same index value of an array as long as the loaded one (so the index
/// is in bounds there), that comes before the load in every run (its
/// block dominates the load's, or it is earlier in the same block), on
/// no cycle (unless in the load's block), after the loaded array's
/// definition, and earliest in the layout.
fn placements(
    func: &Function,
    alias: &Alias,
    first: &[(Inst, Block, usize, Value, Value)],
) -> Vec<(Inst, Inst)> {
    let dom = DomTree::new(func);
    let cycles = blocks_on_cycles(func);
    let order: BTreeMap<Block, usize> = func
        .layout
        .iter()
        .enumerate()
        .map(|(k, b)| (*b, k))
        .collect();
    let mut at: BTreeMap<Inst, (Block, usize)> = BTreeMap::new();
    let mut lens: BTreeMap<Value, Vec<Value>> = BTreeMap::new();
    let mut checked: Vec<(Inst, Block, usize, Value, Value)> = Vec::new();
    for &b in &func.layout {
        for (n, &inst) in func.dfg.block(b).insts.iter().enumerate() {
            at.insert(inst, (b, n));
            if let InstData::ArrayLen { array } = func.dfg.inst(inst) {
                let n = func.dfg.inst_results(inst)[0];
                lens.entry(*array).or_default().push(n);
            }
            if let Some((array, index)) = crate::defs::checked_access(func, inst) {
                checked.push((inst, b, n, array, index));
            }
        }
    }
    // Whether `(xb, xn)` runs before `(b, n)` whenever `(b, n)` runs.
    let precedes = |(xb, xn): (Block, usize), (b, n): (Block, usize)| {
        if xb == b {
            xn < n
        } else {
            dom.dominates(xb, b)
        }
    };
    let mut out = Vec::new();
    for &(load, b, n, array, index) in first {
        let defined = match func.dfg.value_def(array) {
            ValueDef::Result(i, _) => at.get(&i).copied(),
            ValueDef::Param(pb, _) => Some((pb, 0)),
            ValueDef::Unused => None,
        };
        let Some(defined) = defined else { continue };
        let best = (checked.iter())
            .filter(|c| c.4 == index && c.3 != array)
            .filter(|c| precedes((c.1, c.2), (b, n)))
            .filter(|c| c.1 == b || !cycles.contains(&c.1))
            .filter(|c| defined == (c.1, c.2) || precedes(defined, (c.1, c.2)))
            .filter(|c| {
                let ns = lens.get(&c.3).map(Vec::as_slice).unwrap_or(&[]);
                ns.iter().any(|&len| alias.has_length(array, len))
            })
            .min_by_key(|c| (order[&c.1], c.2));
        // (A load right after its access, or after loads there, already
        // overlaps with it: it stays, and a second run changes nothing.)
        let insts = &func.dfg.block(b).insts;
        let there = |c: &&(Inst, Block, usize, Value, Value)| {
            c.1 == b
                && (c.2 + 1..n).all(|k| matches!(func.dfg.inst(insts[k]), InstData::Load { .. }))
        };
        if let Some(c) = best.filter(|c| !there(c)) {
            out.push((load, c.0));
        }
    }
    out
}

/// Per block, the blocks that reach it through one edge or more.
fn reaching(func: &Function) -> BTreeMap<Block, BTreeSet<Block>> {
    let preds: BTreeMap<Block, Vec<Block>> = incoming_edges(func)
        .into_iter()
        .map(|(b, es)| (b, es.into_iter().map(|e| e.from).collect()))
        .collect();
    let mut out = BTreeMap::new();
    for &b in &func.layout {
        let mut seen: BTreeSet<Block> = BTreeSet::new();
        let mut work: Vec<Block> = preds.get(&b).cloned().unwrap_or_default();
        while let Some(p) = work.pop() {
            if seen.insert(p) {
                work.extend(preds.get(&p).into_iter().flatten().copied());
            }
        }
        out.insert(b, seen);
    }
    out
}
