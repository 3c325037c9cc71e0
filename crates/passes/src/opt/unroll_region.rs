//! `unroll-region`: a counted loop of at most `MAX_TRIPS` constant
//! iterations whose body is several blocks (branches, inner loops, calls)
//! becomes that many copies of its blocks in a row. `unroll` takes the
//! two-block loops; this one the loops it cannot, where the copies expose
//! what each iteration recomputes from the same operands to `cse` (a loop
//! over the two rows of a Jacobian block, calling one reverse derivative
//! with the same primal arguments twice: once `inline` has copied the
//! tape-free derivative in, the second primal sweep is the first's).
//!
//! Pattern: a counted loop (`loops::counted_loops`, whose only exit is its
//! header's branch) whose header ends in `br (cmp counter + d, C)` with
//! one edge staying in the loop, the counter entering with a constant, so
//! the trip count `T` comes from running the test on the constants
//! (`unroll::trip_count`); `T <= MAX_TRIPS`, more than two blocks, at most
//! `MAX_INSTS` instructions in all, no `checkpoint` marker.
//!
//! Then `T` copies of every block of the loop and one more of the header
//! (the visit whose test leaves): copy `k`'s back edge enters copy `k + 1`'s
//! header, each header copy but the last jumps into its iteration and the
//! last to the exit. Only the header's values can be used outside the loop
//! (it dominates the exit): they take the last header copy's.
//!
//! Assumes: verified input. Guarantees: verified output, the same
//! instructions run in the same order.

use crate::cfg::branch_test;
use crate::loops::{counted_loops, CountedLoop};
use adc_ir::{Block, BlockCall, Function, Inst, InstData, Value};
use std::collections::{BTreeMap, BTreeSet};

const MAX_TRIPS: i64 = 2;
const MAX_INSTS: usize = 400;

pub fn run(func: &mut Function) -> bool {
    let mut changed = false;
    // One loop per scan: an unroll changes the blocks of the loops around it.
    for _ in 0..64 {
        let all: BTreeSet<Block> = func.layout.iter().copied().collect();
        let found = counted_loops(func, &all)
            .into_iter()
            .find_map(|lp| plan(func, &lp).map(|p| (lp, p)));
        let Some((lp, (trips, stays_then))) = found else {
            break;
        };
        unroll(func, &lp, trips, stays_then);
        changed = true;
    }
    changed
}

/// The trip count and whether the header's `then` edge stays in the loop.
fn plan(func: &Function, lp: &CountedLoop) -> Option<(i64, bool)> {
    if lp.body.len() <= 2 {
        return None;
    }
    let h = lp.header;
    let t = branch_test(func, h)?;
    let stays_then = match (
        lp.body.contains(&t.then_dest.block),
        lp.body.contains(&t.else_dest.block),
    ) {
        (true, false) => true,
        (false, true) => false,
        _ => return None,
    };
    let counter = func.dfg.block_params(h)[lp.param];
    let trips = super::unroll::trip_count(func, &t, counter, lp, stays_then, 0)?;
    let insts = || lp.body.iter().flat_map(|b| func.dfg.block(*b).insts.iter());
    let marker = insts().any(|i| matches!(func.dfg.inst(*i), InstData::LoopCheckpoint { .. }));
    (trips <= MAX_TRIPS && insts().count() <= MAX_INSTS && !marker).then_some((trips, stays_then))
}

/// Copies of the loop's blocks, in layout order, replacing the loop.
fn unroll(func: &mut Function, lp: &CountedLoop, trips: i64, stays_then: bool) {
    let h = lp.header;
    let blocks: Vec<Block> = func
        .layout
        .iter()
        .copied()
        .filter(|b| lp.body.contains(b))
        .collect();
    // bmap[k][b]: copy k of block b (copy `trips` has the header only).
    let mut bmap: Vec<BTreeMap<Block, Block>> = Vec::new();
    let mut vmaps: Vec<BTreeMap<Value, Value>> = Vec::new();
    let mut copied: Vec<(usize, Inst)> = Vec::new();
    let mut new_layout: Vec<Block> = Vec::new();
    for k in 0..=trips as usize {
        let mut bm = BTreeMap::new();
        let mut vm = BTreeMap::new();
        for &b in blocks.iter().filter(|b| k < trips as usize || **b == h) {
            let nb = func.dfg.make_block();
            bm.insert(b, nb);
            new_layout.push(nb);
            for p in func.dfg.block_params(b).to_vec() {
                let ty = func.dfg.value_type(p);
                vm.insert(p, func.dfg.append_block_param(nb, ty));
            }
            for i in func.dfg.block(b).insts.clone() {
                let data = func.dfg.inst(i).clone();
                let types = crate::defs::result_types(func, i);
                let ni = func.append_inst(nb, data, &types, func.span(i));
                func.set_tag(ni, func.tag(i));
                let olds = func.dfg.inst_results(i).to_vec();
                let news = func.dfg.inst_results(ni).to_vec();
                vm.extend(olds.into_iter().zip(news));
                copied.push((k, ni));
            }
        }
        bmap.push(bm);
        vmaps.push(vm);
    }
    for &(k, ni) in &copied {
        let vm = &vmaps[k];
        let data = func.dfg.inst_mut(ni);
        data.map_args(|v| *vm.get(&v).unwrap_or(&v));
        for dest in data.successors_mut() {
            if dest.block == h {
                // The back edge (the header's only edge from inside).
                dest.block = bmap[k + 1][&h];
            } else if let Some(nb) = bmap[k].get(&dest.block) {
                dest.block = *nb;
            }
        }
    }
    // Each header copy's branch takes its known edge.
    for k in 0..=trips as usize {
        let hk = bmap[k][&h];
        let br = func
            .terminator(hk)
            .expect("invariant: a verified block ends in a terminator");
        let InstData::Branch {
            then_dest,
            else_dest,
            ..
        } = func.dfg.inst(br).clone()
        else {
            unreachable!("invariant: plan() checked the header's branch")
        };
        let stay = (k < trips as usize) == stays_then;
        let dest = if stay { then_dest } else { else_dest };
        *func.dfg.inst_mut(br) = InstData::Jump { dest };
    }
    // The entry edge enters copy 0.
    let entry_term = func
        .terminator(lp.entry)
        .expect("invariant: a verified block ends in a terminator");
    for call in func.dfg.inst_mut(entry_term).successors_mut() {
        if call.block == h {
            *call = BlockCall {
                block: bmap[0][&h],
                args: std::mem::take(&mut call.args),
            };
        }
    }
    // Where the header was, counting the blocks that stay.
    let pos = func
        .layout
        .iter()
        .take_while(|b| **b != h)
        .filter(|b| !lp.body.contains(b))
        .count();
    func.layout.retain(|b| !lp.body.contains(b));
    func.layout.splice(pos..pos, new_layout);
    // Uses after the loop take the last header copy's values.
    let last = &vmaps[trips as usize];
    let mut finals: BTreeMap<Value, Value> = BTreeMap::new();
    for p in func.dfg.block_params(h).to_vec() {
        finals.insert(p, last[&p]);
    }
    for i in func.dfg.block(h).insts.clone() {
        for r in func.dfg.inst_results(i).to_vec() {
            finals.insert(r, last[&r]);
        }
    }
    crate::rewrite::substitute(func, &finals);
}
