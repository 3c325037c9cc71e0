//! `diamond-cse`: common-subexpression elimination of whole branches. A
//! diamond `H: br c, T(), E()`, `T: ...; jump J(a..)`, `E: ...; jump
//! J(b..)` whose arms compute only what `cse` could merge (pure
//! instructions, float divisions, loads and views of arrays the function
//! only reads, `read_only`) is the same as an earlier diamond on the same
//! condition value when each arm passes its join the values the earlier
//! arm passes its own (the same values, or computed by instructions `cse`
//! could merge from such values, up to `DEPTH` definitions deep: `cse` may
//! have given the later arm a load of an input from after the first join
//! where the earlier arm has its own) and every check of the arm (a checked
//! load or view) has an equal one in the earlier arm: then `H` jumps
//! to `J` with the earlier join's parameters, and the arms go. Two copies of
//! one primal computation (two reverse derivatives of one function with
//! the same primal arguments, once inlined and unrolled) branch twice on
//! the same test; `cse` merges the straight code around the branches, this
//! the branches, after which `cse` merges what follows them.
//!
//! Sound when the earlier join `J1` dominates `H`: every value the earlier
//! arms and `c` are computed from is defined in a block that dominates `J1`'s
//! head, so on every path to `H` the last run of `J1` follows their last
//! definitions, and `J1`'s parameters hold what the arms would compute.
//!
//! Assumes: verified input. Guarantees: verified output, the same
//! behaviour (no check of the arms could fail: the earlier arm made it
//! with the same operands).

use crate::cfg::incoming_edges;
use crate::read_only::ReadOnly;
use adc_ir::dom::DomTree;
use adc_ir::{Block, BlockCall, Constant, Function, Inst, InstData, Value, ValueDef};
use std::collections::{BTreeMap, BTreeSet};

/// A diamond: its head, condition, arms and join.
struct Diamond {
    head: Block,
    cond: Value,
    arms: [Block; 2],
    join: Block,
}

pub fn run(func: &mut Function) -> bool {
    let read_only = ReadOnly::new(func);
    let diamonds = find_diamonds(func, &read_only);
    if diamonds.len() < 2 {
        return false;
    }
    let dom = DomTree::new(func);
    let mut removed: BTreeSet<Block> = BTreeSet::new();
    let mut merged = BTreeSet::new();
    for (k, d2) in diamonds.iter().enumerate() {
        let earlier = diamonds.iter().enumerate().find(|(j, d1)| {
            *j != k
                && !merged.contains(j)
                && d1.cond == d2.cond
                && dom.dominates(d1.join, d2.head)
                && func.dfg.block_params(d1.join).len() == func.dfg.block_params(d2.join).len()
                && same_arm(func, &read_only, d1.arms[0], d2.arms[0], d1.join)
                && same_arm(func, &read_only, d1.arms[1], d2.arms[1], d1.join)
        });
        let Some((_, d1)) = earlier else { continue };
        let args = func.dfg.block_params(d1.join).to_vec();
        let br = func
            .terminator(d2.head)
            .expect("invariant: a verified block ends in a terminator");
        *func.dfg.inst_mut(br) = InstData::Jump {
            dest: BlockCall {
                block: d2.join,
                args,
            },
        };
        removed.extend(d2.arms);
        merged.insert(k);
    }
    func.layout.retain(|b| !removed.contains(b));
    !removed.is_empty()
}

/// Every diamond of the function (the module comment), in layout order.
fn find_diamonds(func: &Function, read_only: &ReadOnly) -> Vec<Diamond> {
    let edges = incoming_edges(func);
    let preds = |b: Block| edges.get(&b).map_or(0, Vec::len);
    let mut found = Vec::new();
    for &h in &func.layout {
        let Some(InstData::Branch {
            cond,
            then_dest,
            else_dest,
        }) = func.terminator(h).map(|t| func.dfg.inst(t))
        else {
            continue;
        };
        let arms = [then_dest.block, else_dest.block];
        if arms[0] == arms[1]
            || !then_dest.args.is_empty()
            || !else_dest.args.is_empty()
            || arms.iter().any(|a| preds(*a) != 1 || *a == h)
        {
            continue;
        }
        let join_of = |a: Block| match func.terminator(a).map(|t| func.dfg.inst(t)) {
            Some(InstData::Jump { dest }) => Some(dest.block),
            _ => None,
        };
        let (Some(j0), Some(j1)) = (join_of(arms[0]), join_of(arms[1])) else {
            continue;
        };
        let mergeable = arms.iter().all(|a| {
            let insts = &func.dfg.block(*a).insts;
            insts[..insts.len() - 1].iter().all(|&i| {
                let data = func.dfg.inst(i);
                data.is_pure()
                    || crate::predicates::is_float_div(func, i)
                    || read_only.reads(func, data)
            })
        });
        if j0 != j1 || preds(j0) != 2 || j0 == h || !mergeable {
            continue;
        }
        found.push(Diamond {
            head: h,
            cond: *cond,
            arms,
            join: j0,
        });
    }
    found
}

/// Whether arm `b` passes its join what arm `a` passes `join`, and every
/// check `b` makes (a checked load or view) `a` makes too.
fn same_arm(func: &Function, ro: &ReadOnly, a: Block, b: Block, join: Block) -> bool {
    let (Some(InstData::Jump { dest: p }), Some(InstData::Jump { dest: q })) = (
        func.terminator(a).map(|t| func.dfg.inst(t)),
        func.terminator(b).map(|t| func.dfg.inst(t)),
    ) else {
        return false;
    };
    let mut memo = Memo::new();
    let checks = |blk: Block| -> Vec<Inst> {
        func.dfg
            .block(blk)
            .insts
            .iter()
            .copied()
            .filter(|i| func.dfg.inst(*i).has_side_effects() && !func.dfg.inst(*i).is_terminator())
            .collect()
    };
    let ca = checks(a);
    p.block == join
        && p.args.len() == q.args.len()
        && p.args
            .iter()
            .zip(&q.args)
            .all(|(u, v)| same_value(func, ro, &mut memo, *u, *v, DEPTH))
        && checks(b).into_iter().all(|y| {
            ca.iter()
                .any(|x| same_inst(func, ro, &mut memo, *x, y, DEPTH))
        })
}

/// How many definitions deep `same_value` compares.
const DEPTH: u32 = 48;

/// Pairs of values already compared.
type Memo = BTreeMap<(Value, Value), bool>;

/// Whether `u` (on the earlier arm's side) and `v` (the later's) hold the
/// same value: the same value, or results of equal instructions `cse`
/// could merge whose operands hold the same values.
fn same_value(
    func: &Function,
    ro: &ReadOnly,
    memo: &mut Memo,
    u: Value,
    v: Value,
    depth: u32,
) -> bool {
    if u == v {
        return true;
    }
    if let Some(&known) = memo.get(&(u, v)) {
        return known;
    }
    let same = match (func.dfg.value_def(u), func.dfg.value_def(v)) {
        (ValueDef::Result(x, 0), ValueDef::Result(y, 0)) if depth > 0 => {
            same_inst(func, ro, memo, x, y, depth - 1)
        }
        _ => false,
    };
    memo.insert((u, v), same);
    same
}

/// Whether `x` and `y` compute the same value: instructions `cse` could
/// merge, equal but for operands that hold the same values.
fn same_inst(
    func: &Function,
    ro: &ReadOnly,
    memo: &mut Memo,
    x: Inst,
    y: Inst,
    depth: u32,
) -> bool {
    let (dx, dy) = (func.dfg.inst(x), func.dfg.inst(y));
    let mergeable = |i: Inst, d: &InstData| {
        d.is_pure() || crate::predicates::is_float_div(func, i) || ro.reads(func, d)
    };
    let (rx, ry) = (func.dfg.inst_results(x), func.dfg.inst_results(y));
    if !mergeable(x, dx)
        || !mergeable(y, dy)
        || rx.len() != 1
        || ry.len() != 1
        || func.dfg.value_type(rx[0]) != func.dfg.value_type(ry[0])
    {
        return false;
    }
    if let (InstData::Const { value: p }, InstData::Const { value: q }) = (dx, dy) {
        return same_bits(p, q);
    }
    let mut ax = Vec::new();
    dx.for_each_arg(|v| ax.push(v));
    let mut ay = Vec::new();
    dy.for_each_arg(|v| ay.push(v));
    // `y` with `x`'s operands: equal to `x` when all else is.
    let mut renamed = dy.clone();
    let mut k = 0;
    renamed.map_args(|v| {
        let a = ax.get(k).copied().unwrap_or(v);
        k += 1;
        a
    });
    ax.len() == ay.len()
        && renamed == *dx
        && ax
            .iter()
            .zip(&ay)
            .all(|(u, v)| same_value(func, ro, memo, *u, *v, depth))
}

/// Constants are the same when their bits are (`0.0` is not `-0.0`).
fn same_bits(a: &Constant, b: &Constant) -> bool {
    match (a, b) {
        (Constant::F64(x), Constant::F64(y)) => x.to_bits() == y.to_bits(),
        (Constant::F32(x), Constant::F32(y)) => x.to_bits() == y.to_bits(),
        (x, y) => x == y,
    }
}
