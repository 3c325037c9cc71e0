//! Loop rotation: a loop whose header only tests whether to go on gets
//! that test copied to the end of its latch, so each iteration ends in one
//! conditional branch back to the body instead of a jump to the header
//! and a branch from there (Cranelift lays blocks out as they come and
//! does not rotate loops; the rotated loop takes one taken branch per
//! iteration instead of two).
//!
//! Pattern: a header `h` (not the entry) with exactly two incoming edges,
//! one from outside the loop and one back edge from a latch `L` that `h`
//! dominates, ending `jump h(a..)`; `h` holds at most `MAX_TEST`
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

use crate::util::incoming_edges;
use adc_ir::dom::DomTree;
use adc_ir::{Block, Function, Inst, InstData, Value};
use std::collections::{BTreeMap, BTreeSet};

/// Instructions a header may hold besides its branch.
const MAX_TEST: usize = 8;

pub fn run(func: &mut Function) -> bool {
    let mut changed = false;
    let mut done: BTreeSet<Block> = BTreeSet::new();
    // One loop at a time: each rotation changes the CFG the next one is
    // found in.
    for _ in 0..256 {
        let Some(plan) = find(func, &done) else { break };
        done.insert(plan.header);
        rotate(func, &plan);
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

fn find(func: &Function, done: &BTreeSet<Block>) -> Option<Plan> {
    let edges = incoming_edges(func);
    let dom = DomTree::new(func);
    let entry = *func.layout.first()?;
    func.layout.iter().copied().find_map(|h| {
        if h == entry || done.contains(&h) {
            return None;
        }
        let es = &edges[&h];
        if es.len() != 2 {
            return None;
        }
        let back: Vec<Block> = es
            .iter()
            .map(|e| e.from)
            .filter(|&f| dom.dominates(h, f))
            .collect();
        let [latch] = back[..] else { return None };
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
        let latch_jumps_back = func.terminator(latch).is_some_and(
            |t| matches!(func.dfg.inst(t), InstData::Jump { dest } if dest.block == h),
        );
        if !latch_jumps_back {
            return None;
        }
        // Every use of `h`'s values outside `h` lies under `body` or, when
        // `h` is its only predecessor (the others would have to pass the
        // new parameters), under `exit`.
        let defined = defined_in(func, h);
        let exit_alone = edges[&exit].len() == 1;
        let covered = func.layout.iter().all(|&u| {
            u == h
                || dom.dominates(body, u)
                || (exit_alone && dom.dominates(exit, u))
                || !uses_any(func, u, &defined)
        });
        covered.then_some(Plan {
            header: h,
            latch,
            body,
            exit,
        })
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

fn uses_any(func: &Function, b: Block, values: &BTreeSet<Value>) -> bool {
    func.dfg.block(b).insts.iter().any(|&i| {
        let mut hit = false;
        func.dfg
            .inst(i)
            .for_each_arg(|a| hit |= values.contains(&a));
        hit
    })
}

fn rotate(func: &mut Function, p: &Plan) {
    let dom = DomTree::new(func);
    let defined = defined_in(func, p.header);
    let term = func
        .terminator(p.header)
        .expect("invariant: `find` saw the header's branch");
    // The values of `h` each successor's region uses become its parameters.
    for (succ, is_then) in [(p.body, true), (p.exit, false)] {
        let region: Vec<Block> = func
            .layout
            .iter()
            .copied()
            .filter(|&u| dom.dominates(succ, u))
            .collect();
        let mut used: BTreeSet<Value> = BTreeSet::new();
        for &u in &region {
            for &i in &func.dfg.block(u).insts {
                func.dfg.inst(i).for_each_arg(|a| {
                    if defined.contains(&a) {
                        used.insert(a);
                    }
                });
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
        crate::util::copy_inst(func, i, p.latch, &mut map);
    }
    // `test` ended with the header's branch: its copy, now the latch's
    // terminator, branches on the copied test with mapped arguments.
}
