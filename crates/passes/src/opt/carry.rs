//! `carry`: array elements that consecutive iterations of a loop share are
//! carried from one iteration to the next in block parameters (scalar
//! replacement, Carr and Kennedy), instead of going through memory.
//!
//! A stencil `a[i-1] + a[i] + a[i+1]` then loads one element per iteration
//! instead of three, and the reverse sweep's `d[i-1] += ..; d[i] += ..;
//! d[i+1] += ..` no longer waits on the previous iteration's stores
//! (store-to-load forwarding, several cycles per element) but adds in
//! registers.
//!
//! Assumes: verified IR at the end of `opt` (`bce` has made the accesses it
//! proved unchecked). It matches a loop (`crate::loops::stepped_loops`) of
//! two blocks whose counter `i` steps by +1 or -1, whatever it enters with:
//! a header `h` of pure instructions and a branch to the body `b` or out,
//! and `b` ending in the jump back. An array `A` is carried when every
//! access to it in `b` is an unchecked load or store at `i + k` for
//! constants `k` spanning `lo..=hi` with `1 <= hi - lo <= MAX_CARRIED`,
//! `A` is a parameter or made by `new` or `copy` (parameters never alias,
//! docs/arrays.md#the-aliasing-rule), and every other array the loop touches is too and is
//! not `A`. `b` may hold nothing else but pure instructions, divisions,
//! and tape operations; every access to `A` comes before the first checked
//! access in `b` (an unchecked flag may rest on a check before it in `b`,
//! `bce::Witnesses` or forward mode's tangent loads, and the carried loads
//! run before `b`'s checks).
//!
//! Guarantees (check with `adc ir --after opt`): `h` takes the `hi - lo`
//! elements the next iteration shares with this one as new parameters;
//! `b` loads the one element that enters the window and, if it stores to
//! `A`, stores the one that leaves it; a new block in front of `h` loads
//! the first window when the loop will run (and passes zeros when it will
//! not); a new block after the loop stores the last window when the loop
//! ran. Every element is loaded before and stored after the same
//! iterations as before; only elements the loop touched are accessed,
//! so the new accesses are in bounds.

use crate::loops::{stepped_loops, SteppedLoop};
use crate::predicates::is_fresh_array;
use crate::rewrite::{substitute, Emitter};
use adc_ir::offset::offset_through_chain;
use adc_ir::{
    Block, BlockCall, CmpCond, Constant, Function, Inst, InstData, Span, Type, Value, ValueDef,
};
use std::collections::{BTreeMap, BTreeSet};
use std::ops::Range;

/// The most elements carried per array: each is a register across the loop.
const MAX_CARRIED: i64 = 4;

pub fn run(func: &mut Function) -> bool {
    let mut changed = false;
    // A rewrite adds blocks and edges, so the loops are found again after
    // each one (a rewritten header has three entries and is not matched).
    loop {
        let all: BTreeSet<Block> = func.layout.iter().copied().collect();
        let found = stepped_loops(func, &all)
            .into_iter()
            .find_map(|lp| plan(func, &lp).map(|p| (lp, p)));
        let Some((lp, carried)) = found else {
            return changed;
        };
        rewrite(func, &lp, &carried);
        changed = true;
    }
}

/// One array whose elements `i + lo ..= i + hi` a loop iteration accesses.
struct Carried {
    array: Value,
    elem: Type,
    lo: i64,
    hi: i64,
    stores: bool,
    span: Span,
}

impl Carried {
    /// Offsets from the counter, as the header sees it, of the elements
    /// held in the header's parameters: the window minus the one element
    /// that enters it in the body.
    fn held(&self, step: i64) -> Range<i64> {
        if step > 0 {
            self.lo..self.hi
        } else {
            self.lo + 1..self.hi + 1
        }
    }

    fn entering(&self, step: i64) -> i64 {
        if step > 0 {
            self.hi
        } else {
            self.lo
        }
    }

    fn leaving(&self, step: i64) -> i64 {
        if step > 0 {
            self.lo
        } else {
            self.hi
        }
    }
}

struct Access {
    inst: Inst,
    array: Value,
    offset: Option<i64>,
    checked: bool,
    store: bool,
}

fn plan(func: &Function, lp: &SteppedLoop) -> Option<Vec<Carried>> {
    let (h, b) = (lp.header, lp.latch);
    if lp.step.abs() != 1 || lp.body.len() != 2 || !func.dfg.block_params(b).is_empty() {
        return None;
    }
    let counter = func.dfg.block_params(h)[lp.param];
    let h_insts = &func.dfg.block(h).insts;
    let (h_term, h_rest) = h_insts.split_last()?;
    if !h_rest.iter().all(|&i| func.dfg.inst(i).is_pure()) {
        return None;
    }
    let InstData::Branch {
        then_dest,
        else_dest,
        ..
    } = func.dfg.inst(*h_term)
    else {
        return None;
    };
    let into_body = |c: &BlockCall| c.block == b && c.args.is_empty();
    if !(into_body(then_dest) || into_body(else_dest)) {
        return None;
    }
    let mut accesses = Vec::new();
    for &i in &func.dfg.block(b).insts {
        let (array, index, checked, store) = match func.dfg.inst(i) {
            InstData::Load {
                array,
                index,
                checked,
            } => (*array, *index, *checked, false),
            InstData::Store {
                array,
                index,
                checked,
                ..
            } => (*array, *index, *checked, true),
            d if d.is_pure() || d.is_terminator() => continue,
            InstData::Binary { .. }
            | InstData::TapePush { .. }
            | InstData::TapePop { .. }
            | InstData::TapeRead { .. } => continue,
            _ => return None,
        };
        let (base, k) = offset_through_chain(func, index);
        let offset = (base == counter).then_some(k);
        accesses.push(Access {
            inst: i,
            array,
            offset,
            checked,
            store,
        });
    }
    // The first window is loaded in front of the loop, the entering element
    // at the top of `b`. An unchecked access may owe its flag to a check
    // before it in `b` (`bce::Witnesses`: `t[i]` checked, then `a[i]` with
    // `len a` the length of `t`; forward mode's `dx[i]` after `x[i]`), which
    // those loads would skip: an array is carried only if every access to
    // it comes before the first checked access of `b`.
    let first_checked = accesses
        .iter()
        .position(|a| a.checked)
        .unwrap_or(accesses.len());
    // Distinct roots cannot alias; anything else might alias anything.
    let arrays: BTreeSet<Value> = accesses.iter().map(|a| a.array).collect();
    let defined_outside = |v: Value| match func.dfg.value_def(v) {
        ValueDef::Param(blk, _) => !lp.body.contains(&blk),
        ValueDef::Result(_, _) => true,
        ValueDef::Unused => false,
    };
    if !arrays
        .iter()
        .all(|&a| is_fresh_array(func, a) && defined_outside(a))
    {
        return None;
    }
    let mut carried = Vec::new();
    for array in arrays {
        let of_array: Vec<&Access> = accesses.iter().filter(|a| a.array == array).collect();
        if accesses[first_checked..].iter().any(|a| a.array == array) {
            continue;
        }
        let Some(offsets) = of_array
            .iter()
            .map(|a| a.offset)
            .collect::<Option<Vec<_>>>()
        else {
            continue;
        };
        let (lo, hi) = (*offsets.iter().min()?, *offsets.iter().max()?);
        if !(1..=MAX_CARRIED).contains(&(hi - lo)) {
            continue;
        }
        carried.push(Carried {
            array,
            elem: Type::Scalar(func.dfg.value_type(array).elem()),
            lo,
            hi,
            stores: of_array.iter().any(|a| a.store),
            span: func.span(of_array[0].inst),
        });
    }
    (!carried.is_empty()).then_some(carried)
}

/// An unchecked load of `c`'s element `base + k`.
fn load_element(at: &Emitter, func: &mut Function, c: &Carried, base: Value, k: i64) -> Value {
    let index = at.index(func, base, k);
    let data = InstData::Load {
        array: c.array,
        index,
        checked: false,
    };
    at.value(func, data, c.elem)
}

/// An unchecked store of `value` to `c`'s element `base + k`.
fn store_element(
    at: &Emitter,
    func: &mut Function,
    c: &Carried,
    base: Value,
    k: i64,
    value: Value,
) {
    let index = at.index(func, base, k);
    let data = InstData::Store {
        array: c.array,
        index,
        value,
        checked: false,
    };
    at.inst(func, data, None);
}

/// What the three steps of a rewrite share.
struct Site<'a> {
    lp: &'a SteppedLoop,
    carried: &'a [Carried],
    /// The header's branch.
    h_term: Inst,
    /// The counter, as a header parameter.
    counter: Value,
    /// Per carried array, the header parameters holding its shared elements.
    held: Vec<Vec<Value>>,
}

impl Site<'_> {
    fn emitter(&self, func: &Function, block: Block) -> Emitter {
        Emitter {
            block,
            tag: func.tag(self.h_term),
            span: self.carried[0].span,
        }
    }
}

fn rewrite(func: &mut Function, lp: &SteppedLoop, carried: &[Carried]) {
    let h = lp.header;
    let h_params: Vec<Value> = func.dfg.block_params(h).to_vec();
    let h_term = func
        .terminator(h)
        .expect("a matched header ends in a branch");
    // The header holds the shared elements, as its first parameters:
    // Cranelift computes a jump's pure arguments in their order, so the
    // loop's own accumulators (a gradient sum) are then computed last,
    // right before the back edge. With them first, regalloc2 spilled such
    // a sum in mid-iteration and the next iteration waited on the reload
    // (heat's gradient: 1.16 ms against 0.92 ms).
    let mut at = 0;
    let held: Vec<Vec<Value>> = carried
        .iter()
        .map(|c| {
            c.held(lp.step)
                .map(|_| {
                    at += 1;
                    func.dfg.insert_block_param(h, at - 1, c.elem)
                })
                .collect()
        })
        .collect();
    let site = Site {
        lp,
        carried,
        h_term,
        counter: h_params[lp.param],
        held,
    };
    carry_through_body(func, &site);
    let (mut new_blocks, entered_with) = load_first_window(func, &site, &h_params);
    new_blocks.extend(store_last_window(func, &site, entered_with));
    for (before, blk) in new_blocks {
        let at = func
            .layout
            .iter()
            .position(|x| *x == before)
            .expect("in layout");
        func.layout.insert(at, blk);
    }
}

/// The body: the entering element is loaded first; then loads read and
/// stores write the window's values; the leaving element is stored last,
/// and the back edge passes the shared elements on, shifted by a step.
fn carry_through_body(func: &mut Function, site: &Site) {
    let (b, step, counter) = (site.lp.latch, site.lp.step, site.counter);
    let body_at = site.emitter(func, b);
    let body_insts = std::mem::take(&mut func.dfg.block_mut(b).insts);
    let (b_term, b_rest) = body_insts
        .split_last()
        .expect("a matched body ends in a jump");
    let mut window: Vec<BTreeMap<i64, Value>> = Vec::new();
    for (c, held) in site.carried.iter().zip(&site.held) {
        let mut w: BTreeMap<i64, Value> = c.held(step).zip(held.iter().copied()).collect();
        let k = c.entering(step);
        w.insert(k, load_element(&body_at, func, c, counter, k));
        window.push(w);
    }
    let mut replaced: BTreeMap<Value, Value> = BTreeMap::new();
    for &i in b_rest {
        let access = match func.dfg.inst(i) {
            InstData::Load { array, index, .. } => Some((*array, *index, None)),
            InstData::Store {
                array,
                index,
                value,
                ..
            } => Some((*array, *index, Some(*value))),
            _ => None,
        };
        let hit = access.and_then(|(array, index, value)| {
            let n = site.carried.iter().position(|c| c.array == array)?;
            Some((n, offset_through_chain(func, index).1, value))
        });
        match hit {
            Some((n, k, None)) => {
                replaced.insert(func.dfg.inst_results(i)[0], window[n][&k]);
            }
            Some((n, k, Some(value))) => {
                window[n].insert(k, value);
            }
            None => func.dfg.block_mut(b).insts.push(i),
        }
    }
    for (c, w) in site.carried.iter().zip(&window) {
        if c.stores {
            let k = c.leaving(step);
            store_element(&body_at, func, c, counter, k, w[&k]);
        }
    }
    func.dfg.block_mut(b).insts.push(*b_term);
    if let InstData::Jump { dest } = func.dfg.inst_mut(*b_term) {
        let shifted = site
            .carried
            .iter()
            .zip(&window)
            .flat_map(|(c, w)| c.held(step).map(move |k| w[&(k + step)]));
        dest.args.splice(0..0, shifted.collect::<Vec<_>>());
    }
    substitute(func, &replaced);
}

/// In front of the header: a copy of the header's first visit decides
/// whether the loop runs; if it does, the first window is loaded, if not,
/// zeros stand in. The entry edge goes there instead of to the header.
/// Returns the blocks made (each with the block it goes in front of) and
/// the value the counter entered with.
fn load_first_window(
    func: &mut Function,
    site: &Site,
    h_params: &[Value],
) -> (Vec<(Block, Block)>, Value) {
    let (h, step) = (site.lp.header, site.lp.step);
    let (pre, first) = (func.dfg.make_block(), func.dfg.make_block());
    let (pre_at, first_at) = (site.emitter(func, pre), site.emitter(func, first));
    let mut copy: BTreeMap<Value, Value> = BTreeMap::new();
    for &p in h_params {
        let ty = func.dfg.value_type(p);
        copy.insert(p, func.dfg.append_block_param(pre, ty));
    }
    let h_insts = func.dfg.block(h).insts.clone();
    let (_, h_rest) = h_insts
        .split_last()
        .expect("a matched header ends in a branch");
    for &i in h_rest {
        let mut data = func.dfg.inst(i).clone();
        data.map_args(|v| copy.get(&v).copied().unwrap_or(v));
        // Invariant: the header holds pure instructions, one result each.
        let r = func.dfg.inst_results(i)[0];
        let new = pre_at.value(func, data, func.dfg.value_type(r));
        copy.insert(r, new);
    }
    let pre_params: Vec<Value> = h_params.iter().map(|p| copy[p]).collect();
    let entered_with = pre_params[site.lp.param];
    let mut loaded = Vec::new();
    for c in site.carried {
        for k in c.held(step) {
            loaded.push(load_element(&first_at, func, c, entered_with, k));
        }
    }
    let mut skipped = Vec::new();
    for c in site.carried {
        for _ in c.held(step) {
            skipped.push(pre_at.constant(func, Constant::zero(c.elem.elem())));
        }
    }
    loaded.extend(&pre_params);
    skipped.extend(&pre_params);
    let to_header = |args| InstData::Jump {
        dest: BlockCall { block: h, args },
    };
    first_at.inst(func, to_header(loaded), None);
    let InstData::Branch {
        cond, then_dest, ..
    } = func.dfg.inst(site.h_term).clone()
    else {
        unreachable!("a matched header ends in a branch")
    };
    let to_first = BlockCall {
        block: first,
        args: Vec::new(),
    };
    let to_skip = BlockCall {
        block: h,
        args: skipped,
    };
    let (then_dest, else_dest) = if then_dest.block == site.lp.latch {
        (to_first, to_skip)
    } else {
        (to_skip, to_first)
    };
    let cond = copy.get(&cond).copied().unwrap_or(cond);
    let branch = InstData::Branch {
        cond,
        then_dest,
        else_dest,
    };
    pre_at.inst(func, branch, None);
    let entry_term = func
        .terminator(site.lp.entry)
        .expect("the entry edge's block ends in a branch");
    for call in func.dfg.inst_mut(entry_term).successors_mut() {
        if call.block == h {
            call.block = pre;
        }
    }
    (vec![(h, pre), (h, first)], entered_with)
}

/// After the loop, if it ran, the elements still held are stored. Returns
/// the blocks made, each with the block it goes in front of.
fn store_last_window(func: &mut Function, site: &Site, entered_with: Value) -> Vec<(Block, Block)> {
    let (lp, carried, counter) = (site.lp, site.carried, site.counter);
    if !carried.iter().any(|c| c.stores) {
        return Vec::new();
    }
    let (after, last) = (func.dfg.make_block(), func.dfg.make_block());
    let (after_at, last_at) = (site.emitter(func, after), site.emitter(func, last));
    let mut exit = None;
    for call in func.dfg.inst_mut(site.h_term).successors_mut() {
        if call.block == lp.exit {
            exit = Some(std::mem::replace(
                call,
                BlockCall {
                    block: after,
                    args: Vec::new(),
                },
            ));
        }
    }
    let exit = exit.expect("a matched header branches to the exit");
    let ran = InstData::Cmp {
        cond: CmpCond::Ne,
        args: [counter, entered_with],
    };
    let ran = after_at.value(func, ran, Type::BOOL);
    let to_last = BlockCall {
        block: last,
        args: Vec::new(),
    };
    let branch = InstData::Branch {
        cond: ran,
        then_dest: to_last,
        else_dest: exit.clone(),
    };
    after_at.inst(func, branch, None);
    for (c, held) in carried.iter().zip(&site.held) {
        if c.stores {
            for (k, &v) in c.held(lp.step).zip(held) {
                store_element(&last_at, func, c, counter, k, v);
            }
        }
    }
    last_at.inst(func, InstData::Jump { dest: exit }, None);
    vec![(lp.exit, after), (lp.exit, last)]
}
