//! `fast-path` of split-mode halves (split mode, `ad/split.rs`): a callee that
//! adopts the tape its caller lends (`tape.lend`, the call, `tape.reclaim`)
//! and whose entry block only computes, loads, checks lengths and pops the
//! tape before its branch, one of whose targets leads through jumps to a
//! `return` after a few computations, loads, stores and pushes on tape 0.
//! GradBench det's augmented half pushes its edge and two indices there
//! for a minor of size 1, and its reverse half pops them and adds the seed
//! to one element of the shadow: ell! calls of each, half the calls of the
//! gradient.
//!
//! Each such call runs a copy of the entry on the caller's own tape 0 (the
//! tape it would lend), then on the arm's edge a copy of the arm (its
//! pushes and pops on that tape too), and on the other edge the lend, a
//! call of the callee's continuation and the reclaim. `tape.adopt` and
//! `tape.give` of the lent tape are not copied: lending and taking back
//! are the identity on the tape's contents.
//!
//! The continuation `__adc_cont_G` is `G` entered past its entry's test
//! (`cont`): its entry adopts the tape, computes and loads again what
//! `G`'s entry computed and loaded (nothing is stored in between), takes
//! what that entry popped as parameters (its callers popped them), checks
//! no lengths (its callers did) and jumps to the other edge. Its own calls
//! of `G` get the same rewriting; a length check copied into it that
//! checks its own parameters, at the positions of the check of `G`'s
//! parameters, is left out (its callers checked them). Last,
//! `drop_dead_params` removes each parameter of a continuation that only
//! passes itself to its own position of calls of the continuation (det's
//! augmented half's shadow of `a`, which only its length check read), and
//! the argument from every call.
//!
//! Assumes: verified input; a split-mode call is `tape.lend`, the call, and
//! `tape.reclaim` in a row (as `unzip` and `transpose` make them).
//! Guarantees: verified output with the same behaviour (the tape holds the
//! same values in the same order at every step).

use super::{append_jump, branch_to_paths, copy_from, splice_paths, MAX_ARM, MAX_ENTRY};
use crate::defs::use_counts;
use crate::rewrite::{split_at_call, substitute};
use adc_ir::{Block, BlockCall, FuncId, Function, Inst, InstData, Module, Param, ParamMode, Value};
use std::collections::BTreeMap;

/// Blocks of an arm, joined by jumps (det's augmented half's early edge
/// jumps to the block that pushes and returns).
const MAX_ARM_BLOCKS: usize = 3;

/// A split-mode half's fast path: its entry block, the arm's blocks in
/// order, whether the arm is the branch's then edge, and the index of the
/// parameter that is the lent tape.
pub(super) struct HalfPath {
    entry: Block,
    arm: Vec<Block>,
    then_edge: bool,
    tape: usize,
}

/// The name of `name`'s continuation.
pub(super) fn cont_name(name: &str) -> String {
    format!("__adc_cont_{name}")
}

fn entry_inst(d: &InstData) -> bool {
    d.is_pure()
        || matches!(
            d,
            InstData::Load { .. } | InstData::LenCheck { .. } | InstData::TapePop { tape: 0 }
        )
}

fn arm_inst(d: &InstData) -> bool {
    d.is_pure()
        || matches!(
            d,
            InstData::Load { .. }
                | InstData::Store { .. }
                | InstData::TapePush { tape: 0, .. }
                | InstData::TapePop { tape: 0 }
        )
}

/// Whether `d` hands the tape at `tape` over (`tape.adopt`, `tape.give`).
fn hand_over(d: &InstData, tape: Value) -> bool {
    matches!(d, InstData::TapeAdopt { handle } | InstData::TapeGive { handle } if *handle == tape)
}

/// `callee`'s fast path, if it is a split-mode half that has one.
pub(super) fn half_path(callee: &Function) -> Option<HalfPath> {
    if callee.is_import()
        || callee.deriv.is_some()
        || callee.custom_forward.is_some()
        || callee.custom_reverse.is_some()
    {
        return None;
    }
    let entry = *callee.layout.first()?;
    let params = callee.dfg.block_params(entry);
    let (_, body) = callee.dfg.block(entry).insts.split_last()?;
    // The entry adopts a parameter before any other tape instruction.
    let adopt = body.iter().position(|i| !entry_inst(callee.dfg.inst(*i)))?;
    let InstData::TapeAdopt { handle } = callee.dfg.inst(body[adopt]) else {
        return None;
    };
    let tape = params.iter().position(|p| p == handle)?;
    let rest = body.iter().enumerate().filter(|(k, _)| *k != adopt);
    if body.len() > MAX_ENTRY + 1
        || !rest.clone().all(|(_, i)| entry_inst(callee.dfg.inst(*i)))
        || body[..adopt]
            .iter()
            .any(|i| matches!(callee.dfg.inst(*i), InstData::TapePop { .. }))
    {
        return None;
    }
    let (_, then_dest, else_dest) = crate::cfg::branch_at(callee, entry)?;
    let handle = *handle;
    // Every other use of the tape is a `tape.give` right before a return.
    if !gives_only(callee, handle, body[adopt]) {
        return None;
    }
    [(then_dest, true), (else_dest, false)]
        .into_iter()
        .find_map(|(dest, then_edge)| {
            let arm = arm_chain(callee, entry, dest.block, handle)?;
            Some(HalfPath {
                entry,
                arm,
                then_edge,
                tape,
            })
        })
}

/// Whether every use of `tape` but `adopt` is a `tape.give` right before
/// a `return`.
fn gives_only(f: &Function, tape: Value, adopt: Inst) -> bool {
    f.layout.iter().all(|&b| {
        let insts = &f.dfg.block(b).insts;
        insts.iter().enumerate().all(|(k, &i)| {
            let d = f.dfg.inst(i);
            let mut uses = false;
            d.for_each_arg(|v| uses |= v == tape);
            !uses
                || i == adopt
                || matches!(d, InstData::TapeGive { .. })
                    && insts
                        .get(k + 1)
                        .is_some_and(|n| matches!(f.dfg.inst(*n), InstData::Return { .. }))
        })
    })
}

/// The blocks from `first` through jumps to a `return`, if they hold at
/// most `MAX_ARM` instructions `arm_inst` allows (besides the tape's
/// `tape.give`).
fn arm_chain(f: &Function, entry: Block, first: Block, tape: Value) -> Option<Vec<Block>> {
    let mut arm = vec![];
    let mut b = first;
    let mut count = 0;
    loop {
        if b == entry || arm.contains(&b) || arm.len() == MAX_ARM_BLOCKS {
            return None;
        }
        arm.push(b);
        let (term, body) = f.dfg.block(b).insts.split_last()?;
        for i in body {
            let d = f.dfg.inst(*i);
            if hand_over(d, tape) {
                continue;
            }
            count += 1;
            if !arm_inst(d) || count > MAX_ARM {
                return None;
            }
        }
        match f.dfg.inst(*term) {
            InstData::Return { .. } => return Some(arm),
            InstData::Jump { dest } => b = dest.block,
            _ => return None,
        }
    }
}

/// `g`'s continuation: `g` entered past its entry's test.
pub(super) fn cont(g: &Function, path: &HalfPath) -> Function {
    let mut f = g.clone();
    f.name = cont_name(&g.name);
    crate::opt::specialize::make_private(&mut f);
    let entry = path.entry;
    let (term, body) = f
        .dfg
        .block(entry)
        .insts
        .split_last()
        .map(|(t, b)| (*t, b.to_vec()))
        .expect("invariant: `half_path` saw the entry's branch");
    let mut kept = Vec::new();
    let mut popped = BTreeMap::new();
    for i in body {
        match f.dfg.inst(i) {
            InstData::TapePop { .. } => {
                let r = f.dfg.inst_results(i)[0];
                let ty = f.dfg.value_type(r);
                let p = f.dfg.append_block_param(entry, ty);
                f.params.push(Param {
                    name: format!("popped{}", popped.len()),
                    ty,
                    mode: ParamMode::In,
                });
                popped.insert(r, p);
            }
            InstData::LenCheck { .. } => {}
            _ => kept.push(i),
        }
    }
    let InstData::Branch {
        then_dest,
        else_dest,
        ..
    } = f.dfg.inst(term).clone()
    else {
        unreachable!("invariant: `half_path` saw a branch");
    };
    let dest = if path.then_edge { else_dest } else { then_dest };
    *f.dfg.inst_mut(term) = InstData::Jump { dest };
    kept.push(term);
    f.dfg.block_mut(entry).insts = kept;
    substitute(&mut f, &popped);
    // The arm is unreachable now (unless the other edge reaches it).
    crate::opt::dce::run(&mut f);
    f
}

/// Rewrites the split-mode call `call` of `callee` in block `b` (`lend`
/// before it, `tape.reclaim` after it) as the copies and the call of
/// `cont_id`; false (nothing changed) when `call` is not such a call.
pub(super) fn rewrite(
    func: &mut Function,
    callee: &Function,
    path: &HalfPath,
    cont_id: FuncId,
    b: Block,
    call: Inst,
) -> bool {
    let InstData::Call { args, .. } = func.dfg.inst(call).clone() else {
        return false;
    };
    let insts = func.dfg.block(b).insts.clone();
    let at = insts
        .iter()
        .position(|&i| i == call)
        .expect("invariant: `run` found the call in `b`");
    let handle = args[path.tape];
    let (Some(&lend), Some(&reclaim)) = (at.checked_sub(1).map(|k| &insts[k]), insts.get(at + 1))
    else {
        return false;
    };
    let lent = matches!(func.dfg.inst(lend), InstData::TapeLend)
        && func.dfg.inst_results(lend) == [handle]
        && matches!(func.dfg.inst(reclaim), InstData::TapeReclaim { handle: h } if *h == handle);
    if !lent {
        return false;
    }
    let here = (func.span(call), func.tag(call));
    func.dfg.block_mut(b).insts.remove(at - 1);
    let (rest, results, rest_params) = split_at_call(func, b, call);
    func.dfg.block_mut(rest).insts.remove(0);
    let (fast, slow) = (func.dfg.make_block(), func.dfg.make_block());
    // The entry's copy, on this function's tape, ends in the test.
    let (mut map, popped, cond, arm_args) = copy_entry(func, callee, path, b, &args, here.1);
    let to_fast = BlockCall {
        block: fast,
        args: arm_args,
    };
    branch_to_paths(func, b, cond, path.then_edge, to_fast, slow, here);
    // The slow edge: the lend, the continuation's call, the reclaim.
    if let InstData::Call { func: id, args } = func.dfg.inst_mut(call) {
        *id = cont_id;
        args.extend(popped);
    }
    func.dfg.block_mut(slow).insts.extend([lend, call, reclaim]);
    append_jump(func, slow, rest, results.clone(), here);
    // The fast edge: the arm's copy.
    copy_arm(func, callee, path, fast, rest, &mut map, here);
    splice_paths(func, b, [fast, slow, rest], &results, rest_params);
    true
}

/// Copies `callee`'s entry but its hand-over of the tape and its branch to
/// the end of `b`, its parameters taking `args`; in `callee`'s own
/// continuation, a length check of the continuation's parameters at the
/// positions of `callee`'s checked ones is left out (they held on entry;
/// before `drop_dead_params`, its first parameters are `callee`'s).
/// Returns the map of `callee`'s values to the copies, the copied pops'
/// results (in order), the test and the arguments of the arm's edge.
fn copy_entry(
    func: &mut Function,
    callee: &Function,
    path: &HalfPath,
    b: Block,
    args: &[Value],
    tag: adc_ir::Tag,
) -> (BTreeMap<Value, Value>, Vec<Value>, Value, Vec<Value>) {
    let params = callee.dfg.block_params(path.entry);
    let mut map: BTreeMap<Value, Value> =
        params.iter().copied().zip(args.iter().copied()).collect();
    let own = func.name == cont_name(&callee.name);
    let caller_params = func.dfg.block_params(func.layout[0]).to_vec();
    let mut popped = Vec::new();
    let (term, body) = callee
        .dfg
        .block(path.entry)
        .insts
        .split_last()
        .expect("invariant: `half_path` saw the entry's branch");
    for &ci in body {
        let d = callee.dfg.inst(ci);
        if hand_over(d, params[path.tape]) {
            continue;
        }
        if let InstData::LenCheck { args: pair, .. } = d {
            let checked = pair.iter().all(|v| {
                params
                    .iter()
                    .position(|p| p == v)
                    .is_some_and(|k| caller_params.get(k) == Some(&map[v]))
            });
            if own && checked {
                continue;
            }
        }
        let copy = copy_from(func, callee, ci, b, &mut map, tag);
        if matches!(d, InstData::TapePop { .. }) {
            popped.push(func.dfg.inst_results(copy)[0]);
        }
    }
    let InstData::Branch {
        cond,
        then_dest,
        else_dest,
    } = callee.dfg.inst(*term)
    else {
        unreachable!("invariant: `half_path` saw a branch");
    };
    let arm = if path.then_edge { then_dest } else { else_dest };
    // Every value the entry's copy reaches is in `map`: the parameters and
    // the results of the entry's instructions, all copied but the
    // hand-over and left-out checks, which have none.
    let arm_args = arm.args.iter().map(|v| map[v]).collect();
    let cond = map[cond];
    (map, popped, cond, arm_args)
}

/// Copies the arm of `callee`'s fast path but its hand-over of the tape
/// into `fast`, which takes the first arm block's parameters, and ends it
/// in a jump to `rest` with what the arm returns. `map`: `callee`'s values
/// to the copies, the entry's already.
fn copy_arm(
    func: &mut Function,
    callee: &Function,
    path: &HalfPath,
    fast: Block,
    rest: Block,
    map: &mut BTreeMap<Value, Value>,
    here: (adc_ir::Span, adc_ir::Tag),
) {
    for &p in callee.dfg.block_params(path.arm[0]) {
        let ty = callee.dfg.value_type(p);
        map.insert(p, func.dfg.append_block_param(fast, ty));
    }
    let tape = callee.dfg.block_params(path.entry)[path.tape];
    for &ab in &path.arm {
        let (term, body) = callee
            .dfg
            .block(ab)
            .insts
            .split_last()
            .expect("invariant: `arm_chain` saw a terminator");
        for &ci in body {
            if !hand_over(callee.dfg.inst(ci), tape) {
                copy_from(func, callee, ci, fast, map, here.1);
            }
        }
        match callee.dfg.inst(*term) {
            // The next arm block's parameters are the jump's arguments.
            InstData::Jump { dest } => {
                for (p, a) in callee.dfg.block_params(dest.block).iter().zip(&dest.args) {
                    map.insert(*p, map[a]);
                }
            }
            InstData::Return { args } => {
                let args = args.iter().map(|v| map[v]).collect();
                append_jump(func, fast, rest, args, here);
            }
            _ => unreachable!("invariant: `arm_chain` saw jumps and a return"),
        }
    }
}

/// Drops every parameter of the continuations `conts` that is only passed
/// to its own position of the continuation's calls of itself, with the
/// arguments of every call of it; returns the functions changed. The calls
/// of each continuation are found in one scan of the module first (a scan
/// per continuation was quadratic: thousands of halves with a fast path).
pub fn drop_dead_params(module: &mut Module, conts: &[FuncId]) -> Vec<FuncId> {
    let mut changed = Vec::new();
    let mut is_changed = vec![false; module.funcs.len()];
    let sites = call_sites(module, conts);
    for &c in conts {
        let f = module.func(c);
        let Some(entry) = f.entry_block() else {
            continue;
        };
        let params = f.dfg.block_params(entry).to_vec();
        let counts = use_counts(f);
        let mut own = vec![0u32; params.len()];
        for &b in &f.layout {
            for &i in &f.dfg.block(b).insts {
                if let InstData::Call { func, args } = f.dfg.inst(i) {
                    if *func == c {
                        for (k, a) in args.iter().enumerate() {
                            if params.get(k) == Some(a) {
                                own[k] += 1;
                            }
                        }
                    }
                }
            }
        }
        let dead: Vec<bool> = params
            .iter()
            .zip(&own)
            .map(|(p, n)| counts[p.index()] == *n)
            .collect();
        if !dead.contains(&true) {
            continue;
        }
        let f = module.func_mut(c);
        f.dfg.remove_block_params_where(entry, &dead);
        let mut k = 0;
        f.params.retain(|_| {
            k += 1;
            !dead[k - 1]
        });
        for &(id, i) in sites.get(&c).into_iter().flatten() {
            if let InstData::Call { args, .. } = module.func_mut(id).dfg.inst_mut(i) {
                let mut k = 0;
                args.retain(|_| {
                    k += 1;
                    !dead[k - 1]
                });
            }
            if !std::mem::replace(&mut is_changed[id.index()], true) {
                changed.push(id);
            }
        }
    }
    changed
}

/// The calls of each of `conts` in `module`: the calling function and the
/// call, in the order of the functions and their layouts.
fn call_sites(
    module: &Module,
    conts: &[FuncId],
) -> std::collections::HashMap<FuncId, Vec<(FuncId, Inst)>> {
    let mut sites: std::collections::HashMap<FuncId, Vec<(FuncId, Inst)>> =
        conts.iter().map(|&c| (c, Vec::new())).collect();
    for id in module.func_ids() {
        let g = module.func(id);
        for &b in &g.layout {
            for &i in &g.dfg.block(b).insts {
                if let InstData::Call { func, .. } = g.dfg.inst(i) {
                    if let Some(list) = sites.get_mut(func) {
                        list.push((id, i));
                    }
                }
            }
        }
    }
    sites
}
