//! Full unrolling of short counted loops: `for (int i = 0; i < 3; i++)`
//! over a 3-vector becomes three copies of the body in straight-line code,
//! where constant indices let `const-fold` drop bounds checks and `rle`
//! forward stores to loads.
//!
//! Pattern: a counted loop (`loops::counted_loops`) of two blocks, a header
//! `h` holding only a `cmp` of its counter against a constant `C` and the
//! branch on it (one edge into the loop, the other to the exit), and one
//! body block `B` that jumps back; the counter starts at a constant `c0`
//! and steps by a constant `s` (up, or down as `transpose`'s reverse sweeps
//! count: `cmp eq i, 0` from the trip count by -1), so the trip count `T`
//! comes from running the test on the constants; `T <= MAX_TRIPS`,
//! `T * n <= MAX_INSTS` where `n` counts `B`'s instructions that are not
//! tagged `diff`, and `T * len(B) <= MAX_LANE_INSTS`; no `checkpoint`
//! marker in `B`. (Vector mode repeats a body's tangent instructions once
//! per lane: a width-32 inner product of three terms is about 200
//! instructions, whose 32 partial sums stay in memory as a loop.)
//!
//! Then a new block `U` takes the entry edge: `T` copies of `B`'s
//! instructions, each with the header's parameters mapped to what the
//! previous copy passed back (the entry edge's arguments first), and a jump
//! to the exit; every use of a header parameter (the exit's arguments, and
//! uses in blocks the header dominates) takes its final value, and its test
//! (which `cse` may have shared with later code) the value that leaves. `h` and `B`
//! leave the layout.
//!
//! A loop of one block that tests at its bottom (`B(i): ...; br c, B(i +
//! s), X` or with the edges swapped), as `transpose` makes the reverse
//! sweep of a counted loop (the counter from the trip count down to zero:
//! `i' = sub i, 1; c = cmp eq i', 0`), is unrolled the same way when the
//! counter enters with a constant and the test is `cmp` of the counter
//! (or the counter plus a constant) against a constant: the trip count
//! comes from running the test on the constants (the body runs at least
//! once), and every value of the block used after it takes the last copy's.
//!
//! Assumes: verified input. Guarantees: verified output, the same
//! instructions run in the same order.

use crate::cfg::branch_test;
use crate::defs::int_const;
use crate::loops::{counted_loops, CountedLoop, LoopInit};
use adc_ir::offset::offset_of;
use adc_ir::{Block, BlockCall, Constant, Function, Inst, InstData, Tag, Type, Value};
use std::collections::{BTreeMap, BTreeSet};

const MAX_TRIPS: i64 = 8;
const MAX_INSTS: i64 = 96;
const MAX_LANE_INSTS: i64 = 1024;

pub fn run(func: &mut Function) -> bool {
    let mut changed = false;
    // Each scan unrolls every loop it finds whose blocks no earlier unroll
    // of the scan touched (an inner loop's unroll changes its outer loop),
    // and substitutes the final values once: one unroll per scan made 1,000
    // sequential short loops cost a thousand scans of the whole function.
    for _ in 0..256 {
        let all: BTreeSet<Block> = func.layout.iter().copied().collect();
        let mut touched: BTreeSet<Block> = BTreeSet::new();
        let mut finals: BTreeMap<Value, Value> = BTreeMap::new();
        for lp in counted_loops(func, &all) {
            let blocks = || {
                lp.body
                    .iter()
                    .copied()
                    .chain([lp.header, lp.entry, lp.latch, lp.exit])
            };
            if blocks().any(|b| touched.contains(&b)) {
                continue;
            }
            if let Some(p) = plan(func, &lp) {
                touched.extend(blocks());
                finals.extend(unroll(func, &lp, &p));
            } else if let Some(trips) = plan_bottom(func, &lp) {
                touched.extend(blocks());
                finals.extend(unroll_bottom(func, &lp, trips));
            }
        }
        if touched.is_empty() {
            break;
        }
        // The exits and what they dominate may use the headers' parameters
        // directly (a header dominates its exit): they take the final values.
        crate::rewrite::substitute(func, &finals);
        changed = true;
    }
    changed
}

struct Plan {
    body: Block,
    trips: i64,
    /// The header's test when the loop leaves.
    leaves: bool,
}

/// `cmp cond (counter + d), C` (or `C` first) of `test`, run on the
/// constants: the trip on which the loop leaves, when it does by
/// `MAX_TRIPS` (at the top: the body runs `k` times when the `k`-th test,
/// counting from 0, leaves; at the bottom, after each body, from 1).
/// `stays` is the test's value that stays in the loop.
pub(crate) fn trip_count(
    func: &Function,
    test: &crate::cfg::BranchTest,
    counter: Value,
    lp: &CountedLoop,
    stays: bool,
    first: i64,
) -> Option<i64> {
    let LoopInit::Const(c0) = lp.init else {
        return None;
    };
    let (x, bound, swapped) = match (int_const(func, test.args[0]), int_const(func, test.args[1])) {
        (None, Some(c)) => (test.args[0], c, false),
        (Some(c), None) => (test.args[1], c, true),
        _ => return None,
    };
    let (base, d) = offset_of(func, x);
    if base != counter {
        return None;
    }
    let mut i = c0;
    for trip in first..=MAX_TRIPS {
        let (v, c) = (Constant::I64(i.checked_add(d)?), Constant::I64(bound));
        let (a, b) = if swapped { (c, v) } else { (v, c) };
        if adc_ir::interp::compare(test.cond, a, b) != stays {
            return Some(trip);
        }
        i = i.checked_add(lp.step)?;
    }
    None
}

/// Whether `trips` copies of `block` fit the limits (and it holds no
/// `checkpoint` marker).
fn fits(func: &Function, block: Block, trips: i64) -> bool {
    let insts = &func.dfg.block(block).insts;
    let all = insts.len() as i64;
    let n = insts.iter().filter(|i| func.tag(**i) != Tag::Diff).count() as i64;
    let marker = insts
        .iter()
        .any(|i| matches!(func.dfg.inst(*i), InstData::LoopCheckpoint { .. }));
    trips * n <= MAX_INSTS && trips * all <= MAX_LANE_INSTS && !marker
}

fn plan(func: &Function, lp: &CountedLoop) -> Option<Plan> {
    if lp.body.len() != 2 || lp.latch == lp.header {
        return None;
    }
    let h = lp.header;
    let counter = func.dfg.block_params(h)[lp.param];
    let t = branch_test(func, h)?;
    // The header holds the `cmp` and the `br`, nothing else.
    let [cmp, _br] = func.dfg.block(h).insts.as_slice() else {
        return None;
    };
    let stays = match (t.then_dest.block, t.else_dest.block) {
        (a, b) if a == lp.latch && b == lp.exit && t.then_dest.args.is_empty() => true,
        (a, b) if a == lp.exit && b == lp.latch && t.else_dest.args.is_empty() => false,
        _ => return None,
    };
    if *cmp != t.cmp {
        return None;
    }
    let trips = trip_count(func, &t, counter, lp, stays, 0)?;
    let body = lp.latch;
    let back_to_header = matches!(
        func.terminator(body).map(|t| func.dfg.inst(t)),
        Some(InstData::Jump { dest }) if dest.block == h
    );
    (fits(func, body, trips) && back_to_header).then_some(Plan {
        body,
        trips,
        leaves: !stays,
    })
}

/// One iteration of a loop body copied to the end of `u`: the header's
/// `params` bound to `current`, then each of `body`'s instructions. The
/// map from the body's values (and `params`) to their copies.
fn copy_iteration(
    func: &mut Function,
    params: &[Value],
    current: &[Value],
    body: &[Inst],
    u: Block,
) -> BTreeMap<Value, Value> {
    let mut map: BTreeMap<Value, Value> = params
        .iter()
        .copied()
        .zip(current.iter().copied())
        .collect();
    for &i in body {
        crate::rewrite::copy_inst(func, i, u, &mut map);
    }
    map
}

/// Unrolls `lp` into one block and returns the substitution of its
/// header's parameters (and test) by their final values, which the caller
/// applies.
fn unroll(func: &mut Function, lp: &CountedLoop, p: &Plan) -> BTreeMap<Value, Value> {
    let h = lp.header;
    let params = func.dfg.block_params(h).to_vec();
    let (entry_term, mut current, u) = new_block_for(func, lp);
    let body_insts = func.dfg.block(p.body).insts.clone();
    let (last, copied) = body_insts
        .split_last()
        .expect("invariant: a verified block has a terminator");
    for _ in 0..p.trips {
        let map = copy_iteration(func, &params, &current, copied, u);
        let InstData::Jump { dest } = func.dfg.inst(*last) else {
            unreachable!("invariant: plan() checked that the body jumps back")
        };
        current = dest.args.iter().map(|a| *map.get(a).unwrap_or(a)).collect();
    }
    // The exit, with the header's parameters at their final values; the
    // header's test, which later code may share (`cse`), is false there.
    let mut map: BTreeMap<Value, Value> = params.iter().copied().zip(current).collect();
    let test = func.dfg.inst_results(func.dfg.block(h).insts[0])[0];
    let (span, tag) = (
        func.span(func.dfg.block(h).insts[0]),
        func.tag(func.dfg.block(h).insts[0]),
    );
    let no = func.append_inst(
        u,
        InstData::Const {
            value: Constant::Bool(p.leaves),
        },
        &[Type::BOOL],
        span,
    );
    func.set_tag(no, tag);
    map.insert(test, func.dfg.inst_results(no)[0]);
    let br = *func
        .dfg
        .block(h)
        .insts
        .last()
        .expect("invariant: the header ends in its branch");
    let InstData::Branch {
        then_dest,
        else_dest,
        ..
    } = func.dfg.inst(br).clone()
    else {
        unreachable!("invariant: plan() checked the header's branch")
    };
    let else_dest = if then_dest.block == p.body {
        else_dest
    } else {
        then_dest
    };
    let exit = BlockCall {
        block: else_dest.block,
        args: else_dest
            .args
            .iter()
            .map(|a| *map.get(a).unwrap_or(a))
            .collect(),
    };
    let (span, tag) = (func.span(br), func.tag(br));
    let jump = func.append_inst(u, InstData::Jump { dest: exit }, &[], span);
    func.set_tag(jump, tag);
    redirect_entry(func, entry_term, h, u);
    func.layout.retain(|b| *b != h && *b != p.body);
    map
}

/// The trip count of a one-block loop tested at its bottom (the module
/// comment), if it is to be unrolled.
fn plan_bottom(func: &Function, lp: &CountedLoop) -> Option<i64> {
    let h = lp.header;
    if lp.latch != h || lp.body.len() != 1 {
        return None;
    }
    let t = branch_test(func, h)?;
    let stays = match (t.then_dest.block == h, t.else_dest.block == h) {
        (true, false) => true,
        (false, true) => false,
        _ => return None,
    };
    let counter = func.dfg.block_params(h)[lp.param];
    let trips = trip_count(func, &t, counter, lp, stays, 1)?;
    fits(func, h, trips).then_some(trips)
}

/// Unrolls the one-block loop `lp` into `trips` copies of its body in a
/// new block; returns the substitution of the block's parameters and
/// results by the last copy's, which the caller applies.
fn unroll_bottom(func: &mut Function, lp: &CountedLoop, trips: i64) -> BTreeMap<Value, Value> {
    let h = lp.header;
    let params = func.dfg.block_params(h).to_vec();
    let (entry_term, mut current, u) = new_block_for(func, lp);
    let body_insts = func.dfg.block(h).insts.clone();
    let (last, copied) = body_insts
        .split_last()
        .expect("invariant: a verified block has a terminator");
    let InstData::Branch {
        then_dest,
        else_dest,
        ..
    } = func.dfg.inst(*last).clone()
    else {
        unreachable!("invariant: plan_bottom() checked the branch")
    };
    let (back, exit) = if then_dest.block == h {
        (then_dest, else_dest)
    } else {
        (else_dest, then_dest)
    };
    let mut map = BTreeMap::new();
    for _ in 0..trips {
        map = copy_iteration(func, &params, &current, copied, u);
        current = back.args.iter().map(|a| *map.get(a).unwrap_or(a)).collect();
    }
    let exit = BlockCall {
        block: exit.block,
        args: exit.args.iter().map(|a| *map.get(a).unwrap_or(a)).collect(),
    };
    let (span, tag) = (func.span(*last), func.tag(*last));
    let jump = func.append_inst(u, InstData::Jump { dest: exit }, &[], span);
    func.set_tag(jump, tag);
    redirect_entry(func, entry_term, h, u);
    func.layout.retain(|b| *b != h);
    map
}

/// The new block that takes the loop's entry edge (placed before the
/// header), with the entry edge's terminator and arguments.
fn new_block_for(func: &mut Function, lp: &CountedLoop) -> (Inst, Vec<Value>, Block) {
    let h = lp.header;
    let entry_term = func
        .terminator(lp.entry)
        .expect("invariant: verified blocks end in a terminator");
    let args: Vec<Value> = func
        .dfg
        .inst(entry_term)
        .successors()
        .into_iter()
        .find(|c| c.block == h)
        .map(|c| c.args.clone())
        .expect("invariant: the entry edge goes to the header");
    let u = func.dfg.make_block();
    let pos = func
        .layout
        .iter()
        .position(|b| *b == h)
        .unwrap_or(func.layout.len());
    func.layout.insert(pos, u);
    (entry_term, args, u)
}

/// Sends the entry edge (`entry_term`'s edge to `h`) to `u`.
fn redirect_entry(func: &mut Function, entry_term: Inst, h: Block, u: Block) {
    for call in func.dfg.inst_mut(entry_term).successors_mut() {
        if call.block == h {
            *call = BlockCall {
                block: u,
                args: vec![],
            };
        }
    }
}
