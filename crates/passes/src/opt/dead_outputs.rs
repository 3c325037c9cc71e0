//! `dead-outputs`: a call that stays a call, writing into a scratch array
//! its caller never reads, calls a clone of its callee that does not
//! write it. A sparse Hessian's compressed evaluation passes the gradient
//! `NAME__gw` writes, which it never reads (only the gradient's tangents
//! are the Hessian): the clone of `NAME__gj__columns` zeroes only the
//! tangents, and its clone of the forward-over-reverse gradient
//! accumulates only them (no load and store of the gradient per element).
//!
//! The `opt` stage runs it on the whole module after `specialize` (the
//! calls that stay calls, the seeds' clones among them), each clone then
//! optimised like any function.
//!
//! Pattern, in the caller: an array `a` made by `new` in the function,
//! of a length not constant (a constant one is small: an empty array in
//! a parameter's place saves nothing), whose every use is a `len`, a `free`, or a view; the views of one range
//! (`a` itself, or the views with the same `lo` and `hi` values) are used
//! only as arguments of calls, each at one `out` or `inout` parameter, or
//! by `len` and `lencheck`; every other view of `a` is disjoint from that
//! range by construction (it ends at the range's `lo` value or starts at
//! its `hi` value). Each such call is redirected to the clone of its
//! callee for that parameter, when every one of them has one.
//!
//! The clone of `f` for parameter `k` (`__adc_dead_F_PARAM`, `static`,
//! without derivative request, custom derivative or `[checkpoint]`, the
//! same signature): the parameter's array and its views lose their
//! stores (a checked store leaves its check, `lencheck.index`); then
//! `dce`; no load of them may be used then, and every other use is a
//! view, `len`, `lencheck`, `aliascheck`, or an argument of a call at
//! an `out` or `inout` parameter, redirected to the callee's clone for
//! it in turn (recursion: no clone). `f` qualifies as for `specialize`
//! (at most `specialize::MAX_CALLEE_INSTS` instructions, no tape), at
//! most `MAX_CLONES` clones per module.
//!
//! Assumes: verified input; the aliasing rule (a writable argument shares
//! no element with another argument, docs/arrays.md#the-aliasing-rule).
//! Guarantees: verified output with the same results and runtime errors:
//! what is not stored is never read (not by the caller, whose other reads
//! are of disjoint ranges, nor by the callee, whose loads of it are
//! unused); returns the clones it added.

use crate::defs::use_counts;
use adc_ir::{FuncId, Function, Inst, InstData, LenCheckOf, Module, ParamMode, Type, Value};
use std::collections::{BTreeMap, BTreeSet};

/// At most this many clones per module.
const MAX_CLONES: usize = 24;

/// Clones made (or refused: `None`) per callee and parameter.
type Memo = BTreeMap<(FuncId, usize), Option<FuncId>>;

/// Redirects the calls of every function with a body; returns the clones
/// added to `module`.
pub fn run(module: &mut Module) -> Vec<FuncId> {
    let mut memo = Memo::new();
    let mut added = Vec::new();
    let callers: Vec<FuncId> = module
        .func_ids()
        .filter(|id| !module.func(*id).layout.is_empty())
        .collect();
    for caller in callers {
        for calls in unread_ranges(module.func(caller)) {
            // Every call writes the range (no clone made otherwise).
            let writes = calls.iter().all(|&(inst, k)| {
                let InstData::Call { func, .. } = module.func(caller).dfg.inst(inst) else {
                    unreachable!("invariant: `unread_ranges` gives calls")
                };
                module
                    .func(*func)
                    .params
                    .get(k)
                    .is_some_and(|p| p.mode != ParamMode::In)
            });
            if !writes {
                continue;
            }
            // Each call's callee (as redirected so far) and parameter.
            let mut targets = Vec::new();
            for &(inst, k) in &calls {
                let InstData::Call { func, .. } = module.func(caller).dfg.inst(inst) else {
                    unreachable!("invariant: `unread_ranges` gives calls")
                };
                let mut busy = BTreeSet::new();
                match clone_for(module, *func, k, &mut memo, &mut busy, &mut added) {
                    Some(id) => targets.push((inst, id)),
                    None => break,
                }
            }
            if targets.len() != calls.len() {
                continue;
            }
            for (inst, id) in targets {
                if let InstData::Call { func, .. } = module.func_mut(caller).dfg.inst_mut(inst) {
                    *func = id;
                }
            }
        }
    }
    added
}

/// Every instruction of `f` with its operands.
fn insts(f: &Function) -> Vec<(Inst, Vec<Value>)> {
    let mut out = Vec::new();
    for &b in &f.layout {
        for &i in &f.dfg.block(b).insts {
            let mut args = Vec::new();
            f.dfg.inst(i).for_each_arg(|v| args.push(v));
            out.push((i, args));
        }
    }
    out
}

/// Per range of a `new` array the caller never reads (the pattern of the
/// module doc): the calls writing it, each with its parameter.
fn unread_ranges(f: &Function) -> Vec<Vec<(Inst, usize)>> {
    let all = insts(f);
    let mut out = Vec::new();
    for (new, _) in &all {
        // A length known at compile time is small (an empty array that
        // only fills a parameter's place): nothing to save.
        match f.dfg.inst(*new) {
            InstData::ArrayNew { len, .. } if crate::defs::int_const(f, *len).is_none() => {}
            _ => continue,
        }
        let a = f.dfg.inst_results(*new)[0];
        // The views of `a` and every other use allowed.
        let mut views = Vec::new();
        // `a` itself passed to a call: its whole range.
        let mut whole = false;
        let ok = all
            .iter()
            .filter(|(_, args)| args.contains(&a))
            .all(|(i, _)| match f.dfg.inst(*i) {
                InstData::ArrayView { array, lo, hi } if *array == a => {
                    views.push((f.dfg.inst_results(*i)[0], (*lo, *hi)));
                    true
                }
                InstData::ArrayLen { .. }
                | InstData::ArrayFree { .. }
                | InstData::DeferFree { .. } => true,
                InstData::Call { .. } => {
                    whole = true;
                    true
                }
                InstData::Jump { .. } | InstData::Branch { .. } => only_freed(f, &all, *i, a),
                _ => false,
            });
        if !ok {
            continue;
        }
        // The ranges: `a` whole, then each view's.
        let mut ranges: Vec<Option<(Value, Value)>> = vec![None];
        for (_, r) in &views {
            if !ranges.contains(&Some(*r)) {
                ranges.push(Some(*r));
            }
        }
        for range in ranges {
            let members: Vec<Value> = match range {
                None => vec![a],
                Some(r) => views
                    .iter()
                    .filter(|(_, s)| *s == r)
                    .map(|(v, _)| *v)
                    .collect(),
            };
            // Every other view lies apart from this range.
            let apart = match range {
                None => views.is_empty(),
                Some((lo, hi)) => {
                    !whole
                        && views
                            .iter()
                            .all(|(_, (l, h))| (*l, *h) == (lo, hi) || *h == lo || *l == hi)
                }
            };
            if !apart {
                continue;
            }
            if let Some(calls) = writing_calls(f, &all, &members) {
                if !calls.is_empty() {
                    out.push(calls);
                }
            }
        }
    }
    out
}

/// Whether the block parameters the terminator `term` passes `a` to are
/// only freed (or their length read): the join where scratch is freed.
fn only_freed(f: &Function, all: &[(Inst, Vec<Value>)], term: Inst, a: Value) -> bool {
    let mut params = Vec::new();
    for dest in f.dfg.inst(term).successors() {
        let to = f.dfg.block_params(dest.block);
        for (k, v) in dest.args.iter().enumerate() {
            if *v == a {
                params.push(to[k]);
            }
        }
    }
    all.iter()
        .filter(|(_, args)| args.iter().any(|v| params.contains(v)))
        .all(|(i, _)| {
            matches!(
                f.dfg.inst(*i),
                InstData::ArrayFree { .. } | InstData::DeferFree { .. } | InstData::ArrayLen { .. }
            )
        })
}

/// The calls through which `members` (one range) are used, each at one
/// writable parameter, when every other use only reads their length or
/// checks their overlap (`aliascheck`), or frees them.
fn writing_calls(
    f: &Function,
    all: &[(Inst, Vec<Value>)],
    members: &[Value],
) -> Option<Vec<(Inst, usize)>> {
    let mut calls = Vec::new();
    for (i, args) in all {
        if !args.iter().any(|v| members.contains(v)) {
            continue;
        }
        match f.dfg.inst(*i) {
            InstData::ArrayLen { .. } | InstData::LenCheck { .. } => {}
            InstData::Call { args, .. } => {
                let at: Vec<usize> = (0..args.len())
                    .filter(|k| members.contains(&args[*k]))
                    .collect();
                let [k] = at[..] else { return None };
                calls.push((*i, k));
            }
            InstData::AliasCheck { .. }
            | InstData::ArrayFree { .. }
            | InstData::DeferFree { .. } => {}
            InstData::Jump { .. } | InstData::Branch { .. }
                if args
                    .iter()
                    .filter(|v| members.contains(v))
                    .all(|v| only_freed(f, all, *i, *v)) => {}
            _ => return None,
        }
    }
    Some(calls)
}

/// The clone of `callee` that does not write its parameter `k` (module
/// doc), made once; `None` when it cannot be made.
fn clone_for(
    module: &mut Module,
    callee: FuncId,
    k: usize,
    memo: &mut Memo,
    busy: &mut BTreeSet<(FuncId, usize)>,
    added: &mut Vec<FuncId>,
) -> Option<FuncId> {
    if let Some(done) = memo.get(&(callee, k)) {
        return *done;
    }
    if !busy.insert((callee, k)) || added.len() >= MAX_CLONES {
        return None;
    }
    let made = make_clone(module, callee, k, memo, busy, added);
    busy.remove(&(callee, k));
    memo.insert((callee, k), made);
    made
}

fn make_clone(
    module: &mut Module,
    callee: FuncId,
    k: usize,
    memo: &mut Memo,
    busy: &mut BTreeSet<(FuncId, usize)>,
    added: &mut Vec<FuncId>,
) -> Option<FuncId> {
    let src = module.func(callee);
    let param = src.params.get(k)?;
    if param.mode == ParamMode::In
        || !matches!(param.ty, Type::Array(_))
        || !crate::opt::specialize::cloneable(module, src)
    {
        return None;
    }
    let mut f = src.clone();
    let p = f.dfg.block_params(f.entry_block()?)[k];
    // The parameter and its views, and theirs (to a fixed point: the
    // layout need not put a view after its array's).
    let mut family = BTreeSet::from([p]);
    loop {
        let before = family.len();
        for (i, _) in insts(&f) {
            if let InstData::ArrayView { array, .. } = f.dfg.inst(i) {
                if family.contains(array) {
                    family.insert(f.dfg.inst_results(i)[0]);
                }
            }
        }
        if family.len() == before {
            break;
        }
    }
    // Stores go (a checked one leaves its check); calls are redirected below.
    let mut calls = Vec::new();
    for (i, args) in insts(&f) {
        if !args.iter().any(|v| family.contains(v)) {
            continue;
        }
        match f.dfg.inst(i).clone() {
            InstData::Store {
                array,
                index,
                value,
                checked,
            } if family.contains(&array) => {
                let _ = value;
                if checked {
                    *f.dfg.inst_mut(i) = InstData::LenCheck {
                        args: [index, array],
                        what: LenCheckOf::Index,
                    };
                } else {
                    for &b in &f.layout {
                        f.dfg.block_mut(b).insts.retain(|x| *x != i);
                    }
                }
            }
            InstData::Load { array, .. } if family.contains(&array) => {}
            InstData::ArrayView { array, .. } if family.contains(&array) => {}
            InstData::ArrayLen { .. } | InstData::LenCheck { .. } | InstData::AliasCheck { .. } => {
            }
            InstData::Call { func, args } => {
                let at: Vec<usize> = (0..args.len())
                    .filter(|j| family.contains(&args[*j]))
                    .collect();
                let [j] = at[..] else { return None };
                calls.push((i, func, j));
            }
            _ => return None,
        }
    }
    crate::opt::dce::run(&mut f);
    // No load of what is no longer stored may be used.
    let counts = use_counts(&f);
    for (i, _) in insts(&f) {
        if let InstData::Load { array, .. } = f.dfg.inst(i) {
            if family.contains(array) && counts[f.dfg.inst_results(i)[0].index()] > 0 {
                return None;
            }
        }
    }
    for (i, func, j) in calls {
        if !f.layout.iter().any(|b| f.dfg.block(*b).insts.contains(&i)) {
            continue;
        }
        let id = clone_for(module, func, j, memo, busy, added)?;
        if let InstData::Call { func, .. } = f.dfg.inst_mut(i) {
            *func = id;
        }
    }
    let name = format!("__adc_dead_{}_{}", f.name, f.params[k].name);
    crate::opt::specialize::make_private_clone(module, &mut f, &name);
    let id = module.push(f);
    added.push(id);
    Some(id)
}
