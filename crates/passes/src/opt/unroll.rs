//! Full unrolling of short counted loops: `for (int i = 0; i < 3; i++)`
//! over a 3-vector becomes three copies of the body in straight-line code,
//! where constant indices let `const-fold` drop bounds checks and `rle`
//! forward stores to loads.
//!
//! Pattern: a counted loop (`loops::counted_loops`) of two blocks, a header
//! `h` holding only `cmp lt i, C` and the branch on it (into the loop, else
//! to the exit), and one body block `B` that jumps back; the counter starts
//! at a constant `c0` and steps by `s > 0`, `C` is a constant, so the loop
//! runs `T = max(0, ceil((C - c0) / s))` times; `T <= MAX_TRIPS`,
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
//! (which `cse` may have shared with later code) `false`. `h` and `B`
//! leave the layout.
//!
//! Assumes: verified input. Guarantees: verified output, the same
//! instructions run in the same order.

use crate::defs::int_const;
use crate::loops::{counted_header, counted_loops, CountedLoop, LoopInit};
use adc_ir::{Block, BlockCall, Constant, Function, InstData, Tag, Type, Value};
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
            let Some(p) = plan(func, &lp) else { continue };
            touched.extend(blocks());
            finals.extend(unroll(func, &lp, &p));
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
}

fn plan(func: &Function, lp: &CountedLoop) -> Option<Plan> {
    let LoopInit::Const(c0) = lp.init else {
        return None;
    };
    if lp.step <= 0 || lp.body.len() != 2 || lp.latch == lp.header {
        return None;
    }
    let h = lp.header;
    let counter = func.dfg.block_params(h)[lp.param];
    let head = counted_header(func, h, counter)?;
    // The header holds the `cmp` and the `br`, nothing else.
    let [cmp, _br] = func.dfg.block(h).insts.as_slice() else {
        return None;
    };
    if *cmp != head.cmp || head.then_dest.block != lp.latch || head.else_dest.block != lp.exit {
        return None;
    }
    let bound = int_const(func, head.bound)?;
    // In i128: `bound - c0` may not fit an i64.
    let trips = if bound > c0 {
        let t =
            (i128::from(bound) - i128::from(c0) + i128::from(lp.step) - 1) / i128::from(lp.step);
        i64::try_from(t).ok()?
    } else {
        0
    };
    let body = lp.latch;
    let insts = &func.dfg.block(body).insts;
    let all = insts.len() as i64;
    let n = insts.iter().filter(|i| func.tag(**i) != Tag::Diff).count() as i64;
    let marker = func
        .dfg
        .block(body)
        .insts
        .iter()
        .any(|i| matches!(func.dfg.inst(*i), InstData::LoopCheckpoint { .. }));
    let back_to_header = matches!(
        func.terminator(body).map(|t| func.dfg.inst(t)),
        Some(InstData::Jump { dest }) if dest.block == h
    );
    (trips <= MAX_TRIPS
        && trips * n <= MAX_INSTS
        && trips * all <= MAX_LANE_INSTS
        && !marker
        && back_to_header
        && head.then_dest.args.is_empty())
    .then_some(Plan { body, trips })
}

/// Unrolls `lp` into one block and returns the substitution of its
/// header's parameters (and test) by their final values, which the caller
/// applies.
fn unroll(func: &mut Function, lp: &CountedLoop, p: &Plan) -> BTreeMap<Value, Value> {
    let h = lp.header;
    let params = func.dfg.block_params(h).to_vec();
    let entry_term = func
        .terminator(lp.entry)
        .expect("invariant: verified blocks end in a terminator");
    let entry_args: Vec<Value> = func
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
    let mut current: Vec<Value> = entry_args;
    let body_insts = func.dfg.block(p.body).insts.clone();
    let (last, copied) = body_insts
        .split_last()
        .expect("invariant: a verified block has a terminator");
    for _ in 0..p.trips {
        let mut map: BTreeMap<Value, Value> = params
            .iter()
            .copied()
            .zip(current.iter().copied())
            .collect();
        for &i in copied {
            crate::rewrite::copy_inst(func, i, u, &mut map);
        }
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
            value: Constant::Bool(false),
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
    let InstData::Branch { else_dest, .. } = func.dfg.inst(br).clone() else {
        unreachable!("invariant: plan() checked the header's branch")
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
    for call in func.dfg.inst_mut(entry_term).successors_mut() {
        if call.block == h {
            *call = BlockCall {
                block: u,
                args: vec![],
            };
        }
    }
    func.layout.retain(|b| *b != h && *b != p.body);
    map
}
