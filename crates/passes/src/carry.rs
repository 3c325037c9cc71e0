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
//! LANGUAGE.md §3), and every other array the loop touches is too and is
//! not `A`. `b` may hold nothing else but pure instructions, divisions,
//! and tape operations.
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
use crate::util::{is_fresh_array, offset_of, substitute};
use adc_ir::{
    BinaryOp, Block, BlockCall, CmpCond, Constant, Function, Inst, InstData, Span, Tag, Type,
    Value, ValueDef,
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

/// `v` as `base + k` through chains of additions of constants.
fn offset_from_base(func: &Function, mut v: Value) -> (Value, i64) {
    let mut total = 0i64;
    for _ in 0..16 {
        let (base, d) = offset_of(func, v);
        if base == v {
            break;
        }
        match total.checked_add(d) {
            Some(t) => total = t,
            None => break,
        }
        v = base;
    }
    (v, total)
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
            | InstData::TapePop
            | InstData::TapeRead => continue,
            _ => return None,
        };
        let (base, k) = offset_from_base(func, index);
        let offset = (base == counter).then_some(k);
        accesses.push(Access {
            inst: i,
            array,
            offset,
            checked,
            store,
        });
    }
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
        if of_array.iter().any(|a| a.checked) {
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

/// Appends instructions to one block with the loop's tag and span.
struct Emitter {
    block: Block,
    tag: Tag,
    span: Span,
}

impl Emitter {
    fn inst(&self, func: &mut Function, data: InstData, ty: Option<Type>) -> Option<Value> {
        let types: Vec<Type> = ty.into_iter().collect();
        let inst = func.append_inst(self.block, data, &types, self.span);
        func.set_tag(inst, self.tag);
        func.dfg.inst_results(inst).first().copied()
    }

    fn value(&self, func: &mut Function, data: InstData, ty: Type) -> Value {
        // Invariant: every instruction emitted with a type has one result.
        self.inst(func, data, Some(ty))
            .expect("an instruction with a result type has a result")
    }

    fn constant(&self, func: &mut Function, value: Constant) -> Value {
        self.value(func, InstData::Const { value }, Type::Scalar(value.ty()))
    }

    /// `base + k`.
    fn index(&self, func: &mut Function, base: Value, k: i64) -> Value {
        if k == 0 {
            return base;
        }
        let k = self.constant(func, Constant::I64(k));
        let data = InstData::Binary {
            op: BinaryOp::Add,
            args: [base, k],
        };
        self.value(func, data, Type::I64)
    }

    fn load(&self, func: &mut Function, c: &Carried, base: Value, k: i64) -> Value {
        let index = self.index(func, base, k);
        let data = InstData::Load {
            array: c.array,
            index,
            checked: false,
        };
        self.value(func, data, c.elem)
    }

    fn store(&self, func: &mut Function, c: &Carried, base: Value, k: i64, value: Value) {
        let index = self.index(func, base, k);
        let data = InstData::Store {
            array: c.array,
            index,
            value,
            checked: false,
        };
        self.inst(func, data, None);
    }
}

fn rewrite(func: &mut Function, lp: &SteppedLoop, carried: &[Carried]) {
    let (h, b, step) = (lp.header, lp.latch, lp.step);
    let counter = func.dfg.block_params(h)[lp.param];
    let h_params: Vec<Value> = func.dfg.block_params(h).to_vec();
    let h_term = func
        .terminator(h)
        .expect("a matched header ends in a branch");
    let (tag, span) = (func.tag(h_term), carried[0].span);
    let emit = |block| Emitter { block, tag, span };
    let (pre, first) = (func.dfg.make_block(), func.dfg.make_block());
    let (pre_at, first_at, body_at) = (emit(pre), emit(first), emit(b));
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
            c.held(step)
                .map(|_| {
                    at += 1;
                    func.dfg.insert_block_param(h, at - 1, c.elem)
                })
                .collect()
        })
        .collect();
    // The body: the entering element is loaded first; then loads read and
    // stores write the window's values; the leaving element is stored last.
    let body_insts = std::mem::take(&mut func.dfg.block_mut(b).insts);
    let (b_term, b_rest) = body_insts
        .split_last()
        .expect("a matched body ends in a jump");
    let mut window: Vec<BTreeMap<i64, Value>> = Vec::new();
    for (c, held) in carried.iter().zip(&held) {
        let mut w: BTreeMap<i64, Value> = c.held(step).zip(held.iter().copied()).collect();
        w.insert(
            c.entering(step),
            body_at.load(func, c, counter, c.entering(step)),
        );
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
            let n = carried.iter().position(|c| c.array == array)?;
            Some((n, offset_from_base(func, index).1, value))
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
    for (c, w) in carried.iter().zip(&window) {
        if c.stores {
            let k = c.leaving(step);
            body_at.store(func, c, counter, k, w[&k]);
        }
    }
    func.dfg.block_mut(b).insts.push(*b_term);
    if let InstData::Jump { dest } = func.dfg.inst_mut(*b_term) {
        let shifted = carried
            .iter()
            .zip(&window)
            .flat_map(|(c, w)| c.held(step).map(move |k| w[&(k + step)]));
        dest.args.splice(0..0, shifted.collect::<Vec<_>>());
    }
    substitute(func, &replaced);
    // In front of the header: the header's first visit, copied, decides
    // whether the first window is loaded.
    let mut copy: BTreeMap<Value, Value> = BTreeMap::new();
    for &p in &h_params {
        let ty = func.dfg.value_type(p);
        copy.insert(p, func.dfg.append_block_param(pre, ty));
    }
    for &i in func
        .dfg
        .block(h)
        .insts
        .clone()
        .split_last()
        .map_or(&[][..], |s| s.1)
    {
        let mut data = func.dfg.inst(i).clone();
        data.map_args(|v| copy.get(&v).copied().unwrap_or(v));
        let types: Vec<Type> = func
            .dfg
            .inst_results(i)
            .iter()
            .map(|&r| func.dfg.value_type(r))
            .collect();
        let new = pre_at.inst(func, data, types.first().copied());
        for (&r, n) in func.dfg.inst_results(i).to_vec().iter().zip(new) {
            copy.insert(r, n);
        }
    }
    let pre_params: Vec<Value> = h_params.iter().map(|p| copy[p]).collect();
    let pre_counter = pre_params[lp.param];
    let mut loaded = Vec::new();
    for c in carried {
        for k in c.held(step) {
            loaded.push(first_at.load(func, c, pre_counter, k));
        }
    }
    loaded.extend(&pre_params);
    first_at.inst(
        func,
        InstData::Jump {
            dest: BlockCall {
                block: h,
                args: loaded,
            },
        },
        None,
    );
    let mut skipped = Vec::new();
    for c in carried {
        for _ in c.held(step) {
            skipped.push(pre_at.constant(func, Constant::zero(c.elem.elem())));
        }
    }
    skipped.extend(&pre_params);
    let InstData::Branch {
        cond,
        then_dest,
        else_dest: _,
    } = func.dfg.inst(h_term).clone()
    else {
        unreachable!("a matched header ends in a branch")
    };
    let to_first = BlockCall {
        block: first,
        args: Vec::new(),
    };
    let to_header = BlockCall {
        block: h,
        args: skipped,
    };
    let (then_dest, else_dest) = if then_dest.block == b {
        (to_first, to_header)
    } else {
        (to_header, to_first)
    };
    let cond = copy.get(&cond).copied().unwrap_or(cond);
    pre_at.inst(
        func,
        InstData::Branch {
            cond,
            then_dest,
            else_dest,
        },
        None,
    );
    // The entry edge now goes through `pre`.
    let entry_term = func
        .terminator(lp.entry)
        .expect("the entry edge's block ends in a branch");
    for call in func.dfg.inst_mut(entry_term).successors_mut() {
        if call.block == h {
            call.block = pre;
        }
    }
    let mut new_blocks = vec![(h, pre), (h, first)];
    new_blocks.extend(store_last_window(
        func,
        lp,
        carried,
        &held,
        counter,
        pre_counter,
        h_term,
    ));
    for (before, blk) in new_blocks {
        let at = func
            .layout
            .iter()
            .position(|x| *x == before)
            .expect("in layout");
        func.layout.insert(at, blk);
    }
}

/// After the loop, if it ran, the elements still held are stored. Returns
/// the blocks made, each with the block it goes in front of.
fn store_last_window(
    func: &mut Function,
    lp: &SteppedLoop,
    carried: &[Carried],
    held: &[Vec<Value>],
    counter: Value,
    entered_with: Value,
    h_term: Inst,
) -> Vec<(Block, Block)> {
    if !carried.iter().any(|c| c.stores) {
        return Vec::new();
    }
    let (after, last) = (func.dfg.make_block(), func.dfg.make_block());
    let (tag, span) = (func.tag(h_term), carried[0].span);
    let emit = |block| Emitter { block, tag, span };
    let (after_at, last_at) = (emit(after), emit(last));
    let mut exit = None;
    for call in func.dfg.inst_mut(h_term).successors_mut() {
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
    for (c, held) in carried.iter().zip(held) {
        if c.stores {
            for (k, &v) in c.held(lp.step).zip(held) {
                last_at.store(func, c, counter, k, v);
            }
        }
    }
    last_at.inst(func, InstData::Jump { dest: exit }, None);
    vec![(lp.exit, after), (lp.exit, last)]
}
