//! `licm`: loop-invariant code motion. A pure instruction in a loop whose
//! operands are all defined outside the loop moves to the loop's preheader,
//! so it runs once per entry instead of once per iteration.
//!
//! Assumes: verified input. A loop is the natural loop of a back edge
//! (`latch -> header`, `header` dominating `latch`); its preheader is the
//! only block outside the loop that branches to the header (with a `jump`,
//! or a `br` whose other target skips the loop, as the guard of a rotated
//! loop does). Only instructions that cannot trap move: pure ones
//! (`InstData::is_pure`, which includes `len`), divisions that cannot trap
//! (`predicates::is_safe_div`: float ones, integer ones by a constant other than
//! 0 and -1), views of constant bounds and loads that `bce`'s facts prove
//! in bounds at the preheader (`bce::Bounds`: counted loops, and the tests
//! of `version`'s guard), the loads only from arrays the loop cannot write
//! (`written_roots`). Since they cannot fail, running them when the loop
//! body would not have is harmless.
//! Guarantees: verified output, same behaviour; inner loops are handled
//! before outer ones, so an invariant of a nest moves as far out as it can.

use crate::cfg::{incoming_edges, Edge};
use crate::defs::def_data;
use crate::loops::loop_bodies;
use crate::opt::bce::{bounds, in_bounds_at, view_in_bounds_at, Bounds};
use crate::predicates::is_safe_div;
use adc_ir::dom::DomTree;
use adc_ir::{Block, Function, Inst, InstData, Type, Value, ValueDef};
use std::collections::{BTreeMap, BTreeSet};

pub fn run(func: &mut Function) -> bool {
    let dom = DomTree::new(func);
    let edges = incoming_edges(func);
    let mut loops = loop_bodies(&dom, &edges);
    loops.sort_by_key(|(_, body)| body.len());
    let facts = bounds(func, &dom, &edges);
    let mut changed = false;
    for (header, body) in loops {
        let outside: Vec<Block> = edges[&header]
            .iter()
            .map(|e| e.from)
            .filter(|b| !body.contains(b))
            .collect();
        let [pre] = outside.as_slice() else { continue };
        // A preheader that only may enter the loop (the guard `rotate`
        // leaves, `br c, header, exit`) runs the hoisted instructions
        // whether or not the loop runs: harmless, they cannot fail.
        let branches_to_header = func.terminator(*pre).is_some_and(|t| {
            func.dfg
                .inst(t)
                .successors()
                .iter()
                .any(|c| c.block == header)
        });
        if !branches_to_header {
            continue;
        }
        let loads = Loads {
            dom: &dom,
            facts: &facts,
            written: written_roots(func, &edges, &body),
        };
        changed |= hoist(func, *pre, &dom.rpo, &body, &loads);
    }
    changed
}

/// What decides whether a load may leave a loop.
struct Loads<'a> {
    dom: &'a DomTree,
    facts: &'a Bounds,
    /// The roots of the arrays the loop may write (`None`: any array).
    written: Option<BTreeSet<Value>>,
}

fn movable(func: &Function, inst: Inst, pre: Block, loads: &Loads) -> bool {
    match func.dfg.inst(inst) {
        InstData::Load { array, index, .. } => {
            let root = func.array_root(*array);
            func.is_distinct_array_object(root)
                && loads.written.as_ref().is_some_and(|w| !w.contains(&root))
                && in_bounds_at(func, loads.dom, loads.facts, pre, *array, *index)
        }
        // A view of constant bounds known to fit cannot fail. Not out of
        // a `[checkpoint]` loop (`written` is `None` there): its reverse
        // sweep restores the arrays the loop writes, and a view made before
        // the loop would still show the ones it replaced (difftest seed
        // 650,002,105: a wrong gradient).
        &InstData::ArrayView { array, lo, hi } => {
            loads.written.is_some()
                && view_in_bounds_at(func, loads.dom, loads.facts, pre, [array, lo, hi])
        }
        _ => func.dfg.inst(inst).is_pure() || is_safe_div(func, inst),
    }
}

/// The roots of the arrays the instructions of `body` may write, free or
/// hand out references into; `None` when they may write one they do not
/// name. A written root that is a block parameter counts as the arrays
/// the edges may pass it (`param_sources`: a local array a loop frees at
/// the start of its next iteration); other written roots that are not
/// objects of their own (`Function::is_distinct_array_object`) make every
/// array count as written.
fn written_roots(
    func: &Function,
    edges: &BTreeMap<Block, Vec<Edge>>,
    body: &BTreeSet<Block>,
) -> Option<BTreeSet<Value>> {
    let mut out = BTreeSet::new();
    for &b in body {
        for &i in &func.dfg.block(b).insts {
            let mut write = |a: Value| out.insert(func.array_root(a));
            match func.dfg.inst(i) {
                InstData::Store { array, .. }
                | InstData::ElemRef { array, .. }
                | InstData::ArrayFree { array }
                | InstData::DeferFree { array }
                | InstData::CopyRange { dst: array, .. } => {
                    write(*array);
                }
                InstData::LoopCheckpoint { .. } => return None,
                InstData::RefStore { ptr, .. } => match def_data(func, *ptr) {
                    Some(InstData::ElemRef { array, .. }) => {
                        write(*array);
                    }
                    // A stack slot of the frame is no array's element.
                    Some(InstData::Slot) => {}
                    // A by-reference parameter never shares storage with
                    // an array parameter (docs/arrays.md#the-aliasing-rule, checked at every
                    // call) nor with arrays made here after the call began.
                    _ if matches!(func.dfg.value_def(*ptr), ValueDef::Param(b, _) if b == func.layout[0]) =>
                        {}
                    _ => return None,
                },
                InstData::Call { args, .. } => {
                    for &a in args {
                        match func.dfg.value_type(a) {
                            Type::Array(_) => {
                                write(a);
                            }
                            Type::Ref(_) => match def_data(func, a) {
                                Some(InstData::ElemRef { array, .. }) => {
                                    write(*array);
                                }
                                _ if matches!(func.dfg.value_def(a), ValueDef::Param(b, _) if b == func.layout[0]) =>
                                    {}
                                _ => return None,
                            },
                            _ => {}
                        }
                    }
                }
                _ => {}
            }
        }
    }
    let mut objects = BTreeSet::new();
    for r in out {
        if func.is_distinct_array_object(r) {
            objects.insert(r);
        } else {
            objects.extend(param_sources(func, edges, r)?);
        }
    }
    Some(objects)
}

/// The arrays the block parameter `param` may hold, through the edges
/// into its block and the block parameters they pass on: `None` unless
/// each is `null` or an object of its own.
fn param_sources(
    func: &Function,
    edges: &BTreeMap<Block, Vec<Edge>>,
    param: Value,
) -> Option<BTreeSet<Value>> {
    let mut seen = BTreeSet::from([param]);
    let mut todo = vec![param];
    let mut sources = BTreeSet::new();
    while let Some(v) = todo.pop() {
        let ValueDef::Param(b, k) = func.dfg.value_def(v) else {
            return None;
        };
        if func.entry_block() == Some(b) {
            return None;
        }
        for e in edges.get(&b)? {
            let arg = func.array_root(e.args[k as usize]);
            match func.dfg.value_def(arg) {
                ValueDef::Param(..) if !func.is_distinct_array_object(arg) => {
                    if seen.insert(arg) {
                        todo.push(arg);
                    }
                }
                _ if matches!(def_data(func, arg), Some(InstData::ArrayNull)) => {}
                _ if func.is_distinct_array_object(arg) => {
                    sources.insert(arg);
                }
                _ => return None,
            }
        }
    }
    Some(sources)
}

fn hoist(
    func: &mut Function,
    pre: Block,
    rpo: &[Block],
    body: &BTreeSet<Block>,
    loads: &Loads,
) -> bool {
    let mut inside: BTreeSet<Value> = BTreeSet::new();
    for &b in body {
        inside.extend(func.dfg.block_params(b).iter().copied());
        for &i in &func.dfg.block(b).insts {
            inside.extend(func.dfg.inst_results(i).iter().copied());
        }
    }
    let mut moved: Vec<Inst> = Vec::new();
    // Reverse post-order: an instruction's operands moved before it.
    for &b in rpo.iter().filter(|b| body.contains(b)) {
        for &i in &func.dfg.block(b).insts {
            if !func.dfg.inst(i).args().iter().any(|a| inside.contains(a))
                && movable(func, i, pre, loads)
            {
                for r in func.dfg.inst_results(i) {
                    inside.remove(r);
                }
                moved.push(i);
            }
        }
    }
    if moved.is_empty() {
        return false;
    }
    for &i in &moved {
        // Proven in bounds at the preheader (`movable`).
        if let InstData::Load { checked, .. } = func.dfg.inst_mut(i) {
            *checked = false;
        }
    }
    let set: BTreeSet<Inst> = moved.iter().copied().collect();
    for &b in body {
        func.dfg.block_mut(b).insts.retain(|i| !set.contains(i));
    }
    let insts = &mut func.dfg.block_mut(pre).insts;
    let at = insts.len() - 1;
    insts.splice(at..at, moved);
    true
}
