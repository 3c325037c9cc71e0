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
//! An array that an edge sends to a block parameter stays an array, unless
//! it is the only array the parameter may hold (its other edges send
//! `null` or such parameters: an array made in an arm of an `if`, freed in
//! the join) and the parameter is only freed or sent on the same way: the
//! edges then send `null` and the frees go. The parameter may also be
//! loaded and stored unchecked at constant indices (as reverse sweeps read
//! an arm's shadow through the join) when the array's `new` is outside
//! every loop (it runs at most once, so the parameter holds the array the
//! slots hold): the slots are then made in the entry block and the
//! parameter's accesses are the array's (a parameter holding `null`
//! cannot be read: unchecked, that is undefined). A view at constant
//! bounds in range (`view x, lo, hi`) stands for the array's elements
//! `lo` to `hi - 1`, as vector-mode derivatives read a local array's
//! shadow (`new 2k`) lane by lane: its loads and stores are the array's at
//! `lo` plus their index, and it may reach a join the same way. An array
//! passed to a call, viewed at other bounds, copied, stored or indexed by
//! anything but a constant in range stays an array; so does one used in a loop its `new` is not in (tuned ht's rotation `rot[9]`, made
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
            if let InstData::ArrayNew { len, .. } = func.dfg.inst(i) {
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

/// Where an array value's elements are: `len` elements of the candidate
/// `cand` from `off`; `via_param` when it is (a view of) a block parameter.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Alias {
    cand: Value,
    off: i64,
    len: i64,
    via_param: bool,
}

impl Alias {
    /// The same elements, compared without `via_param`.
    fn place(&self) -> (Value, i64, i64) {
        (self.cand, self.off, self.len)
    }
}

/// The values that stand for elements of one candidate: the candidates,
/// their views at constant bounds in range (`view x, lo, hi`: `hi - lo`
/// elements from `lo`), and the block parameters that hold one such place
/// or `null` (every edge sends the same place, `null` or such a
/// parameter, and some edge not `null`).
fn aliases(func: &Function, cands: &BTreeMap<Value, (i64, ScalarType)>) -> BTreeMap<Value, Alias> {
    let nulls = func.null_arrays();
    let incoming = func.incoming_args();
    let mut of: BTreeMap<Value, Alias> = cands
        .iter()
        .map(|(&v, &(n, _))| {
            let a = Alias {
                cand: v,
                off: 0,
                len: n,
                via_param: false,
            };
            (v, a)
        })
        .collect();
    loop {
        let before = of.len();
        for &b in &func.layout {
            for &i in &func.dfg.block(b).insts {
                let InstData::ArrayView { array, lo, hi } = func.dfg.inst(i) else {
                    continue;
                };
                let v = func.dfg.inst_results(i)[0];
                if of.contains_key(&v) {
                    continue;
                }
                let (Some(a), Some(lo), Some(hi)) = (
                    of.get(array),
                    constant_int(func, *lo),
                    constant_int(func, *hi),
                ) else {
                    continue;
                };
                if 0 <= lo && lo <= hi && hi <= a.len {
                    let view = Alias {
                        off: a.off + lo,
                        len: hi - lo,
                        ..*a
                    };
                    of.insert(v, view);
                }
            }
        }
        for (p, args) in &incoming {
            if of.contains_key(p) {
                continue;
            }
            let places: BTreeSet<Option<(Value, i64, i64)>> = args
                .iter()
                .filter(|a| !nulls.contains(a))
                .map(|a| of.get(a).map(Alias::place))
                .collect();
            if let [Some((cand, off, len))] = places.iter().copied().collect::<Vec<_>>().as_slice()
            {
                let a = Alias {
                    cand: *cand,
                    off: *off,
                    len: *len,
                    via_param: true,
                };
                of.insert(*p, a);
            }
        }
        if of.len() == before {
            return of;
        }
    }
}

/// The candidates some parameter that holds them is loaded or stored
/// through (their slots are made in the entry block).
fn read_through(func: &Function, of: &BTreeMap<Value, Alias>) -> BTreeSet<Value> {
    let mut out = BTreeSet::new();
    for &b in &func.layout {
        for &i in &func.dfg.block(b).insts {
            if let InstData::Load { array, .. } | InstData::Store { array, .. } = func.dfg.inst(i) {
                out.extend(of.get(array).filter(|a| a.via_param).map(|a| a.cand));
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

/// The candidates some use keeps arrays; `of` (`aliases`) gives the
/// values that stand for a candidate's elements.
fn disqualified(func: &Function, of: &BTreeMap<Value, Alias>) -> BTreeSet<Value> {
    // The candidate an operand stands for.
    let array_of = |v: &Value| -> Option<Value> { of.get(v).map(|a| a.cand) };
    let in_range = |array: &Value, index: &Value| {
        let n = of[array].len;
        constant_int(func, *index).is_some_and(|k| (0..n).contains(&k))
    };
    let loops = loops_of(func);
    let none = BTreeSet::new();
    let loops_at = |b: Block| loops.get(&b).unwrap_or(&none);
    let cyclic = adc_ir::dom::blocks_on_cycles(func);
    let mut made_in: BTreeMap<Value, Block> = BTreeMap::new();
    for &b in &func.layout {
        for &i in &func.dfg.block(b).insts {
            if let InstData::ArrayNew { .. } = func.dfg.inst(i) {
                made_in.insert(func.dfg.inst_results(i)[0], b);
            }
        }
    }
    let mut bad = BTreeSet::new();
    // A candidate read through a parameter is made outside every loop.
    for x in read_through(func, of) {
        if cyclic.contains(&made_in[&x]) {
            bad.insert(x);
        }
    }
    for &b in &func.layout {
        for &i in &func.dfg.block(b).insts {
            let data = func.dfg.inst(i);
            // A use in a loop the array's `new` is not in.
            data.for_each_arg(|a| {
                if let Some(x) = array_of(&a) {
                    if loops_at(made_in[&x]) != loops_at(b) {
                        bad.insert(x);
                    }
                }
            });
            // Edges: a candidate, or a parameter of it, goes only to a
            // parameter of the same candidate.
            for call in data.successors() {
                for (p, a) in func.dfg.block_params(call.block).iter().zip(&call.args) {
                    if let Some(x) = of.get(a) {
                        if of.get(p).map(Alias::place) != Some(x.place()) {
                            bad.insert(x.cand);
                        }
                    }
                }
            }
            let through_param = |a: &Value| of[a].via_param;
            match data {
                InstData::Load {
                    array,
                    index,
                    checked,
                } => {
                    if let Some(x) = array_of(array) {
                        if !in_range(array, index) || (*checked && through_param(array)) {
                            bad.insert(x);
                        }
                    }
                }
                InstData::Store {
                    array,
                    index,
                    value,
                    checked,
                } => {
                    if let Some(x) = array_of(array) {
                        if !in_range(array, index) || (*checked && through_param(array)) {
                            bad.insert(x);
                        }
                    }
                    if let Some(x) = array_of(value) {
                        bad.insert(x);
                    }
                }
                InstData::ArrayLen { array } => {
                    if array_of(array).is_some() && through_param(array) {
                        bad.extend(array_of(array));
                    }
                }
                // A view at constant bounds in range stands for the
                // candidate's elements (its uses are checked as its own).
                InstData::ArrayView { .. } if of.contains_key(&func.dfg.inst_results(i)[0]) => (),
                InstData::ArrayFree { .. }
                | InstData::DeferFree { .. }
                | InstData::ArrayNew { .. } => (),
                other => {
                    let mut operands = other.clone();
                    for call in operands.successors_mut() {
                        call.args.clear();
                    }
                    operands.for_each_arg(|a| {
                        bad.extend(array_of(&a));
                    });
                }
            }
        }
    }
    bad
}

pub fn run(func: &mut Function) -> bool {
    let mut cands = candidates(func);
    let mut of = aliases(func, &cands);
    let bad = disqualified(func, &of);
    cands.retain(|v, _| !bad.contains(v));
    of.retain(|_, x| cands.contains_key(&x.cand));
    if cands.is_empty() {
        return false;
    }
    let held: BTreeSet<Value> = of
        .values()
        .filter(|a| a.via_param)
        .map(|a| a.cand)
        .collect();
    let hoisted = read_through(func, &of);
    let entry = func.layout[0];
    // Each array's slots, made where its `new` was (in the entry block for
    // an array read through a parameter), and zero stored there; a `null`
    // for the edges of an array a parameter holds.
    let mut slots: BTreeMap<Value, Vec<Value>> = BTreeMap::new();
    let mut nulls: BTreeMap<Value, Value> = BTreeMap::new();
    let mut entry_insts: Vec<Inst> = Vec::new();
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
                        if hoisted.contains(&v) {
                            entry_insts.push(s);
                        } else {
                            insts.push(s);
                        }
                        insts.push(st);
                        refs.push(r);
                    }
                    if held.contains(&v) {
                        let null = func.dfg.make_inst(InstData::ArrayNull, &[Type::Array(t)]);
                        func.set_span(null, span);
                        entry_insts.push(null);
                        nulls.insert(v, func.dfg.inst_results(null)[0]);
                    }
                    slots.insert(v, refs);
                }
                InstData::ArrayFree { array } | InstData::DeferFree { array }
                    if of.contains_key(&array) => {}
                InstData::ArrayView { .. } if of.contains_key(&func.dfg.inst_results(i)[0]) => {}
                _ => insts.push(i),
            }
        }
        func.dfg.block_mut(b).insts = insts;
    }
    let rest = std::mem::take(&mut func.dfg.block_mut(entry).insts);
    entry_insts.extend(rest);
    func.dfg.block_mut(entry).insts = entry_insts;
    // Every other use, in place (the slots dominate their uses: made where
    // the `new` was, which dominates the array's uses, or in the entry).
    let array_of = |v: &Value| -> Option<Value> { of.get(v).map(|a| a.cand) };
    for b in func.layout.clone() {
        for i in func.dfg.block(b).insts.clone() {
            let slot = |array: &Value, index: &Value, func: &Function| {
                let k = constant_int(func, *index).expect("checked: a constant index in range");
                slots[&of[array].cand][(of[array].off + k) as usize]
            };
            let new = match func.dfg.inst(i) {
                InstData::Load { array, index, .. } if array_of(array).is_some() => {
                    InstData::RefLoad {
                        ptr: slot(array, index, func),
                    }
                }
                InstData::Store {
                    array,
                    index,
                    value,
                    ..
                } if array_of(array).is_some() => InstData::RefStore {
                    ptr: slot(array, index, func),
                    value: *value,
                },
                InstData::ArrayLen { array } if of.contains_key(array) => InstData::Const {
                    value: Constant::I64(of[array].len),
                },
                _ => {
                    // Edges send `null` for an array a parameter holds.
                    let mut data = func.dfg.inst(i).clone();
                    let mut changed = false;
                    for call in data.successors_mut() {
                        for a in call.args.iter_mut() {
                            if let Some(null) = array_of(a).and_then(|x| nulls.get(&x)) {
                                *a = *null;
                                changed = true;
                            }
                        }
                    }
                    if !changed {
                        continue;
                    }
                    data
                }
            };
            *func.dfg.inst_mut(i) = new;
        }
    }
    true
}
