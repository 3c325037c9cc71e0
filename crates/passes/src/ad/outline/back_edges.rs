//! `outline`'s arrays carried around a checkpointed loop: freed before
//! each back edge and made again as `null`, so that a segment neither
//! takes nor returns arrays of its own (`free_at_back_edges`).

use crate::cfg::incoming_edges;
use adc_ir::{Block, BlockCall, Function, Inst, InstData, Type, Value};
use std::collections::{BTreeMap, BTreeSet};

/// Makes every array argument of a back edge into `header` `null`, freeing
/// the array before the jump, and the header's array parameters one `null`
/// made at the top of the function. False (nothing changed) when a back
/// edge that passes a non-`null` array is not a plain `jump`, or an array
/// enters the loop that is not `null`.
pub(super) fn free_at_back_edges(
    func: &mut Function,
    header: Block,
    body: &BTreeSet<Block>,
) -> bool {
    let arrays: Vec<usize> = func
        .dfg
        .block_params(header)
        .iter()
        .enumerate()
        .filter(|(_, p)| matches!(func.dfg.value_type(**p), Type::Array(_)))
        .map(|(k, _)| k)
        .collect();
    if arrays.is_empty() {
        return true;
    }
    let is_null =
        |f: &Function, v: Value| matches!(crate::defs::def_data(f, v), Some(InstData::ArrayNull));
    let outside_null =
        func.layout.iter().all(|&b| {
            body.contains(&b)
                || func.terminator(b).is_none_or(|t| {
                    func.dfg.inst(t).successors().iter().all(|c| {
                        c.block != header || arrays.iter().all(|&k| is_null(func, c.args[k]))
                    })
                })
        });
    if !outside_null {
        return false;
    }
    let mut latches = Vec::new();
    for &b in body {
        let Some(t) = func.terminator(b) else {
            continue;
        };
        let data = func.dfg.inst(t);
        let carries = data
            .successors()
            .iter()
            .any(|c| c.block == header && arrays.iter().any(|&k| !is_null(func, c.args[k])));
        if !carries {
            continue;
        }
        if !matches!(data, InstData::Jump { .. }) {
            return false;
        }
        latches.push((b, t));
    }
    for (b, t) in latches {
        let span = func.span(t);
        let InstData::Jump { dest } = func.dfg.inst(t).clone() else {
            unreachable!("only jumps were kept")
        };
        let mut args = dest.args.clone();
        func.dfg.block_mut(b).insts.pop();
        for &k in &arrays {
            let a = args[k];
            if is_null(func, a) {
                continue;
            }
            func.append_inst(b, InstData::ArrayFree { array: a }, &[], span);
            let ty = func.dfg.value_type(a);
            let null = func.append_inst(b, InstData::ArrayNull, &[ty], span);
            args[k] = func.dfg.inst_results(null)[0];
        }
        func.dfg.block_mut(b).insts.push(t);
        *func.dfg.inst_mut(t) = InstData::Jump {
            dest: BlockCall {
                block: dest.block,
                args,
            },
        };
    }
    let (map, outer) = params_to_nulls(func, header, body, &arrays);
    drop_frees_of_nulls(func, body, &map, &outer);
    remove_array_params(func, header, &arrays);
    true
}

/// The header's array parameters (`arrays`) replaced: inside the loop by a
/// `null` made at the top of the header, outside it by one made at the top
/// of the function. Returns the first replacement (parameter -> its `null`
/// in the loop) and the function's `null`s with their types.
fn params_to_nulls(
    func: &mut Function,
    header: Block,
    body: &BTreeSet<Block>,
    arrays: &[usize],
) -> (BTreeMap<Value, Value>, Vec<(Type, Value)>) {
    // Inside the loop a parameter becomes a `null` made at the top of the
    // header (a value of the segment, not a capture its callers would copy
    // for a `free` of it); edges leaving the loop pass a `null` made at the
    // top of the function instead (a segment returns no arrays).
    let params: Vec<Value> = arrays
        .iter()
        .map(|&k| func.dfg.block_params(header)[k])
        .collect();
    let mut map = BTreeMap::new();
    let mut outer: Vec<(Type, Value)> = Vec::new();
    let entry = func.layout[0];
    for &p in params.iter().rev() {
        let ty = func.dfg.value_type(p);
        let null = func.dfg.make_inst(InstData::ArrayNull, &[ty]);
        func.dfg.block_mut(header).insts.insert(0, null);
        map.insert(p, func.dfg.inst_results(null)[0]);
        let out = func.dfg.make_inst(InstData::ArrayNull, &[ty]);
        func.dfg.block_mut(entry).insts.insert(0, out);
        outer.push((ty, func.dfg.inst_results(out)[0]));
    }
    // Outside the loop (the header dominates its exits, so a parameter may
    // be used there directly) the function's own `null` stands for it.
    let outer_map: BTreeMap<Value, Value> = map
        .keys()
        .map(|&p| {
            let ty = func.dfg.value_type(p);
            let v = outer
                .iter()
                .find(|(t, _)| *t == ty)
                .map(|(_, v)| *v)
                .unwrap_or(p);
            (p, v)
        })
        .collect();
    for b in func.layout.clone() {
        let m = if body.contains(&b) { &map } else { &outer_map };
        for i in func.dfg.block(b).insts.clone() {
            func.dfg
                .inst_mut(i)
                .map_args(|v| m.get(&v).copied().unwrap_or(v));
        }
    }
    (map, outer)
}

/// Drops the loop's `free`s of those `null`s (and of the block parameters
/// only they reach); the loop's exits pass the function's `null` instead.
fn drop_frees_of_nulls(
    func: &mut Function,
    body: &BTreeSet<Block>,
    map: &BTreeMap<Value, Value>,
    outer: &[(Type, Value)],
) {
    // Freeing `null` does nothing; left in the loop, such a `free` would make
    // the segment look as if it wrote the array (a capture it would then be
    // given a copy of, freed twice).
    let mut nulls: BTreeSet<Value> = map.values().copied().collect();
    // So are the block parameters only those reach (a `continue` before the
    // declaration passes the previous array on to where it is freed).
    let edges = incoming_edges(func);
    loop {
        let before = nulls.len();
        for &b in body {
            for (k, &q) in func.dfg.block_params(b).iter().enumerate() {
                let from = edges.get(&b).map_or(&[][..], |e| &e[..]);
                if !from.is_empty() && from.iter().all(|e| nulls.contains(&e.args[k])) {
                    nulls.insert(q);
                }
            }
        }
        if nulls.len() == before {
            break;
        }
    }
    for &b in body {
        let Some(t) = func.terminator(b) else {
            continue;
        };
        let mut data = func.dfg.inst(t).clone();
        for c in data.successors_mut() {
            if body.contains(&c.block) {
                continue;
            }
            for a in c.args.iter_mut() {
                if nulls.contains(a) {
                    let ty = func.dfg.value_type(*a);
                    *a = outer
                        .iter()
                        .find(|(t, _)| *t == ty)
                        .map(|(_, v)| *v)
                        .unwrap_or(*a);
                }
            }
        }
        *func.dfg.inst_mut(t) = data;
    }
    for &b in body {
        let dfg = &func.dfg;
        let keep: Vec<Inst> = dfg
            .block(b)
            .insts
            .iter()
            .copied()
            .filter(
                |i| !matches!(dfg.inst(*i), InstData::ArrayFree { array } if nulls.contains(array)),
            )
            .collect();
        func.dfg.block_mut(b).insts = keep;
    }
}

/// The header's array parameters removed, with their arguments on every
/// edge into it.
fn remove_array_params(func: &mut Function, header: Block, arrays: &[usize]) {
    let mut remove = vec![false; func.dfg.block_params(header).len()];
    for &k in arrays {
        remove[k] = true;
    }
    func.dfg.remove_block_params_where(header, &remove);
    for b in func.layout.clone() {
        let Some(t) = func.terminator(b) else {
            continue;
        };
        for c in func.dfg.inst_mut(t).successors_mut() {
            if c.block == header {
                let mut k = 0;
                c.args.retain(|_| {
                    k += 1;
                    !remove[k - 1]
                });
            }
        }
    }
}
