//! `sroa`: scalar replacement of small local arrays. An array made by
//! `new n` with a constant `n` of at most `MAX_LEN` elements, whose every
//! use is a load or store at a constant index below `n`, its `len`, or a
//! `free` (`free.defer`), becomes `n` stack slots: the `new` becomes the
//! slots and a store of zero into each (a new array is zeroed), each load
//! and store of element `k` a `rload`/`rstore` of slot `k`, `len` the
//! constant `n`, and the frees go. `mem2reg` then turns the slots into
//! SSA values. Plain code writes such arrays for 3-vectors and 2-vectors
//! (GradBench's ba: `Xo[3]`, `Xcam[3]`, `proj[2]` of its helpers); once the
//! helpers are inlined and their three-element loops unrolled, every index
//! is a constant.
//!
//! An array passed to a call, viewed, copied, sent along a branch or
//! indexed by anything but a constant in range stays an array; so does one
//! used in a loop its `new` is not in (tuned ht's rotation `rot[9]`, made
//! once and read for every vertex): its elements would be values live
//! across the whole loop, and the register pressure cost ht's objective
//! 40% where the frame's stack array costs a load per use.
//!
//! Assumes: verified input. Guarantees: verified output, same behaviour
//! (the loads read what the array held: the last store, or zero).

use crate::cfg::incoming_edges;
use crate::loops::loop_bodies;
use adc_ir::dom::DomTree;
use adc_ir::{Block, Constant, Function, Inst, InstData, ScalarType, Type, Value, ValueDef};
use std::collections::{BTreeMap, BTreeSet};

/// The longest array replaced.
const MAX_LEN: i64 = 16;

fn constant_int(func: &Function, v: Value) -> Option<i64> {
    match func.dfg.value_def(v) {
        ValueDef::Result(inst, 0) => match func.dfg.inst(inst) {
            InstData::Const {
                value: Constant::I64(n),
            } => Some(*n),
            _ => None,
        },
        _ => None,
    }
}

/// The candidate arrays: `new n` with a constant `n` in `0..=MAX_LEN`, and
/// their length and element type.
fn candidates(func: &Function) -> BTreeMap<Value, (i64, ScalarType)> {
    let mut out = BTreeMap::new();
    for &b in &func.layout {
        for &i in &func.dfg.block(b).insts {
            if let InstData::ArrayNew { len } = func.dfg.inst(i) {
                let v = func.dfg.inst_results(i)[0];
                if let (Some(n), Type::Array(t)) =
                    (constant_int(func, *len), func.dfg.value_type(v))
                {
                    if (0..=MAX_LEN).contains(&n) {
                        out.insert(v, (n, t));
                    }
                }
            }
        }
    }
    out
}

/// The headers of the loops each block is in.
fn loops_of(func: &Function) -> BTreeMap<Block, BTreeSet<Block>> {
    let dom = DomTree::new(func);
    let mut out: BTreeMap<Block, BTreeSet<Block>> = BTreeMap::new();
    for (h, body) in loop_bodies(&dom, &incoming_edges(func)) {
        for b in body {
            out.entry(b).or_default().insert(h);
        }
    }
    out
}

/// The candidates some use keeps arrays.
fn disqualified(func: &Function, cands: &BTreeMap<Value, (i64, ScalarType)>) -> BTreeSet<Value> {
    let in_range = |array: &Value, index: &Value| {
        let n = cands[array].0;
        constant_int(func, *index).is_some_and(|k| (0..n).contains(&k))
    };
    let loops = loops_of(func);
    let none = BTreeSet::new();
    let loops_at = |b: Block| loops.get(&b).unwrap_or(&none);
    let mut made_in: BTreeMap<Value, Block> = BTreeMap::new();
    for &b in &func.layout {
        for &i in &func.dfg.block(b).insts {
            if let InstData::ArrayNew { .. } = func.dfg.inst(i) {
                made_in.insert(func.dfg.inst_results(i)[0], b);
            }
        }
    }
    let mut bad = BTreeSet::new();
    for &b in &func.layout {
        for &i in &func.dfg.block(b).insts {
            // A use in a loop the array's `new` is not in.
            func.dfg.inst(i).for_each_arg(|a| {
                if cands.contains_key(&a) && loops_at(made_in[&a]) != loops_at(b) {
                    bad.insert(a);
                }
            });
            match func.dfg.inst(i) {
                InstData::Load { array, index, .. } if cands.contains_key(array) => {
                    if !in_range(array, index) {
                        bad.insert(*array);
                    }
                }
                InstData::Store {
                    array,
                    index,
                    value,
                    ..
                } if cands.contains_key(array) => {
                    if !in_range(array, index) {
                        bad.insert(*array);
                    }
                    bad.insert(*value);
                }
                InstData::ArrayLen { .. }
                | InstData::ArrayFree { .. }
                | InstData::DeferFree { .. }
                | InstData::ArrayNew { .. } => (),
                other => other.for_each_arg(|a| {
                    bad.insert(a);
                }),
            }
        }
    }
    bad
}

pub fn run(func: &mut Function) -> bool {
    let mut cands = candidates(func);
    let bad = disqualified(func, &cands);
    cands.retain(|v, _| !bad.contains(v));
    if cands.is_empty() {
        return false;
    }
    // Each array's slots, made where its `new` was, with zero stored.
    let mut slots: BTreeMap<Value, Vec<Value>> = BTreeMap::new();
    for b in func.layout.clone() {
        let old = std::mem::take(&mut func.dfg.block_mut(b).insts);
        let mut insts: Vec<Inst> = Vec::with_capacity(old.len());
        for i in old {
            let data = func.dfg.inst(i).clone();
            let span = func.span(i);
            match data {
                InstData::ArrayNew { .. } if cands.contains_key(&func.dfg.inst_results(i)[0]) => {
                    let v = func.dfg.inst_results(i)[0];
                    let (n, t) = cands[&v];
                    let zero = func.dfg.make_inst(
                        InstData::Const {
                            value: Constant::zero(t),
                        },
                        &[Type::Scalar(t)],
                    );
                    func.set_span(zero, span);
                    insts.push(zero);
                    let z = func.dfg.inst_results(zero)[0];
                    let mut refs = Vec::new();
                    for _ in 0..n {
                        let s = func.dfg.make_inst(InstData::Slot, &[Type::Ref(t)]);
                        func.set_span(s, span);
                        let r = func.dfg.inst_results(s)[0];
                        let st = func
                            .dfg
                            .make_inst(InstData::RefStore { ptr: r, value: z }, &[]);
                        func.set_span(st, span);
                        insts.push(s);
                        insts.push(st);
                        refs.push(r);
                    }
                    slots.insert(v, refs);
                }
                InstData::ArrayFree { array } | InstData::DeferFree { array }
                    if cands.contains_key(&array) => {}
                _ => insts.push(i),
            }
        }
        func.dfg.block_mut(b).insts = insts;
    }
    // Every other use, in place (a `new` dominates its uses, so its slots
    // exist by now).
    for b in func.layout.clone() {
        for i in func.dfg.block(b).insts.clone() {
            let slot = |array: &Value, index: &Value, func: &Function| {
                let k = constant_int(func, *index).expect("checked: a constant index in range");
                slots[array][k as usize]
            };
            let new = match func.dfg.inst(i) {
                InstData::Load { array, index, .. } if slots.contains_key(array) => {
                    InstData::RefLoad {
                        ptr: slot(array, index, func),
                    }
                }
                InstData::Store {
                    array,
                    index,
                    value,
                    ..
                } if slots.contains_key(array) => InstData::RefStore {
                    ptr: slot(array, index, func),
                    value: *value,
                },
                InstData::ArrayLen { array } if slots.contains_key(array) => InstData::Const {
                    value: Constant::I64(slots[array].len() as i64),
                },
                _ => continue,
            };
            *func.dfg.inst_mut(i) = new;
        }
    }
    true
}
