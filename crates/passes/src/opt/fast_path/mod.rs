//! `fast-path`: partial inlining of a callee's early return. When a
//! function that stays a call begins with a few loads and pure
//! instructions and a branch to a block that only computes and returns
//! (`if (m == 1) return a[r[n] * n + c[n]];`), each call of it computes
//! that test in the caller and, when it holds, the returned value too; the
//! call is made only on the other edge. det's expansion by minors calls
//! itself ell! times for minors of size 1, each a frame, a stack check,
//! nine arguments and a load: those calls go.
//!
//! Pattern: a call of a function (not an import, a derivative, a function
//! with a custom derivative, a generated function or one using a tape)
//! whose entry block holds at most `MAX_ENTRY` instructions before its
//! branch, each pure or a load, and one of whose branch targets holds at
//! most `MAX_ARM` such instructions and returns. The caller runs copies of
//! the entry's instructions, then that arm's copy or the call; the
//! callee runs its entry again on the slow edge (pure, and its loads read
//! what the copies read: nothing is stored in between).
//!
//! Split mode's halves get the same through their continuations
//! (`halves`): `add_conts` adds them before the callers are rewritten,
//! `drop_dead_params` drops what a continuation only passes to itself.
//!
//! Only the `opt` stage runs it, after derivatives were made. Assumes:
//! verified input. Guarantees: verified output with the same behaviour
//! (a failing check in a copy fails with the callee's message, as the
//! call would have).

use crate::defs::result_types;
use crate::predicates::has_tape_insts;
use crate::rewrite::split_at_call;
use adc_ir::{Block, BlockCall, FuncId, Function, Inst, InstData, Module, Value};
use std::collections::{BTreeMap, BTreeSet};

mod halves;

/// Instructions before the entry's branch.
const MAX_ENTRY: usize = 8;
/// Instructions of the returning arm before its `return`.
const MAX_ARM: usize = 8;
/// Calls rewritten per function.
const MAX_SITES: usize = 16;

/// What a callee's fast path is: its entry block, the arm that returns,
/// and whether that arm is the branch's then edge.
struct FastPath {
    entry: Block,
    arm: Block,
    then_edge: bool,
}

/// A callee's fast path: an ordinary function's, or a split-mode half's
/// with its continuation.
enum Path {
    Plain(FastPath),
    Half(halves::HalfPath, FuncId),
}

fn path_of(module: &Module, id: FuncId) -> Option<Path> {
    let callee = module.func(id);
    if let Some(p) = fast_path(callee) {
        return Some(Path::Plain(p));
    }
    let half = halves::half_path(callee)?;
    let cont = module.find(&halves::cont_name(&callee.name))?;
    Some(Path::Half(half, cont))
}

pub fn run(func: &mut Function, module: &Module) -> bool {
    let mut paths: BTreeMap<FuncId, Option<Path>> = BTreeMap::new();
    let mut done = 0;
    let mut changed = false;
    // Calls present on entry only: the slow edges' calls are new ones.
    let sites: Vec<Inst> = func
        .layout
        .iter()
        .flat_map(|b| func.dfg.block(*b).insts.iter().copied())
        .filter(|i| matches!(func.dfg.inst(*i), InstData::Call { .. }))
        .collect();
    for call in sites {
        let InstData::Call { func: id, .. } = func.dfg.inst(call) else {
            continue;
        };
        let id = *id;
        let path = paths.entry(id).or_insert_with(|| path_of(module, id));
        let Some(path) = path else { continue };
        if done == MAX_SITES {
            break;
        }
        let block = func
            .layout
            .iter()
            .copied()
            .find(|b| func.dfg.block(*b).insts.contains(&call))
            .expect("invariant: the calls found above are still in the layout");
        let rewritten = match path {
            Path::Plain(path) => {
                rewrite(func, module.func(id), path, block, call);
                true
            }
            Path::Half(path, cont) => {
                halves::rewrite(func, module.func(id), path, *cont, block, call)
            }
        };
        if rewritten {
            done += 1;
            changed = true;
        }
    }
    changed
}

/// Adds the continuation of every split-mode half with a fast path that
/// some function calls (`halves`); returns them.
pub fn add_conts(module: &mut Module) -> Vec<FuncId> {
    let mut called = BTreeSet::new();
    for f in &module.funcs {
        for b in &f.layout {
            for i in &f.dfg.block(*b).insts {
                if let InstData::Call { func, .. } = f.dfg.inst(*i) {
                    called.insert(*func);
                }
            }
        }
    }
    let mut added = Vec::new();
    for id in called {
        let g = module.func(id);
        if module.find(&halves::cont_name(&g.name)).is_some() {
            continue;
        }
        if let Some(path) = halves::half_path(g) {
            let cont = halves::cont(g, &path);
            added.push(module.push(cont));
        }
    }
    added
}

pub use halves::drop_dead_params;

fn plain(f: &Function, i: Inst) -> bool {
    let data = f.dfg.inst(i);
    data.is_pure() || matches!(data, InstData::Load { .. })
}

fn fast_path(callee: &Function) -> Option<FastPath> {
    if callee.is_import()
        || callee.layout.is_empty()
        || callee.deriv.is_some()
        || callee.custom_forward.is_some()
        || callee.custom_reverse.is_some()
        || callee.name.starts_with("__adc_")
        || has_tape_insts(callee)
    {
        return None;
    }
    let entry = callee.layout[0];
    let (_, body) = callee.dfg.block(entry).insts.split_last()?;
    if body.len() > MAX_ENTRY || !body.iter().all(|i| plain(callee, *i)) {
        return None;
    }
    let (_, then_dest, else_dest) = crate::cfg::branch_at(callee, entry)?;
    [(then_dest, true), (else_dest, false)]
        .into_iter()
        .find_map(|(dest, then_edge)| {
            let arm = dest.block;
            let (last, insts) = callee.dfg.block(arm).insts.split_last()?;
            let returns = matches!(callee.dfg.inst(*last), InstData::Return { .. });
            (arm != entry
                && returns
                && insts.len() <= MAX_ARM
                && insts.iter().all(|i| plain(callee, *i)))
            .then_some(FastPath {
                entry,
                arm,
                then_edge,
            })
        })
}

/// Copies `callee`'s instructions of `from` but its terminator into `to`,
/// through `map`; returns the terminator, its arguments mapped.
fn copy_body(
    func: &mut Function,
    callee: &Function,
    from: Block,
    to: Block,
    map: &mut BTreeMap<Value, Value>,
) -> InstData {
    let (term, body) = callee
        .dfg
        .block(from)
        .insts
        .split_last()
        .expect("invariant: verified blocks end in a terminator");
    for &ci in body {
        copy_from(func, callee, ci, to, map, callee.tag(ci));
    }
    let mut data = callee.dfg.inst(*term).clone();
    data.map_args(|v| map[&v]);
    data
}

/// Appends a copy of `callee`'s `ci` to `to`, its arguments through `map`,
/// tagged `tag`; `map` takes `ci`'s results to the copy's.
fn copy_from(
    func: &mut Function,
    callee: &Function,
    ci: Inst,
    to: Block,
    map: &mut BTreeMap<Value, Value>,
    tag: adc_ir::Tag,
) -> Inst {
    let mut data = callee.dfg.inst(ci).clone();
    data.map_args(|v| map[&v]);
    let types = result_types(callee, ci);
    let ni = func.append_inst(to, data, &types, callee.span(ci));
    func.set_tag(ni, tag);
    map.extend(
        callee
            .dfg
            .inst_results(ci)
            .iter()
            .copied()
            .zip(func.dfg.inst_results(ni).to_vec()),
    );
    ni
}

fn rewrite(func: &mut Function, callee: &Function, path: &FastPath, b: Block, call: Inst) {
    let InstData::Call { args, .. } = func.dfg.inst(call).clone() else {
        unreachable!("invariant: `run` passes a call");
    };
    let span = func.span(call);
    let tag = func.tag(call);
    // The rest of `b` moves to `cont`, whose parameters are the results;
    // the call itself moves to `slow`.
    let (cont, results, cont_params) = split_at_call(func, b, call);
    let (fast, slow) = (func.dfg.make_block(), func.dfg.make_block());
    func.dfg.block_mut(slow).insts.push(call);
    append_jump(func, slow, cont, results.clone(), (span, tag));
    // The entry's copy ends in the test.
    let mut map: BTreeMap<Value, Value> = callee
        .dfg
        .block_params(path.entry)
        .iter()
        .copied()
        .zip(args)
        .collect();
    let InstData::Branch {
        cond,
        then_dest,
        else_dest,
    } = copy_body(func, callee, path.entry, b, &mut map)
    else {
        unreachable!("invariant: `fast_path` saw a branch");
    };
    let arm_args = if path.then_edge {
        then_dest.args
    } else {
        else_dest.args
    };
    let to_fast = BlockCall {
        block: fast,
        args: arm_args,
    };
    branch_to_paths(func, b, cond, path.then_edge, to_fast, slow, (span, tag));
    // The arm's copy returns into `cont`.
    for &p in callee.dfg.block_params(path.arm) {
        let ty = callee.dfg.value_type(p);
        map.insert(p, func.dfg.append_block_param(fast, ty));
    }
    let InstData::Return { args: returned } = copy_body(func, callee, path.arm, fast, &mut map)
    else {
        unreachable!("invariant: `fast_path` saw a return");
    };
    append_jump(func, fast, cont, returned, (span, tag));
    splice_paths(func, b, [fast, slow, cont], &results, cont_params);
}

/// Appends to `from` a jump to `to` with `args`, at the rewritten call's
/// span and tag.
fn append_jump(
    func: &mut Function,
    from: Block,
    to: Block,
    args: Vec<Value>,
    (span, tag): (adc_ir::Span, adc_ir::Tag),
) {
    let jump = InstData::Jump {
        dest: BlockCall { block: to, args },
    };
    let i = func.append_inst(from, jump, &[], span);
    func.set_tag(i, tag);
}

/// Ends `b` in the copied test `cond`: to `fast` on the arm's edge (the
/// then edge when `then_edge`), else to `slow`.
fn branch_to_paths(
    func: &mut Function,
    b: Block,
    cond: Value,
    then_edge: bool,
    fast: BlockCall,
    slow: Block,
    (span, tag): (adc_ir::Span, adc_ir::Tag),
) {
    let slow = BlockCall {
        block: slow,
        args: vec![],
    };
    let (then_dest, else_dest) = if then_edge {
        (fast, slow)
    } else {
        (slow, fast)
    };
    let branch = InstData::Branch {
        cond,
        then_dest,
        else_dest,
    };
    let test = func.append_inst(b, branch, &[], span);
    func.set_tag(test, tag);
}

/// Puts `fast`, `slow` and `rest` after `b` in the layout; uses of the
/// call's `results` then take `rest`'s parameters, but in `slow`, whose
/// call keeps its own results and passes them to `rest`.
fn splice_paths(
    func: &mut Function,
    b: Block,
    [fast, slow, rest]: [Block; 3],
    results: &[Value],
    rest_params: Vec<Value>,
) {
    let pos = func
        .layout
        .iter()
        .position(|&x| x == b)
        .expect("invariant: b is in the layout");
    func.layout.splice(pos + 1..pos + 1, [fast, slow, rest]);
    let map: BTreeMap<Value, Value> = results.iter().copied().zip(rest_params).collect();
    for &blk in &func.layout.clone() {
        if blk == slow {
            continue;
        }
        for i in func.dfg.block(blk).insts.clone() {
            func.dfg
                .inst_mut(i)
                .map_args(|v| *map.get(&v).unwrap_or(&v));
        }
    }
}
