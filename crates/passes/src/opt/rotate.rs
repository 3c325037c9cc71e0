//! Loop rotation: a loop whose header only tests whether to go on gets
//! that test copied to the end of its latch, so each iteration ends in one
//! conditional branch back to the body instead of a jump to the header
//! and a branch from there (Cranelift lays blocks out as they come and
//! does not rotate loops; the rotated loop takes one taken branch per
//! iteration instead of two).
//!
//! Pattern: a header `h` (not the entry) with one back edge, from a latch
//! `L` that `h` dominates, ending `jump h(a..)`, and at least one edge
//! from outside the loop; `h` holds at most `MAX_TEST`
//! instructions without side effects, then `br c, B(..), x(..)` with
//! `B != x` and `h` the only predecessor of `B`; every use of a value `h`
//! defines (parameters and results), outside `h`, is in a block `B`
//! dominates or, if `h` is `x`'s only predecessor, one `x` dominates.
//!
//! Rewrite: the values of `h` used under `B` (under `x`) become parameters
//! of `B` (`x`), passed by `h`; `L`'s jump becomes a copy of `h`'s
//! instructions on `a..` and a branch to `B` and `x` like `h`'s. `h` is
//! then the guard run once before the first iteration.
//!
//! Assumes: verified input. Guarantees: verified output, same behaviour:
//! the copy computes at the end of `L` what `h` would compute on entry
//! from `L` (its instructions are pure, on the same arguments), and every
//! value of `h` used past it arrives as a parameter from whichever of `h`
//! or `L` branched.

use crate::cfg::incoming_edges;
use adc_ir::dom::DomTree;
use adc_ir::{Block, Function, Inst, InstData, Value};
use std::collections::{BTreeMap, BTreeSet};

/// Instructions a header may hold besides its branch.
const MAX_TEST: usize = 8;

pub fn run(func: &mut Function) -> bool {
    let mut changed = false;
    let mut done: BTreeSet<Block> = BTreeSet::new();
    // Each scan computes the edges, dominators and uses once and rotates
    // every loop whose blocks no earlier rotation of the scan touched: a
    // rotation keeps every block's dominators (the latch's new edges start
    // under the header) and changes only the edges of its own blocks.
    // Rescanning the whole function per loop made 1,000 sequential loops
    // cost a thousand scans.
    for _ in 0..256 {
        let Some(&entry) = func.layout.first() else {
            break;
        };
        let edges = incoming_edges(func);
        let dom = DomTree::new(func);
        let mut uses = use_blocks(func);
        let mut touched: BTreeSet<Block> = BTreeSet::new();
        let headers: Vec<Block> = func.layout.clone();
        for h in headers {
            if h == entry || done.contains(&h) {
                continue;
            }
            let Some(plan) = find(func, &edges, &dom, &uses, h) else {
                continue;
            };
            let blocks = [plan.header, plan.latch, plan.body, plan.exit];
            if blocks.iter().any(|b| touched.contains(b)) {
                continue;
            }
            touched.extend(blocks);
            done.insert(h);
            rotate(func, &dom, &mut uses, &plan);
        }
        if touched.is_empty() {
            break;
        }
        changed = true;
    }
    changed
}

struct Plan {
    header: Block,
    latch: Block,
    body: Block,
    exit: Block,
}

/// The blocks whose instructions use each value (a block once per value).
type Uses = BTreeMap<Value, Vec<Block>>;

fn use_blocks(func: &Function) -> Uses {
    let mut uses = Uses::new();
    for &b in &func.layout {
        note_uses(func, b, &mut uses);
    }
    uses
}

fn note_uses(func: &Function, b: Block, uses: &mut Uses) {
    for &i in &func.dfg.block(b).insts {
        func.dfg.inst(i).for_each_arg(|a| {
            let at = uses.entry(a).or_default();
            if at.last() != Some(&b) {
                at.push(b);
            }
        });
    }
}

fn find(
    func: &Function,
    edges: &BTreeMap<Block, Vec<crate::cfg::Edge>>,
    dom: &DomTree,
    uses: &Uses,
    h: Block,
) -> Option<Plan> {
    let es = &edges[&h];
    let back: Vec<Block> = es
        .iter()
        .map(|e| e.from)
        .filter(|&f| dom.dominates(h, f))
        .collect();
    // One back edge, and edges from outside (`carry` enters a loop from
    // two: its first window loaded or not): each outside edge still
    // enters through `h`, now the guard.
    let [latch] = back[..] else { return None };
    if es.len() < 2 {
        return None;
    }
    let insts = &func.dfg.block(h).insts;
    let (&term, test) = insts.split_last()?;
    if test.len() > MAX_TEST
        || test
            .iter()
            .any(|&i| func.dfg.inst(i).has_side_effects() || func.dfg.inst(i).is_terminator())
    {
        return None;
    }
    let InstData::Branch {
        then_dest,
        else_dest,
        ..
    } = func.dfg.inst(term)
    else {
        return None;
    };
    let (body, exit) = (then_dest.block, else_dest.block);
    // The body is entered from `h` only; the exit may have other
    // predecessors (the shared exit of a versioned loop's two copies,
    // a `break`) when nothing under it uses `h`'s values.
    if body == exit || body == h || exit == h || edges[&body].len() != 1 {
        return None;
    }
    let latch_jumps_back = func
        .terminator(latch)
        .is_some_and(|t| matches!(func.dfg.inst(t), InstData::Jump { dest } if dest.block == h));
    if !latch_jumps_back {
        return None;
    }
    // Every use of `h`'s values outside `h` lies under `body` or, when
    // `h` is its only predecessor (the others would have to pass the
    // new parameters), under `exit`.
    let exit_alone = edges[&exit].len() == 1;
    let covered = defined_in(func, h).iter().all(|v| {
        uses.get(v)
            .into_iter()
            .flatten()
            .all(|&u| u == h || dom.dominates(body, u) || (exit_alone && dom.dominates(exit, u)))
    });
    covered.then_some(Plan {
        header: h,
        latch,
        body,
        exit,
    })
}

/// The values block `b` defines: its parameters and results.
fn defined_in(func: &Function, b: Block) -> BTreeSet<Value> {
    let mut out: BTreeSet<Value> = func.dfg.block_params(b).iter().copied().collect();
    for &i in &func.dfg.block(b).insts {
        out.extend(func.dfg.inst_results(i).iter().copied());
    }
    out
}

fn rotate(func: &mut Function, dom: &DomTree, uses: &mut Uses, p: &Plan) {
    let defined = defined_in(func, p.header);
    let term = func
        .terminator(p.header)
        .expect("invariant: `find` saw the header's branch");
    // The values of `h` each successor's region uses become its parameters.
    for (succ, is_then) in [(p.body, true), (p.exit, false)] {
        let mut used: BTreeSet<Value> = BTreeSet::new();
        let mut region: BTreeSet<Block> = BTreeSet::new();
        for &v in &defined {
            for &u in uses.get(&v).into_iter().flatten() {
                if dom.dominates(succ, u) {
                    used.insert(v);
                    region.insert(u);
                }
            }
        }
        let mut rename: BTreeMap<Value, Value> = BTreeMap::new();
        for &v in &used {
            let ty = func.dfg.value_type(v);
            rename.insert(v, func.dfg.append_block_param(succ, ty));
        }
        for &u in &region {
            for i in func.dfg.block(u).insts.clone() {
                func.dfg
                    .inst_mut(i)
                    .map_args(|a| *rename.get(&a).unwrap_or(&a));
            }
        }
        if let InstData::Branch {
            then_dest,
            else_dest,
            ..
        } = func.dfg.inst_mut(term)
        {
            let call = if is_then { then_dest } else { else_dest };
            call.args.extend(used.iter().copied());
        }
    }
    // The latch computes the test itself and branches like the header.
    let latch_term = func
        .terminator(p.latch)
        .expect("invariant: `find` saw the latch's jump");
    let InstData::Jump { dest } = func.dfg.inst(latch_term).clone() else {
        unreachable!("invariant: `find` saw the latch's jump");
    };
    let mut map: BTreeMap<Value, Value> = func
        .dfg
        .block_params(p.header)
        .iter()
        .copied()
        .zip(dest.args.iter().copied())
        .collect();
    func.dfg.block_mut(p.latch).insts.pop();
    let test: Vec<Inst> = func.dfg.block(p.header).insts.clone();
    for &i in &test {
        crate::rewrite::copy_inst(func, i, p.latch, &mut map);
    }
    // `test` ended with the header's branch: its copy, now the latch's
    // terminator, branches on the copied test with mapped arguments. The
    // copy may use values defined before the loop (its bound) that the
    // latch did not use: later rotations of the scan must see those uses.
    note_uses(func, p.latch, uses);
}
