//! `inline`: replaces calls of small functions by copies of their bodies.
//!
//! The `opt` stage runs it on every function after the fixed point, from
//! the callees' optimised bodies; derivative code (`ad::linearize`) runs it
//! on the function it differentiates first. A call that stays a call costs
//! reverse mode a second run of the callee's primal (its reverse derivative
//! recomputes it, the "joint" mode of docs/derivatives.md#memory-and-threads);
//! an inlined body is differentiated with the caller, its values taped like
//! the caller's own.
//!
//! Assumes: verified input. Guarantees: verified output with the same
//! behaviour (array arguments are references, so the copied body reads and
//! writes what the callee would have). Not inlined: imports, functions with
//! a custom derivative (the custom derivative must be used), `[checkpoint]`
//! functions (their callers re-run them instead of taping), derivative
//! requests and generated derivatives (they keep their own tape), the
//! function itself, recursive callees (directly or through others), and
//! callees of more than `MAX_CALLEE_INSTS` instructions. Calls brought in
//! by an inlined body are inlined too, up to `MAX_INLINED_CALLS` calls and
//! a budget of copied instructions (twice the caller's size, at least
//! `MIN_INLINED_INSTS`, at most `MAX_INLINED_INSTS`); tiny one-block
//! callees that call nothing (`tiny_leaf`) are inlined outside these
//! bounds.

use crate::callgraph::Recursive;
use crate::predicates::{has_tape_insts, keeps_tape};
use crate::rewrite::split_at_call;
use adc_ir::{Block, BlockCall, FuncId, Function, Inst, InstData, Module, Value};

const MAX_CALLEE_INSTS: usize = 400;
/// At most this many calls are inlined into one function (which also
/// bounds the unrolling of mutual recursion).
const MAX_INLINED_CALLS: usize = 64;
/// At most this many instructions are copied into one function, or twice
/// its own size if that is more (up to `MAX_INLINED_INSTS`): a chain of
/// functions that each call the next twice would otherwise grow every
/// caller 64-fold (300 such functions took 74 s to differentiate).
const MIN_INLINED_INSTS: usize = 400;
const TINY_LEAF_INSTS: usize = 8;
const MAX_INLINED_INSTS: usize = 2000;

/// Inlines into `func` from `module`, whose recursive functions are
/// `recursive` (`Recursive::of(module)`, computed once for all callers).
pub fn run(func: &mut Function, module: &Module, recursive: &Recursive) -> bool {
    // Whether a callee may be inlined depends on the module only: decided
    // once per callee (it includes a search of the call graph).
    let mut decided: std::collections::BTreeMap<FuncId, bool> = Default::default();
    let own: usize = func
        .layout
        .iter()
        .map(|b| func.dfg.block(*b).insts.len())
        .sum();
    let budget = (2 * own).clamp(MIN_INLINED_INSTS, MAX_INLINED_INSTS);
    let any = inline_straight_tiny_leaves(func, module, recursive, &mut decided);
    let name = func.name.clone();
    let inlined = inline_calls(func, module, |callee, inlined, copied| {
        *decided
            .entry(callee)
            .or_insert_with(|| inlinable(module, callee, &name, recursive))
            && inlined < MAX_INLINED_CALLS
            && copied + size(module, callee) <= budget
    });
    any || inlined > 0
}

/// Inlines every call of a one-block `tiny_leaf` in place, in one pass over
/// each block and one substitution of the calls' results at the end (the
/// general `inline_call` splits the block at each call: thousands of such
/// calls in a row took quadratic time).
fn inline_straight_tiny_leaves(
    func: &mut Function,
    module: &Module,
    recursive: &Recursive,
    decided: &mut std::collections::BTreeMap<FuncId, bool>,
) -> bool {
    let mut results_of: std::collections::HashMap<Value, Value> = Default::default();
    let mut straight_leaves: std::collections::BTreeMap<FuncId, bool> = Default::default();
    for b in func.layout.clone() {
        let old = std::mem::take(&mut func.dfg.block_mut(b).insts);
        let mut new = Vec::with_capacity(old.len());
        for i in old {
            let InstData::Call { func: id, args } = func.dfg.inst(i).clone() else {
                new.push(i);
                continue;
            };
            let callee = module.func(id);
            // Decided once per callee (each decision scans the callee).
            let straight = *straight_leaves.entry(id).or_insert_with(|| {
                *decided
                    .entry(id)
                    .or_insert_with(|| inlinable(module, id, &func.name, recursive))
                    && callee.layout.len() == 1
                    && tiny_leaf(module, id)
            });
            if !straight {
                new.push(i);
                continue;
            }
            let entry = callee.layout[0];
            let mut vmap: Vec<Option<Value>> = vec![None; callee.dfg.num_values()];
            for (p, a) in callee.dfg.block_params(entry).iter().zip(&args) {
                vmap[p.index()] = Some(*a);
            }
            let mapped = |vmap: &[Option<Value>], v: Value| {
                vmap[v.index()].expect("invariant: a verified block defines its values before use")
            };
            for &ci in &callee.dfg.block(entry).insts {
                let mut data = callee.dfg.inst(ci).clone();
                data.map_args(|v| mapped(&vmap, v));
                if let InstData::Return { args: rets } = &data {
                    for (r, v) in func.dfg.inst_results(i).iter().zip(rets) {
                        results_of.insert(*r, *v);
                    }
                    continue;
                }
                let types = crate::defs::result_types(callee, ci);
                let ni = func.dfg.make_inst(data, &types);
                func.set_span(ni, callee.span(ci));
                func.set_tag(ni, callee.tag(ci));
                for (r, nr) in callee
                    .dfg
                    .inst_results(ci)
                    .iter()
                    .zip(func.dfg.inst_results(ni))
                {
                    vmap[r.index()] = Some(*nr);
                }
                new.push(ni);
            }
        }
        func.dfg.block_mut(b).insts = new;
    }
    if results_of.is_empty() {
        return false;
    }
    // A result may stand for another call's result (`g(g(x))`).
    func.substitute(&|mut v| {
        while let Some(&w) = results_of.get(&v) {
            v = w;
        }
        v
    });
    true
}

/// A callee of at most `TINY_LEAF_INSTS` instructions that calls nothing:
/// its copy is hardly larger than the call and adds no further calls, so
/// when it is one block, it is inlined wherever it is called, outside the
/// budgets (`inline_straight_tiny_leaves`; one with branches stays within
/// them: each such copy splits the caller's block, and thousands of them
/// made the optimisations after it quadratic). (8,000 calls
/// of `return x * 1.0001;` in a row once stayed calls past the first 64,
/// and the reverse derivative's register allocation ran out of memory.)
fn tiny_leaf(module: &Module, id: FuncId) -> bool {
    let f = module.func(id);
    size(module, id) <= TINY_LEAF_INSTS
        && !f
            .layout
            .iter()
            .flat_map(|b| f.dfg.block(*b).insts.iter())
            .any(|i| matches!(f.dfg.inst(*i), InstData::Call { .. }))
}

/// The number of instructions of `id`'s body.
fn size(module: &Module, id: FuncId) -> usize {
    let f = module.func(id);
    f.layout.iter().map(|b| f.dfg.block(*b).insts.len()).sum()
}

fn inlinable(module: &Module, id: FuncId, caller: &str, recursive: &Recursive) -> bool {
    inlinable_but_tape(module, id, caller, recursive) && !has_tape_insts(module.func(id))
}

/// `inline`'s rules for a call of `id`, but for the tape.
fn inlinable_but_tape(module: &Module, id: FuncId, caller: &str, recursive: &Recursive) -> bool {
    let callee = module.func(id);
    let insts = || {
        callee
            .layout
            .iter()
            .flat_map(|b| callee.dfg.block(*b).insts.iter())
    };
    !callee.is_import()
        && !callee.layout.is_empty()
        && callee.deriv.is_none()
        && callee.custom_forward.is_none()
        && callee.custom_reverse.is_none()
        && !callee.checkpoint
        && callee.name != caller
        && !callee.name.starts_with("__adc_")
        && insts().count() <= MAX_CALLEE_INSTS
        && !recursive.get(id)
}

/// After the late passes: inlines each call of a generated derivative
/// that kept a tape until `tape-promote` (`kept_tape`, by `FuncId` index,
/// from the module before the late passes) and keeps none now (`module`; its `lencheck`s of shadows
/// stay, as checks), within `inline`'s other rules, up to
/// `MAX_INLINED_INSTS` copied instructions. The
/// caller's `unroll-region` copies of such a call then share their primal
/// work (`cse`, `diamond-cse`).
pub fn run_untaped(
    func: &mut Function,
    kept_tape: &[bool],
    module: &Module,
    recursive: &Recursive,
) -> bool {
    let mut decided: std::collections::BTreeMap<FuncId, bool> = Default::default();
    // A caller much smaller than the derivative (a loop around its calls)
    // gets the largest budget: the calls are what it does.
    let budget = MAX_INLINED_INSTS;
    let name = func.name.clone();
    let inlined = inline_calls(func, module, |callee, inlined, copied| {
        *decided.entry(callee).or_insert_with(|| {
            kept_tape.get(callee.index()).copied().unwrap_or(false)
                && !keeps_tape(module.func(callee))
                && inlinable_but_tape(module, callee, &name, recursive)
        }) && inlined < MAX_INLINED_CALLS
            && copied + size(module, callee) <= budget
    });
    inlined > 0
}

/// Inlines each call whose callee `accept` takes, given the number of
/// calls inlined so far and of instructions copied, in layout order (the
/// calls an inlined body brings in come next); returns how many. `accept`
/// must only reject more as the counts grow: the search resumes after the
/// last inlined call, and the substitution of the calls' results by their
/// continuations' parameters is made once at the end (a search from the
/// top and a substitution over the whole function per inlined call made
/// each inlining cost the size of the caller).
fn inline_calls(
    func: &mut Function,
    module: &Module,
    mut accept: impl FnMut(FuncId, usize, usize) -> bool,
) -> usize {
    let (mut inlined, mut copied) = (0, 0);
    let mut renamed = std::collections::BTreeMap::new();
    let mut from = 0;
    while let Some((pos, call, callee)) =
        first_call(func, from, |callee| accept(callee, inlined, copied))
    {
        copied += size(module, callee);
        renamed.extend(inline_call_at(func, module, pos, call));
        inlined += 1;
        // The calls before it were rejected; its body's blocks follow.
        from = pos + 1;
    }
    crate::rewrite::substitute(func, &renamed);
    inlined
}

/// The first call in layout order from the `from`th block on whose callee
/// `accept` takes: its block's position, the call and the callee.
fn first_call(
    func: &Function,
    from: usize,
    mut accept: impl FnMut(FuncId) -> bool,
) -> Option<(usize, Inst, FuncId)> {
    func.layout
        .iter()
        .enumerate()
        .skip(from)
        .find_map(|(pos, &b)| {
            func.dfg
                .block(b)
                .insts
                .iter()
                .find_map(|&i| match func.dfg.inst(i) {
                    InstData::Call { func: callee, .. } if accept(*callee) => {
                        Some((pos, i, *callee))
                    }
                    _ => None,
                })
        })
}

/// For each function of `module` (by `FuncId` index), whether it keeps a
/// tape: what `run_untaped` is given from the module before the late passes.
pub fn kept_tape(module: &Module) -> Vec<bool> {
    module.funcs.iter().map(keeps_tape).collect()
}

/// Replaces `call` (in block `b`) by a copy of the callee's body.
pub(crate) fn inline_call(func: &mut Function, module: &Module, b: Block, call: Inst) {
    let pos = func
        .layout
        .iter()
        .position(|&x| x == b)
        .expect("invariant: b is in the layout");
    let renamed = inline_call_at(func, module, pos, call).collect();
    crate::rewrite::substitute(func, &renamed);
}

/// `inline_call` of a call in the `pos`th block, but for the substitution
/// of the call's results, which it returns (each with the parameter of
/// the continuation block that stands for it).
fn inline_call_at(
    func: &mut Function,
    module: &Module,
    pos: usize,
    call: Inst,
) -> impl Iterator<Item = (Value, Value)> {
    let b = func.layout[pos];
    let InstData::Call {
        func: callee_id,
        args,
    } = func.dfg.inst(call).clone()
    else {
        unreachable!("invariant: `run` passes a call");
    };
    let callee = module.func(callee_id);
    let span = func.span(call);
    // The rest of `b` moves to a continuation block whose parameters are
    // the call's results.
    let (cont, results, cont_params) = split_at_call(func, b, call);
    // Copies of the callee's blocks and values.
    let mut vmap: Vec<Option<Value>> = vec![None; callee.dfg.num_values()];
    let mut bmap = std::collections::BTreeMap::new();
    for &cb in &callee.layout {
        let nb = func.dfg.make_block();
        bmap.insert(cb, nb);
        if cb == callee.layout[0] {
            for (p, a) in callee.dfg.block_params(cb).iter().zip(&args) {
                vmap[p.index()] = Some(*a);
            }
        } else {
            for &p in callee.dfg.block_params(cb) {
                let ty = callee.dfg.value_type(p);
                vmap[p.index()] = Some(func.dfg.append_block_param(nb, ty));
            }
        }
    }
    let mut copied: Vec<Inst> = Vec::new();
    for &cb in &callee.layout {
        for &ci in &callee.dfg.block(cb).insts {
            let types = crate::defs::result_types(callee, ci);
            let data = callee.dfg.inst(ci).clone();
            let ni = func.append_inst(bmap[&cb], data, &types, callee.span(ci));
            func.set_tag(ni, callee.tag(ci));
            for (r, nr) in callee
                .dfg
                .inst_results(ci)
                .iter()
                .zip(func.dfg.inst_results(ni).to_vec())
            {
                vmap[r.index()] = Some(nr);
            }
            copied.push(ni);
        }
    }
    for ni in copied {
        let data = func.dfg.inst_mut(ni);
        data.map_args(|v| vmap[v.index()].expect("invariant: verified callee defines its values"));
        for dest in data.successors_mut() {
            dest.block = bmap[&dest.block];
        }
        if let InstData::Return { args } = data {
            *data = InstData::Jump {
                dest: BlockCall {
                    block: cont,
                    args: std::mem::take(args),
                },
            };
        }
    }
    let entry = bmap[&callee.layout[0]];
    func.append_inst(
        b,
        InstData::Jump {
            dest: BlockCall {
                block: entry,
                args: vec![],
            },
        },
        &[],
        span,
    );
    let mut new_blocks: Vec<Block> = callee.layout.iter().map(|cb| bmap[cb]).collect();
    new_blocks.push(cont);
    func.layout.splice(pos + 1..pos + 1, new_blocks);
    results.into_iter().zip(cont_params)
}
