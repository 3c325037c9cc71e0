//! Sinking of float loads and arithmetic to where their block first needs
//! them. Cranelift computes pure arithmetic right before its first use by
//! an instruction with effects, but keeps loads where they are: vector
//! mode's lanes come one instruction at a time (32 loads, then 32
//! products, then 32 sums), so a width-32 derivative loaded every lane's
//! operands before the first lane's store used them, and its registers
//! spilled. Sunk to the store that uses them, each lane's loads and
//! arithmetic run together, lane after lane.
//!
//! Per block: a movable instruction is an unchecked load with a float
//! result or pure float arithmetic (`add`, `mul`, `mulz`, a math function,
//! a float division, ...; not a constant); every other instruction stays
//! in place. In
//! reverse order, a movable instruction goes right before the earliest
//! place any of its users in the block takes. A value the terminator
//! passes on (a loop's running sum) stays where it is computed, and so do
//! the movable instructions it is computed from. A load goes no later than the first instruction
//! between that may write its element: a store not `alias::apart` from it,
//! or any other instruction with effects but a load (a call, `free`,
//! `copyrange`, a reference store, tape operations), counting at most
//! `MAX_WRITES` stores. Instructions moved to one place keep their order.
//! Two neighbours codegen may run as one `f64x2` lane pair (vector mode's
//! adjacent lanes of one operation, `predicates::lane_neighbours`) go
//! together, where the earlier of the two would: lane pairs run pair after
//! pair.
//! Only blocks that need more float registers than x86-64 has
//! (`FLOAT_REGISTERS`) at some point of their order are reordered: in
//! others, loads issued early hide their latency (kmeans' `dir` took 1.04
//! times as long with every block sunk).
//!
//! Assumes: verified input. Guarantees: verified output; the same
//! instructions, each after its operands; no load crosses a write that may
//! change what it reads.

use crate::alias::Alias;
use crate::predicates::{is_float_div, lane_neighbours};
use adc_ir::{Block, Function, Inst, InstData, Value, ValueDef};
use std::collections::BTreeMap;

/// Stores a load is checked against before it stops sinking.
const MAX_WRITES: usize = 64;

/// Float registers of x86-64 (SSE and AVX: 16). A block whose float
/// values never need more at once keeps its order: loads issued early
/// hide their latency.
const FLOAT_REGISTERS: usize = 16;

pub fn run(func: &mut Function) -> bool {
    let mut changed = false;
    let escaping = escaping(func);
    for b in func.layout.clone() {
        let insts = func.dfg.block(b).insts.clone();
        let order = schedule(func, &insts, &escaping);
        if order != insts {
            func.dfg.block_mut(b).insts = order;
            changed = true;
        }
    }
    changed
}

fn float_result(func: &Function, inst: Inst) -> bool {
    matches!(func.dfg.inst_results(inst), [r] if func.dfg.value_type(*r).elem().is_float())
}

/// Whether `inst` may move later in its block (the module comment).
fn movable(func: &Function, inst: Inst) -> bool {
    if !float_result(func, inst) {
        return false;
    }
    match func.dfg.inst(inst) {
        InstData::Load { checked, .. } => !checked,
        // (Constants need no register until used: Cranelift makes them there.)
        InstData::Const { .. }
        | InstData::RefLoad { .. }
        | InstData::Slot
        | InstData::ArrayLen { .. } => false,
        d => !d.has_side_effects() || is_float_div(func, inst),
    }
}

/// Whether `w` (which stays) may write the element a load of `array[index]` reads.
fn may_write(alias: &Alias, func: &Function, w: Inst, array: Value, index: Value) -> bool {
    match func.dfg.inst(w) {
        InstData::Store {
            array: a, index: j, ..
        } => !alias.apart((array, index), (*a, *j)),
        InstData::Load { .. } => false,
        d => d.has_side_effects() && !is_float_div(func, w),
    }
}

/// Whether each value is used in a block other than its definition's.
fn escaping(func: &Function) -> Vec<bool> {
    let mut home: BTreeMap<Inst, Block> = BTreeMap::new();
    for &b in &func.layout {
        home.extend(func.dfg.block(b).insts.iter().map(|i| (*i, b)));
    }
    let mut out = vec![false; func.dfg.num_values()];
    for &b in &func.layout {
        for &i in &func.dfg.block(b).insts {
            let mut mark = |a: Value| {
                if let ValueDef::Result(d, _) = func.dfg.value_def(a) {
                    if home.get(&d) != Some(&b) {
                        out[a.index()] = true;
                    }
                }
            };
            func.dfg.inst(i).for_each_arg(&mut mark);
        }
    }
    out
}

/// The most float values of the block live at once in this order: each
/// from its definition to its last use in the block, or to the end when
/// another block uses it.
fn float_pressure(
    func: &Function,
    insts: &[Inst],
    users: &[Vec<usize>],
    escapes: &[bool],
) -> usize {
    let n = insts.len();
    // Live-range ends, as +1 at the definition and -1 after the last use.
    let mut delta = vec![0i64; n + 1];
    for (p, &i) in insts.iter().enumerate() {
        if float_result(func, i) {
            let last = if escapes[p] {
                n
            } else {
                users[p].iter().copied().max().unwrap_or(p) + 1
            };
            delta[p] += 1;
            delta[last] -= 1;
        }
    }
    let mut live = 0i64;
    let mut most = 0i64;
    for d in delta {
        live += d;
        most = most.max(live);
    }
    most as usize
}

/// The block's instructions in their new order.
fn schedule(func: &Function, insts: &[Inst], escaping: &[bool]) -> Vec<Inst> {
    let alias = Alias::new(func);
    let n = insts.len();
    let pos: BTreeMap<Inst, usize> = insts.iter().enumerate().map(|(p, i)| (*i, p)).collect();
    // In-block users of each position's results.
    let mut users: Vec<Vec<usize>> = vec![Vec::new(); n];
    for (p, &i) in insts.iter().enumerate() {
        let mut mark = |a: Value| {
            if let ValueDef::Result(d, _) = func.dfg.value_def(a) {
                if let Some(&q) = pos.get(&d) {
                    users[q].push(p);
                }
            }
        };
        // (Block arguments included: the terminator uses what it passes.)
        func.dfg.inst(i).for_each_arg(&mut mark);
    }
    let escapes: Vec<bool> = insts
        .iter()
        .map(|i| {
            func.dfg
                .inst_results(*i)
                .iter()
                .any(|r| escaping[r.index()])
        })
        .collect();
    if float_pressure(func, insts, &users, &escapes) <= FLOAT_REGISTERS {
        return insts.to_vec();
    }
    // Positions of the instructions that stay and may write memory.
    let writes: Vec<usize> = (0..n)
        .filter(|&p| {
            let d = func.dfg.inst(insts[p]);
            !matches!(d, InstData::Load { .. })
                && d.has_side_effects()
                && !is_float_div(func, insts[p])
        })
        .collect();
    let terminator = n
        .checked_sub(1)
        .filter(|&t| func.dfg.inst(insts[t]).is_terminator());
    // Each position's place: (before which position, 0 if moved there or
    // 1 if it stays at its own), and whether it stays for the terminator.
    let mut key: Vec<(usize, u8)> = (0..n).map(|p| (p, 1)).collect();
    let mut pinned = vec![false; n];
    let partner = lane_pairs(func, insts);
    for p in (0..n).rev() {
        place(
            func,
            &alias,
            insts,
            p,
            (&users, &writes, terminator),
            &mut key,
            &mut pinned,
        );
        // A lane pair goes where the earlier of its two would.
        if let Some(q) = partner[p] {
            let k = key[p].min(key[q]);
            (key[p], key[q]) = (k, k);
        }
    }
    let mut order: Vec<usize> = (0..n).collect();
    order.sort_by_key(|&p| (key[p], p));
    order.into_iter().map(|p| insts[p]).collect()
}

/// `p`'s place (`key`), or `pinned` when the terminator needs it (the
/// module comment); its users' places are known.
fn place(
    func: &Function,
    alias: &Alias,
    insts: &[Inst],
    p: usize,
    (users, writes, terminator): (&[Vec<usize>], &[usize], Option<usize>),
    key: &mut [(usize, u8)],
    pinned: &mut [bool],
) {
    let i = insts[p];
    if !movable(func, i) {
        return;
    }
    if users[p]
        .iter()
        .any(|u| Some(*u) == terminator || pinned[*u])
    {
        pinned[p] = true;
        return;
    }
    let Some(mut at) = users[p].iter().map(|u| key[*u].0).min() else {
        return;
    };
    if let InstData::Load { array, index, .. } = func.dfg.inst(i) {
        let first = writes.partition_point(|w| *w <= p);
        let between = writes[first..].iter().take_while(|w| **w < at);
        for (k, &w) in between.enumerate() {
            if k >= MAX_WRITES || may_write(alias, func, insts[w], *array, *index) {
                at = w;
                break;
            }
        }
    }
    if at > p {
        key[p] = (at, 0);
    }
}

/// Each position's lane partner: `p + 1` where the two are lanes codegen
/// may pair (`predicates::lane_neighbours`, both movable), taken left to
/// right as codegen does.
fn lane_pairs(func: &Function, insts: &[Inst]) -> Vec<Option<usize>> {
    let mut out = vec![None; insts.len()];
    let mut p = 0;
    while p + 1 < insts.len() {
        let (a, b) = (insts[p], insts[p + 1]);
        if movable(func, a) && movable(func, b) && lane_neighbours(func, a, b) {
            out[p] = Some(p + 1);
            p += 2;
        } else {
            p += 1;
        }
    }
    out
}
