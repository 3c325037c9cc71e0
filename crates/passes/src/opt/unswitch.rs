//! Loop unswitching: a branch on a condition defined outside a loop is
//! taken out of the loop. The loop is copied; the original keeps the
//! branch's else edge, the copy its then edge, and a new block before the
//! loop tests the condition once and enters one of them.
//!
//! What it takes out: `version`'s guard (`licm` has computed it before
//! the outermost loop it is invariant in, but its branch stays at the
//! inner loop's preheader, run on every iteration of the enclosing
//! loops), the test of a trip count for zero, and `unroll-inner`'s test
//! for one unrolled iteration. In kmeans' `j` loop these were three
//! tests per centroid, and the values they keep live took registers
//! from the loop.
//!
//! Pattern: a natural loop `L` (the union of the natural loops of a
//! header's back edges) whose header has exactly one incoming edge from
//! outside `L`, holding a `br c, ...` with `c` defined outside `L`
//! (not a constant), and whose values are used only inside `L` (its
//! exits receive what they need as block arguments). Of the loops a
//! branch is invariant in, the outermost is taken. Budget: `L` has at most
//! `MAX_LOOP_INSTS` instructions, the function at most `MAX_GROWTH`
//! times its instructions on entry, and at most `MAX_UNSWITCHES` loops are
//! copied per function.
//!
//! Assumes: verified input. Guarantees: verified output; every path runs
//! the instructions it ran before, in the same order (a branch whose
//! condition is known becomes a jump); `dce` removes the blocks no copy
//! reaches any more.

use crate::cfg::{dominator_order, incoming_edges};
use crate::loops::loop_bodies;
use crate::rewrite::copy_inst;
use adc_ir::dom::DomTree;
use adc_ir::{Block, BlockCall, Function, Inst, InstData, Value, ValueDef};
use std::collections::{BTreeMap, BTreeSet};

/// The largest loop copied, in instructions.
const MAX_LOOP_INSTS: usize = 400;
/// The function may grow by this many halves of its size on entry (to
/// 1.5 times): gmm's objective, twice as long, took three times as long
/// to compile and ran no faster.
const MAX_GROWTH_HALVES: usize = 3;
/// Loops copied per function.
const MAX_UNSWITCHES: usize = 8;

pub fn run(func: &mut Function) -> bool {
    if func.layout.is_empty() {
        return false;
    }
    let start = inst_count(func, func.layout.iter().copied());
    let mut changed = false;
    for _ in 0..MAX_UNSWITCHES {
        let Some(plan) = find(func, start * MAX_GROWTH_HALVES / 2 + 64) else {
            break;
        };
        unswitch(func, &plan);
        // The copies' dead arms go before the next search measures sizes.
        super::dce::run(func);
        super::simplify_cfg::run(func);
        changed = true;
    }
    changed
}

struct Plan {
    header: Block,
    body: BTreeSet<Block>,
    /// The block before the loop, whose terminator enters `header`.
    entry: Block,
    cond: Value,
}

fn inst_count(func: &Function, blocks: impl Iterator<Item = Block>) -> usize {
    blocks.map(|b| func.dfg.block(b).insts.len()).sum()
}

fn defined_in(func: &Function, v: Value, inst_block: &BTreeMap<Inst, Block>) -> Option<Block> {
    match func.dfg.value_def(v) {
        ValueDef::Param(b, _) => Some(b),
        ValueDef::Result(i, _) => inst_block.get(&i).copied(),
        ValueDef::Unused => None,
    }
}

fn find(func: &Function, limit: usize) -> Option<Plan> {
    let size = inst_count(func, func.layout.iter().copied());
    let dom = DomTree::new(func);
    let edges = incoming_edges(func);
    let mut inst_block: BTreeMap<Inst, Block> = BTreeMap::new();
    for &b in &func.layout {
        for &i in &func.dfg.block(b).insts {
            inst_block.insert(i, b);
        }
    }
    let uses = uses_elsewhere(func, &inst_block);
    // Outermost (largest) first.
    let mut loops = loop_bodies(&dom, &edges);
    loops.sort_by_key(|(_, body)| std::cmp::Reverse(body.len()));
    for (header, body) in loops {
        let n = inst_count(func, body.iter().copied());
        if n > MAX_LOOP_INSTS || size + n > limit {
            continue;
        }
        let from_outside: Vec<Block> = edges[&header]
            .iter()
            .filter(|e| !body.contains(&e.from))
            .map(|e| e.from)
            .collect();
        let [entry] = from_outside[..] else { continue };
        let cond = body.iter().find_map(|&b| {
            let (cond, then_dest, else_dest) = crate::cfg::branch_at(func, b)?;
            let outside = defined_in(func, cond, &inst_block).is_some_and(|d| !body.contains(&d));
            let constant = matches!(
                crate::defs::def_data(func, cond),
                Some(InstData::Const { .. })
            );
            (outside && !constant && then_dest.block != else_dest.block).then_some(cond)
        });
        let Some(cond) = cond else { continue };
        // Every value the loop defines is used only in the loop.
        let escapes = body.iter().any(|d| {
            uses.get(d)
                .is_some_and(|users| users.iter().any(|u| !body.contains(u)))
        });
        if escapes {
            continue;
        }
        return Some(Plan {
            header,
            body,
            entry,
            cond,
        });
    }
    None
}

/// For each block, the other blocks that use a value it defines (as an
/// operand or a block argument).
fn uses_elsewhere(
    func: &Function,
    inst_block: &BTreeMap<Inst, Block>,
) -> BTreeMap<Block, BTreeSet<Block>> {
    let mut out: BTreeMap<Block, BTreeSet<Block>> = BTreeMap::new();
    for &b in &func.layout {
        for &i in &func.dfg.block(b).insts {
            let mut note = |a: Value| {
                if let Some(d) = defined_in(func, a, inst_block).filter(|d| *d != b) {
                    out.entry(d).or_default().insert(b);
                }
            };
            let data = func.dfg.inst(i);
            data.for_each_arg(&mut note);
            for call in data.successors() {
                call.args.iter().for_each(|a| note(*a));
            }
        }
    }
    out
}

/// A branch on `cond` becomes a jump to its then edge (`taken`) or its
/// else edge.
fn fix_branches(func: &mut Function, blocks: &[Block], cond: Value, taken: bool) {
    for &b in blocks {
        let Some(term) = func.terminator(b) else {
            continue;
        };
        let InstData::Branch {
            cond: c,
            then_dest,
            else_dest,
        } = func.dfg.inst(term).clone()
        else {
            continue;
        };
        if c == cond {
            let dest = if taken { then_dest } else { else_dest };
            *func.dfg.inst_mut(term) = InstData::Jump { dest };
        }
    }
}

fn unswitch(func: &mut Function, p: &Plan) {
    // Blocks of the loop in an order that meets definitions before uses.
    let order: Vec<Block> = dominator_order(func)
        .into_iter()
        .filter(|b| p.body.contains(b))
        .collect();
    let bmap: BTreeMap<Block, Block> = order.iter().map(|&b| (b, func.dfg.make_block())).collect();
    let mut map: BTreeMap<Value, Value> = BTreeMap::new();
    for &b in &order {
        for &param in &func.dfg.block_params(b).to_vec() {
            let ty = func.dfg.value_type(param);
            map.insert(param, func.dfg.append_block_param(bmap[&b], ty));
        }
    }
    for &b in &order {
        for i in func.dfg.block(b).insts.clone() {
            let new = copy_inst(func, i, bmap[&b], &mut map);
            for call in func.dfg.inst_mut(new).successors_mut() {
                if let Some(&nb) = bmap.get(&call.block) {
                    call.block = nb;
                }
            }
        }
    }
    let copies: Vec<Block> = order.iter().map(|b| bmap[b]).collect();
    fix_branches(func, &order, p.cond, false);
    fix_branches(func, &copies, p.cond, true);
    // The test before the loop: the entry edge now reaches `choose`, which
    // passes its arguments on to the header of one version.
    let choose = func.dfg.make_block();
    let mut params = Vec::new();
    for &param in &func.dfg.block_params(p.header).to_vec() {
        let ty = func.dfg.value_type(param);
        params.push(func.dfg.append_block_param(choose, ty));
    }
    let entry_term = func
        .terminator(p.entry)
        .expect("invariant: verified blocks end in a terminator");
    let span = func.span(entry_term);
    for call in func.dfg.inst_mut(entry_term).successors_mut() {
        if call.block == p.header {
            call.block = choose;
        }
    }
    let test = InstData::Branch {
        cond: p.cond,
        then_dest: BlockCall {
            block: bmap[&p.header],
            args: params.clone(),
        },
        else_dest: BlockCall {
            block: p.header,
            args: params,
        },
    };
    let tag = func.tag(entry_term);
    let inst = func.append_inst(choose, test, &[], span);
    func.set_tag(inst, tag);
    // Layout: `choose` before the header, the copy after the loop's last
    // block.
    let at = func
        .layout
        .iter()
        .position(|b| *b == p.header)
        .expect("invariant: the header is in the layout");
    func.layout.insert(at, choose);
    let last = func
        .layout
        .iter()
        .rposition(|b| p.body.contains(b))
        .expect("invariant: the loop's blocks are in the layout");
    let order_in_layout: Vec<Block> = func
        .layout
        .iter()
        .filter(|b| p.body.contains(b))
        .map(|b| bmap[b])
        .collect();
    func.layout.splice(last + 1..last + 1, order_in_layout);
}
