//! `outline`'s private arrays: a segment function gets an array of its own
//! (`new` at its entry, freed where it returns) for a local array of the
//! caller that the loop uses as scratch and nothing reads after the loop,
//! such as a Runge-Kutta step's stage arrays. The caller's array is then
//! only a length to the segment (an `in` parameter used by `len`), which
//! its reverse derivative neither snapshots nor gives an adjoint to, and
//! the segment's derivative treats the array as a local: its shadow starts
//! at zero in every run, so its adjoint is not cleared where the reverse
//! sweep leaves it (`transpose`'s first adjoints), as in a taped loop.
//!
//! Only for segments of at least `MIN_ITERATIONS` iterations (`[checkpoint]`
//! or `[checkpoint(K)]` with `K >= 16`): each run of a segment (and of its
//! derivative, twice) allocates the array, which costs more than the
//! clears it saves over a few iterations of a small loop (GradBench's `ode`
//! at n = 10: `K = 1` 2.1x slower, `K = 4` 1.3x, `K = 16` 1.05x; at n = 100
//! `K = 4` 0.97x, `K = 16` 0.89x; docs/performance.md).
//!
//! Conditions, each conservative: the segment reads no element of the
//! parameter it has not written in the same call (`ad::scratch`); in the
//! caller the array is made by `new`, is never viewed, referenced by
//! element or passed along an edge, is no other capture's array, and past
//! the loop's exits (wherever control goes from there, around enclosing
//! loops too) is only stored to, freed or asked its length.

use crate::ad::scratch::{stores_into, uses_of};
use crate::defs::def_data;
use adc_ir::{Block, BlockCall, Function, Inst, InstData, ParamMode, Span, Type, Value};
use std::collections::{BTreeMap, BTreeSet};

/// The least iterations a segment runs for `privatize`.
pub(super) const MIN_ITERATIONS: u32 = 16;

/// Gives the segment `s` (parameters: `state`, then `captures`) its own
/// array for each capture of `g` that qualifies.
pub(super) fn privatize(
    s: &mut Function,
    g: &Function,
    body: &BTreeSet<Block>,
    exits: &[(Block, usize, BlockCall)],
    nstate: usize,
    captures: &[Value],
    span: Span,
) {
    // A capture that is `len` of another capture: the same length.
    let mut lens = BTreeMap::new();
    for (k, &c) in captures.iter().enumerate() {
        if let Some(InstData::ArrayLen { array }) = def_data(g, c) {
            if let Some(m) = captures.iter().position(|x| x == array) {
                lens.insert(nstate + k, nstate + m);
            }
        }
    }
    let scratch = crate::ad::scratch::scratch_params(s, &lens);
    let after = after_loop(g, body, exits);
    for (k, &c) in captures.iter().enumerate() {
        let p = nstate + k;
        if scratch[p] && s.params[p].mode != ParamMode::In && dead_after(g, c, captures, &after) {
            own_array(s, p, span);
        }
    }
}

/// The blocks outside `body` that control reaches from the loop's exits.
fn after_loop(
    g: &Function,
    body: &BTreeSet<Block>,
    exits: &[(Block, usize, BlockCall)],
) -> BTreeSet<Block> {
    let mut seen = BTreeSet::new();
    let mut work: Vec<Block> = exits.iter().map(|(_, _, c)| c.block).collect();
    while let Some(b) = work.pop() {
        if seen.insert(b) {
            work.extend(g.successors(b));
        }
    }
    seen.retain(|b| !body.contains(b));
    seen
}

/// Whether the capture `a` is a local array of `g` that nothing reads
/// after the loop (blocks `after`) and that nothing else names.
fn dead_after(g: &Function, a: Value, captures: &[Value], after: &BTreeSet<Block>) -> bool {
    if !matches!(def_data(g, a), Some(InstData::ArrayNew { .. })) {
        return false;
    }
    if captures.iter().filter(|c| g.array_root(**c) == a).count() != 1 {
        return false;
    }
    uses_of(g, a).into_iter().all(|(b, _, data)| match data {
        InstData::ArrayView { .. } | InstData::ElemRef { .. } => false,
        InstData::Jump { .. } | InstData::Branch { .. } => false,
        _ if !after.contains(&b) => true,
        InstData::ArrayFree { .. }
        | InstData::DeferFree { .. }
        | InstData::ArrayLen { .. }
        | InstData::LenCheck { .. } => true,
        _ => stores_into(data, a),
    })
}

/// Makes the segment's parameter `p` a length only: a new array of its
/// length at the entry takes its place, freed before every return.
fn own_array(s: &mut Function, p: usize, span: Span) {
    let entry = s.layout[0];
    let param = s.dfg.block_params(entry)[p];
    let ty = s.dfg.value_type(param);
    let len = s
        .dfg
        .make_inst(InstData::ArrayLen { array: param }, &[Type::I64]);
    let n = s.dfg.inst_results(len)[0];
    let new = s.dfg.make_inst(
        InstData::ArrayNew {
            len: n,
            zeroed: true,
        },
        &[ty],
    );
    let own = s.dfg.inst_results(new)[0];
    for i in [len, new] {
        s.set_span(i, span);
    }
    for b in s.layout.clone() {
        for i in s.dfg.block(b).insts.clone() {
            s.dfg
                .inst_mut(i)
                .map_args(|v| if v == param { own } else { v });
        }
    }
    s.dfg.block_mut(entry).insts.splice(0..0, [len, new]);
    for b in s.layout.clone() {
        let Some(t) = s.terminator(b) else { continue };
        if matches!(s.dfg.inst(t), InstData::Return { .. }) {
            let free: Inst = s.dfg.make_inst(InstData::ArrayFree { array: own }, &[]);
            s.set_span(free, span);
            let insts = &mut s.dfg.block_mut(b).insts;
            let at = insts.len() - 1;
            insts.insert(at, free);
        }
    }
    s.params[p].mode = ParamMode::In;
}
