//! `outline`: checkpointed loops (docs/derivatives.md#checkpointing) become calls of
//! segment functions, in the copy of a function that a reverse derivative
//! is generated from.
//!
//! Assumes: a verified function whose loops may carry a `checkpoint.loop K`
//! marker in their header. Guarantees: verified output without markers in
//! this function; each outermost marked loop `L` becomes
//!
//! ```text
//! hc(state..):  status, state'.., exits'.., live'.. = call @__adc_segN_f(state.., captures.., K)
//!               status == 0 ? hc(state'..) : the exit `status - 1` with its arguments
//! ```
//!
//! where `__adc_segN_f` is a new `[checkpoint]` function (never inlined,
//! so reverse-mode callers keep only its inputs, copies of the arrays it
//! may write among them, and run it again in the reverse sweep) holding
//! `L`'s blocks: it runs at most `K` iterations (header entries) from the
//! state it is given, then returns status 0 and the state of the next
//! header entry; when the loop leaves earlier, status `1 + e` for exit edge
//! `e`, that edge's arguments, and the loop's values used after it (zero
//! where they are not defined on that exit's path). So the derivative's tape
//! holds one segment's inputs per `K` iterations, and the segment's own
//! derivative tapes at most `K` iterations at a time. `checkpoint.loop auto`
//! (`[checkpoint]`) runs segments of 256, 256·32, 256·32², ... iterations,
//! each through the recursive driver (`outline/recursive.rs`: recursive
//! checkpointing), so that the tape grows with the logarithm of the trip
//! count. With segments of at least `private::MIN_ITERATIONS`, a local
//! array that the loop uses as scratch (it writes every element before
//! reading it) and nothing reads after the loop becomes the segment's own
//! (`outline/private.rs`): the derivative neither snapshots it nor keeps
//! its adjoint between segments.
//!
//! Returns leave the loop first (a `return` block's trailing `free`s and the
//! `return` move to a block of their own after the loop). A loop where a
//! local array declared in its body is still alive where the loop is left
//! (the segment would free it again when the reverse sweep runs it again)
//! stays a plain loop, unmarked: same derivative, unbounded tape.

use crate::ad::AdError;
use crate::cfg::incoming_edges;
use adc_ir::dom::DomTree;
use adc_ir::{
    Block, BlockCall, Constant, Function, Inst, InstData, Linkage, Module, Param, ParamMode, Span,
    Type, Value,
};
use std::collections::BTreeSet;

/// Outlines every marked loop of `func` (outermost first; markers nested in
/// an outlined loop go with it into the segment function, whose own
/// derivative outlines them in turn).
pub fn run(module: &mut Module, func: &mut Function) -> Result<(), AdError> {
    while let Some((header, marker)) = first_marker(func) {
        let every = match func.dfg.inst(marker) {
            InstData::LoopCheckpoint { every } => *every,
            _ => unreachable!("first_marker finds markers"),
        };
        let span = func.span(marker);
        func.dfg.block_mut(header).insts.retain(|i| *i != marker);
        // A loop whose segments could not hand on or give back its local
        // arrays stays a plain loop, exactly as it was (the steps below
        // rewrite its returns and back edges for the segments): its
        // derivative is the same, only its tape is not bounded
        // (docs/derivatives.md).
        let unmarked = func.clone();
        let Some(body) = natural_loop(func, header) else {
            continue;
        };
        move_returns_out(func, &body);
        let body = natural_loop(func, header).expect("invariant: moving returns keeps the loop");
        if !free_at_back_edges(func, header, &body) {
            *func = unmarked;
            continue;
        }
        let body = natural_loop(func, header).expect("invariant: back edges are kept");
        if !outline_loop(module, func, header, &body, every, span)? {
            *func = unmarked;
        }
    }
    Ok(())
}

fn first_marker(func: &Function) -> Option<(Block, Inst)> {
    func.layout.iter().find_map(|&b| {
        func.dfg
            .block(b)
            .insts
            .iter()
            .find(|i| matches!(func.dfg.inst(**i), InstData::LoopCheckpoint { .. }))
            .map(|&i| (b, i))
    })
}

/// The blocks of the natural loop with `header` (none without a back edge).
fn natural_loop(func: &Function, header: Block) -> Option<BTreeSet<Block>> {
    let dom = DomTree::new(func);
    let edges = incoming_edges(func);
    let latches: Vec<Block> = edges
        .get(&header)?
        .iter()
        .map(|e| e.from)
        .filter(|&p| dom.dominates(header, p))
        .collect();
    if latches.is_empty() {
        return None;
    }
    let mut body: BTreeSet<Block> = [header].into_iter().collect();
    let mut work = latches;
    while let Some(b) = work.pop() {
        if body.insert(b) {
            work.extend(edges.get(&b).into_iter().flatten().map(|e| e.from));
        }
    }
    Some(body)
}

/// A loop block that returns keeps what comes before its trailing `free`s;
/// the `free`s and the `return` move to a new block after the loop.
fn move_returns_out(func: &mut Function, body: &BTreeSet<Block>) {
    for &b in body {
        let insts = func.dfg.block(b).insts.clone();
        let Some(&last) = insts.last() else { continue };
        if !matches!(func.dfg.inst(last), InstData::Return { .. }) {
            continue;
        }
        let mut cut = insts.len() - 1;
        while cut > 0 && matches!(func.dfg.inst(insts[cut - 1]), InstData::ArrayFree { .. }) {
            cut -= 1;
        }
        let tail = func.dfg.make_block();
        func.dfg.block_mut(tail).insts = insts[cut..].to_vec();
        func.dfg.block_mut(b).insts.truncate(cut);
        let span = func.span(last);
        let jump = InstData::Jump {
            dest: BlockCall {
                block: tail,
                args: vec![],
            },
        };
        func.append_inst(b, jump, &[], span);
        func.layout.push(tail);
    }
}

/// A zero of `ty`, for results that an exit does not define.
fn zero_of(s: &mut Function, b: Block, ty: Type, span: Span) -> Result<Value, AdError> {
    let data = match ty {
        Type::Scalar(e) => InstData::Const {
            value: Constant::zero(e),
        },
        Type::Array(_) => InstData::ArrayNull,
        _ => {
            return Err(AdError::new(
                "a `[checkpoint]` loop cannot pass a reference out of a segment",
                span,
            ))
        }
    };
    let i = s.append_inst(b, data, &[ty], span);
    Ok(s.dfg.inst_results(i)[0])
}

fn outline_loop(
    module: &mut Module,
    g: &mut Function,
    header: Block,
    body: &BTreeSet<Block>,
    every: u32,
    span: Span,
) -> Result<bool, AdError> {
    let dom = DomTree::new(g);
    let order: Vec<Block> = g
        .layout
        .iter()
        .copied()
        .filter(|b| body.contains(b))
        .collect();
    let (defined, captures, live) = loop_values(g, body, &order);
    let (captures, remade) = captures::remade_captures(g, captures);
    // A local array declared in the loop that is still alive where it is
    // left (a `break` or `return` after its declaration), or an element
    // reference made in it and used after it, cannot leave a segment that
    // the reverse sweep runs again: such a loop stays a plain loop (false;
    // nothing of `g` changed yet).
    if live
        .iter()
        .any(|v| matches!(g.dfg.value_type(*v), Type::Array(_) | Type::Ref(_)))
    {
        return Ok(false);
    }
    let state: Vec<Value> = g.dfg.block_params(header).to_vec();
    // Exit edges, in layout and successor order.
    let mut exits: Vec<(Block, usize, BlockCall)> = Vec::new();
    for &b in &order {
        let t = g
            .terminator(b)
            .expect("invariant: verified blocks end in a terminator");
        for (k, call) in g.dfg.inst(t).successors().into_iter().enumerate() {
            if !body.contains(&call.block) {
                exits.push((b, k, call.clone()));
            }
        }
    }
    // The same for a local array the loop hands to its exit (a `break`
    // right after the declaration passes it to the code after the loop,
    // which frees it): a segment cannot return it, whose derivative would
    // return its shadow as an adjoint (an internal error in `transpose`,
    // a panic in codegen).
    let escapes = exits.iter().any(|(_, _, call)| {
        call.args.iter().any(|a| {
            defined.contains(a) && matches!(g.dfg.value_type(*a), Type::Array(_) | Type::Ref(_))
        })
    });
    if escapes {
        return Ok(false);
    }
    let written = written_arrays(module, g, &order);
    let (params, returns, exit_ret, live_slot) =
        segment_signature(g, &state, &captures, &written, &exits, &defined, &live);
    let name = fresh_name(module, &g.name);
    let mut s = Function::new(name.clone(), params, returns.clone(), Linkage::Export);
    s.checkpoint = true;
    let seg = SegmentBuilder {
        g,
        body,
        header,
        dom: &dom,
        span,
    };
    seg.build(
        &mut s, &state, &captures, &remade, &exits, &exit_ret, &live, live_slot,
    )?;
    if every == 0 || every >= private::MIN_ITERATIONS {
        private::privatize(&mut s, g, body, &exits, state.len(), &captures, span);
    }
    let seg_id = module.push(s);
    let every = interval(every, g, header);
    let seg_id = match every {
        Interval::Fixed(_) => seg_id,
        Interval::Growing { .. } => recursive::build_recursive(module, seg_id, state.len(), span),
    };
    rewrite_caller(
        g,
        RewriteSite {
            seg_id,
            header,
            body,
            state: &state,
            captures: &captures,
            exits: &exits,
            exit_ret: &exit_ret,
            live: &live,
            live_slot,
            returns: &returns,
            every,
            span,
        },
    );
    Ok(true)
}

/// The values the loop (`order`, its blocks in layout order) defines; of
/// its operands, those from before it (captures); the values it defines
/// that are used after it (live).
fn loop_values(
    g: &Function,
    body: &BTreeSet<Block>,
    order: &[Block],
) -> (BTreeSet<Value>, Vec<Value>, Vec<Value>) {
    let mut defined: BTreeSet<Value> = BTreeSet::new();
    for &b in order {
        defined.extend(g.dfg.block_params(b).iter().copied());
        for &i in &g.dfg.block(b).insts {
            defined.extend(g.dfg.inst_results(i).iter().copied());
        }
    }
    // Values from before the loop, and the loop's values used after it.
    let mut captures: Vec<Value> = Vec::new();
    let mut live: Vec<Value> = Vec::new();
    for &b in &g.layout {
        for &i in &g.dfg.block(b).insts {
            g.dfg.inst(i).for_each_arg(|a| {
                let inside = body.contains(&b);
                if inside && !defined.contains(&a) && !captures.contains(&a) {
                    captures.push(a);
                }
                if !inside && defined.contains(&a) && !live.contains(&a) {
                    live.push(a);
                }
            });
        }
    }
    (defined, captures, live)
}

/// The segment function's parameters (the header's state, the captures,
/// the iteration count) and returns (status, next state, each exit's
/// arguments the loop defines, the live values); for each exit, where its
/// arguments are among the returns; where the live values start.
#[allow(clippy::type_complexity)]
fn segment_signature(
    g: &Function,
    state: &[Value],
    captures: &[Value],
    written: &BTreeSet<Value>,
    exits: &[(Block, usize, BlockCall)],
    defined: &BTreeSet<Value>,
    live: &[Value],
) -> (Vec<Param>, Vec<Type>, Vec<Vec<Option<usize>>>, usize) {
    let ty = |v: &Value| g.dfg.value_type(*v);
    // The segment function's signature.
    let mut params = Vec::new();
    for (n, v) in state.iter().chain(captures).enumerate() {
        let mode = match ty(v) {
            Type::Array(_) if written.contains(v) => ParamMode::Inout,
            Type::Ref(_) => ParamMode::Inout,
            _ => ParamMode::In,
        };
        params.push(Param {
            name: format!("s{n}"),
            ty: ty(v),
            mode,
        });
    }
    params.push(Param {
        name: "iterations".into(),
        ty: Type::I64,
        mode: ParamMode::In,
    });
    let mut returns = vec![Type::I64];
    returns.extend(state.iter().map(ty));
    // Where each exit argument comes from in the caller: `Some(k)`, the
    // segment's result `k`, for a value the loop defines; `None`, the value
    // itself, for one from before the loop (it dominates the loop, so the
    // caller can pass it on directly; a segment never returns what it was
    // given, so the only arrays it returns are its own, refused above).
    let mut exit_ret: Vec<Vec<Option<usize>>> = Vec::new();
    for (_, _, c) in exits {
        let mut slots = Vec::new();
        for a in &c.args {
            if defined.contains(a) {
                slots.push(Some(returns.len()));
                returns.push(ty(a));
            } else {
                slots.push(None);
            }
        }
        exit_ret.push(slots);
    }
    let live_slot = returns.len();
    returns.extend(live.iter().map(ty));
    (params, returns, exit_ret, live_slot)
}

/// `__adc_segN_NAME` with the first free `N`.
fn fresh_name(module: &Module, of: &str) -> String {
    (0..)
        .map(|n| format!("__adc_seg{n}_{of}"))
        .find(|n| module.find(n).is_none())
        .expect("invariant: some number is free")
}

/// How long the caller's segments are.
fn interval(every: u32, _g: &Function, _header: Block) -> Interval {
    match every {
        0 => Interval::Growing {
            first: recursive::LEAF,
            factor: recursive::PIECES,
        },
        k => Interval::Fixed(i64::from(k)),
    }
}

#[derive(Clone, Copy)]
enum Interval {
    /// `[checkpoint(K)]`: every segment runs `K` iterations.
    Fixed(i64),
    /// `[checkpoint]`: segments of `first`, `first * factor`, ... iterations.
    Growing { first: i64, factor: i64 },
}

/// Arrays among the loop's operands that it writes (stores, element
/// references, writable arguments of calls).
fn written_arrays(module: &Module, g: &Function, order: &[Block]) -> BTreeSet<Value> {
    let mut out = BTreeSet::new();
    for &b in order {
        for &i in &g.dfg.block(b).insts {
            match g.dfg.inst(i) {
                InstData::Store { array, .. }
                | InstData::ElemRef { array, .. }
                | InstData::CopyRange { dst: array, .. } => {
                    out.insert(*array);
                }
                InstData::Call { func, args } => {
                    for (p, a) in module.func(*func).params.iter().zip(args) {
                        if p.mode != ParamMode::In {
                            out.insert(*a);
                        }
                    }
                }
                _ => (),
            }
        }
    }
    // Writing through a view writes the array it views.
    let roots: Vec<Value> = out.iter().map(|&a| g.array_root(a)).collect();
    out.extend(roots);
    // A written block parameter writes what reaches it.
    let mut changed = true;
    while changed {
        changed = false;
        for &b in order {
            let t = g.terminator(b).expect("invariant: verified");
            for call in g.dfg.inst(t).successors() {
                for (p, a) in g.dfg.block_params(call.block).iter().zip(&call.args) {
                    if out.contains(p) && out.insert(*a) {
                        changed = true;
                    }
                }
            }
        }
    }
    out
}

struct SegmentBuilder<'a> {
    g: &'a Function,
    body: &'a BTreeSet<Block>,
    header: Block,
    dom: &'a DomTree,
    span: Span,
}

struct RewriteSite<'a> {
    seg_id: adc_ir::FuncId,
    header: Block,
    body: &'a BTreeSet<Block>,
    state: &'a [Value],
    captures: &'a [Value],
    exits: &'a [(Block, usize, BlockCall)],
    exit_ret: &'a [Vec<Option<usize>>],
    live: &'a [Value],
    live_slot: usize,
    returns: &'a [Type],
    every: Interval,
    span: Span,
}

mod back_edges;
mod captures;
mod private;
mod recursive;
mod segment;
use back_edges::free_at_back_edges;
use segment::rewrite_caller;
