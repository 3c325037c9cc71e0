//! Loops: natural loops and loop bodies (`licm`, `unswitch`), stepped loops
//! (`carry`, `promote`, `version`), a header's test of its counter
//! (`counted_header`), and counted loops, as `unzip` and `transpose` use
//! them to replay and reverse a loop without taping its counter or the
//! edge taken at its header.
//!
//! A counted loop has a header `h` with exactly two incoming edges: an
//! entry edge (from a block `h` does not dominate) passing a value `i0` to
//! an `i64` parameter `i`, and a back edge (from a latch `h` dominates)
//! passing `i + c` for a constant `c != 0`, `|c| <= MAX_STEP`. So `i` equals `i0` on the first
//! visit of `h` only (it moves by `c` each iteration; an `i64` cannot wrap
//! within any feasible trip count), and the reverse sweep can tell the
//! first visit and step `i` back. `i0` is an integer constant or any value
//! (defined before the loop, as the entry edge's argument must be): then
//! the reverse sweep needs it, and `unzip` tapes it once per run of the
//! loop, at the exit (`for (j = i + 1; ...)` replays `j` instead of taping
//! it every iteration). Its only exit is `h`'s
//! branch, to a block outside the loop.

use crate::cfg::{branch_test, incoming_edges, Edge};
use crate::defs::int_const;
use adc_ir::dom::DomTree;
use adc_ir::offset::offset_of;
use adc_ir::{Block, BlockCall, CmpCond, Function, Inst, InstData, Type, Value};
use std::collections::{BTreeMap, BTreeSet};

pub(crate) struct CountedLoop {
    pub header: Block,
    /// Index of the counter among the header's parameters.
    pub param: usize,
    pub init: LoopInit,
    /// The block the entry edge comes from.
    pub entry: Block,
    pub step: i64,
    /// The block the back edge comes from.
    pub latch: Block,
    /// The header and every block on a path from it back to the latch.
    pub body: BTreeSet<Block>,
    /// The header's successor outside the loop.
    pub exit: Block,
}

/// What a counted loop's counter enters with.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum LoopInit {
    Const(i64),
    /// A value defined before the loop: the entry edge's argument.
    Value(Value),
}

/// The blocks of the natural loop of the back edge `latch -> header`.
pub(crate) fn natural_loop(
    edges: &BTreeMap<Block, Vec<Edge>>,
    header: Block,
    latch: Block,
) -> BTreeSet<Block> {
    let mut body: BTreeSet<Block> = [header].into();
    let mut stack = vec![latch];
    while let Some(b) = stack.pop() {
        if body.insert(b) {
            stack.extend(edges.get(&b).into_iter().flatten().map(|e| e.from));
        }
    }
    body
}

/// Every loop of `func`: each header (in reverse post-order) with the
/// union of the natural loops of its back edges (edges from blocks it
/// dominates). `licm` and `unswitch` walk these.
pub(crate) fn loop_bodies(
    dom: &DomTree,
    edges: &BTreeMap<Block, Vec<Edge>>,
) -> Vec<(Block, BTreeSet<Block>)> {
    let mut loops: Vec<(Block, BTreeSet<Block>)> = Vec::new();
    for &h in &dom.rpo {
        let mut body = BTreeSet::new();
        for e in edges.get(&h).into_iter().flatten() {
            if dom.dominates(h, e.from) {
                body.extend(natural_loop(edges, h, e.from));
            }
        }
        if !body.is_empty() {
            loops.push((h, body));
        }
    }
    loops
}

/// A loop of the same shape whose counter may enter with any value.
pub(crate) struct SteppedLoop {
    pub header: Block,
    /// Index of the counter among the header's parameters.
    pub param: usize,
    /// What the entry edge passes to the counter.
    pub init: Value,
    pub step: i64,
    /// The block the entry edge comes from.
    pub entry: Block,
    pub latch: Block,
    pub body: BTreeSet<Block>,
    pub exit: Block,
}

/// Every counted loop of `func` whose header is in `among`.
pub(crate) fn counted_loops(func: &Function, among: &BTreeSet<Block>) -> Vec<CountedLoop> {
    loops_where(func, among, |_| true)
        .into_iter()
        .map(|lp| {
            let init = match int_const(func, lp.init) {
                Some(c) => LoopInit::Const(c),
                None => LoopInit::Value(lp.init),
            };
            CountedLoop {
                header: lp.header,
                param: lp.param,
                init,
                entry: lp.entry,
                step: lp.step,
                latch: lp.latch,
                body: lp.body,
                exit: lp.exit,
            }
        })
        .collect()
}

/// A loop header's test of its counter against a bound: `br c, then,
/// else` with `c = cmp lt iv, bound` (`branch_test`), `iv` the counter.
/// The loop passes (`unroll`, `copy-loops`, `version`) check which edge
/// stays in the loop, where the `cmp` is and what the bound is.
pub(crate) struct CountedHeader<'a> {
    pub bound: Value,
    /// The `cmp lt iv, bound`.
    pub cmp: Inst,
    /// The `cmp`'s result, the branch's condition.
    pub test: Value,
    pub then_dest: &'a BlockCall,
    pub else_dest: &'a BlockCall,
}

/// `header`'s closing test when it is `iv < bound` for the counter `iv`.
pub(crate) fn counted_header(
    func: &Function,
    header: Block,
    iv: Value,
) -> Option<CountedHeader<'_>> {
    let t = branch_test(func, header)?;
    let [lhs, bound] = t.args;
    if t.cond != CmpCond::Lt || lhs != iv {
        return None;
    }
    Some(CountedHeader {
        bound,
        cmp: t.cmp,
        test: func.dfg.inst_results(t.cmp)[0],
        then_dest: t.then_dest,
        else_dest: t.else_dest,
    })
}

/// The largest step of a counted loop's counter. With it, a counter that
/// wrapped, or a distance to the bound that overflows when the reverse
/// sweep computes where the counter ended, takes over 2^43 iterations: no
/// run gets there. A larger step (`i += 4e18`) could wrap within a few
/// iterations, where the replayed counter and the trip count computed
/// from the bound (`unroll`, `transpose`) went wrong (an independent
/// tester's finding: a wrong primal, a wrong gradient, a segfault).
pub(crate) const MAX_STEP: u64 = 1 << 20;

/// Every loop of `func` with a header in `among` that would be counted
/// if its counter entered with a constant.
pub(crate) fn stepped_loops(func: &Function, among: &BTreeSet<Block>) -> Vec<SteppedLoop> {
    loops_where(func, among, |_| true)
}

/// The loops whose counter is the first header parameter that steps by a
/// constant and enters with a value `init_ok` accepts.
fn loops_where(
    func: &Function,
    among: &BTreeSet<Block>,
    init_ok: impl Fn(Value) -> bool,
) -> Vec<SteppedLoop> {
    let dom = DomTree::new(func);
    let edges = incoming_edges(func);
    let mut found = Vec::new();
    for &h in func.layout.iter().filter(|b| among.contains(b)) {
        let Some(es) = edges.get(&h) else { continue };
        let [a, b] = es.as_slice() else { continue };
        if !dom.is_reachable(a.from) || !dom.is_reachable(b.from) {
            continue;
        }
        let (entry, back) = match (dom.dominates(h, a.from), dom.dominates(h, b.from)) {
            (false, true) => (a, b),
            (true, false) => (b, a),
            _ => continue,
        };
        let params = func.dfg.block_params(h);
        let counter = (0..params.len()).find_map(|k| {
            let i = params[k];
            let (base, step) = offset_of(func, back.args[k]);
            let counts = func.dfg.value_type(i) == Type::I64
                && base == i
                && step != 0
                && step.unsigned_abs() <= MAX_STEP;
            (counts && init_ok(entry.args[k])).then_some((k, entry.args[k], step))
        });
        let Some((param, init, step)) = counter else {
            continue;
        };
        let body = natural_loop(&edges, h, back.from);
        // The only way out is the header's branch.
        let exits: Vec<(Block, Block)> = body
            .iter()
            .flat_map(|&x| func.successors(x).into_iter().map(move |s| (x, s)))
            .filter(|(_, s)| !body.contains(s))
            .collect();
        let [(from, exit)] = exits.as_slice() else {
            continue;
        };
        let header_branches = matches!(
            func.terminator(h).map(|t| func.dfg.inst(t)),
            Some(InstData::Branch { .. })
        );
        if *from != h || !header_branches {
            continue;
        }
        found.push(SteppedLoop {
            header: h,
            param,
            init,
            step,
            entry: entry.from,
            latch: back.from,
            body,
            exit: *exit,
        });
    }
    found
}
