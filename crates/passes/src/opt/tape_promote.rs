//! `tape-promote`: tape values of code outside loops become SSA values.
//! When every `tape.push` and `tape.pop` of a function's own tape (tape 0)
//! lies outside every loop (a reverse derivative of straight-line code with
//! `if`s, once `unroll` has made its small loops straight), the pass finds
//! which push each pop undoes by following the tape along every path of
//! the CFG (a loop, which touches no tape, is passed through), with the
//! branches it can decide: on a condition a branch on the path already
//! tested, on an `i64` or `bool` block parameter given a constant on the
//! edge taken, on the pop of a push of a known value, and on comparisons,
//! arithmetic and `select`s of such values (the edge indices `unzip`
//! passes to a join, which its reverse sweep branches on). A push whose
//! every pop undoes it alone on every path becomes a store of its value to
//! a stack slot, and those pops loads; `mem2reg` then passes the value
//! along the joins' block parameters. A function left with no tape
//! instruction allocates, grows and frees no tape.
//!
//! Assumes: verified input. Guarantees: verified output, same behaviour.
//! The paths followed include every path the function can take (a branch
//! is decided only by values that are the same on every run of that path),
//! so a promoted pop runs only after its push ran, in the same call, and
//! blocks outside loops run at most once per call: the slot of a pushed
//! value (one SSA value, one instance per call) holds it from the push on.
//! The pops left on the tape return what they did (a matched push and pop
//! removed from a stack's history change no other pop). Gives up (no
//! change) on a function whose tape is lent, adopted, handed over or read
//! (split mode), on a tape instruction in a loop, on more than `MAX_STATES`
//! tape states at a block, and on a path that pops an empty tape.

use adc_ir::dom::components;
use adc_ir::interp;
use adc_ir::{
    BinaryOp, Block, Constant, Function, Inst, InstData, Span, Tag, Type, UnaryOp, Value, ValueDef,
};
use std::collections::{BTreeMap, BTreeSet};

/// At most this many tape states (pushes on the tape, known values) reach
/// one block; past it the pass gives up.
const MAX_STATES: usize = 64;
/// How deep a branch condition is evaluated through its operands.
const MAX_DEPTH: usize = 8;

/// The tape along one path: the pushes not yet popped, oldest first, and
/// the block parameters and popped values known to hold constants.
#[derive(Clone, PartialEq)]
struct State {
    stack: Vec<Inst>,
    known: BTreeMap<Value, Constant>,
}

pub fn run(func: &mut Function) -> bool {
    let mut any = false;
    for &b in &func.layout {
        for &i in &func.dfg.block(b).insts {
            match func.dfg.inst(i) {
                InstData::TapePush { tape: 0, .. } | InstData::TapePop { tape: 0 } => any = true,
                InstData::TapeRead { .. }
                | InstData::TapeLend
                | InstData::TapeReclaim { .. }
                | InstData::TapeAdopt { .. }
                | InstData::TapeGive { .. } => return false,
                _ => (),
            }
        }
    }
    if !any {
        return false;
    }
    let Some(undoes) = pair_up(func) else {
        return false;
    };
    rewrite(func, &undoes)
}

/// Per pop, the pushes it undoes on some path; `None` when the tape cannot
/// be followed.
fn pair_up(func: &Function) -> Option<BTreeMap<Inst, BTreeSet<Inst>>> {
    let comp = components(func);
    let mut members: BTreeMap<usize, Vec<Block>> = BTreeMap::new();
    for &b in &func.layout {
        members.entry(comp[b.index()]).or_default().push(b);
    }
    let entry = *func.layout.first()?;
    let mut arriving: BTreeMap<Block, Vec<State>> = BTreeMap::new();
    arriving.insert(
        entry,
        vec![State {
            stack: Vec::new(),
            known: BTreeMap::new(),
        }],
    );
    let mut undoes: BTreeMap<Inst, BTreeSet<Inst>> = BTreeMap::new();
    for blocks in members.values() {
        let cyclic = on_cycle(func, &comp, blocks[0]);
        let mut states: Vec<State> = Vec::new();
        for b in blocks {
            for s in arriving.remove(b).into_iter().flatten() {
                if !states.contains(&s) {
                    states.push(s);
                }
            }
        }
        for mut state in states {
            if cyclic {
                // A loop touches no tape: every exit may be taken.
                for &b in blocks {
                    if has_tape(func, b) {
                        return None;
                    }
                    leave(func, b, &state, &comp, &mut arriving, |s| {
                        !blocks.contains(&s)
                    })?;
                }
                continue;
            }
            let b = blocks[0];
            for &i in &func.dfg.block(b).insts {
                match func.dfg.inst(i) {
                    InstData::TapePush { tape: 0, .. } => state.stack.push(i),
                    InstData::TapePop { tape: 0 } => {
                        let push = state.stack.pop()?;
                        undoes.entry(i).or_default().insert(push);
                        // A popped edge index is known where its push was.
                        if let InstData::TapePush { value, .. } = func.dfg.inst(push) {
                            if let Some(c) = eval(func, &state.known, *value, 0) {
                                state.known.insert(func.dfg.inst_results(i)[0], c);
                            }
                        }
                    }
                    _ => (),
                }
            }
            leave(func, b, &state, &comp, &mut arriving, |_| true)?;
        }
    }
    Some(undoes)
}

/// Whether block `b` lies on a cycle: its component has another block, or
/// it jumps to itself.
fn on_cycle(func: &Function, comp: &[usize], b: Block) -> bool {
    let c = comp[b.index()];
    func.layout.iter().any(|&o| o != b && comp[o.index()] == c) || func.successors(b).contains(&b)
}

/// Whether block `b` has a tape-0 push or pop.
fn has_tape(func: &Function, b: Block) -> bool {
    func.dfg.block(b).insts.iter().any(|&i| {
        matches!(
            func.dfg.inst(i),
            InstData::TapePush { tape: 0, .. } | InstData::TapePop { tape: 0 }
        )
    })
}

/// `state` leaves `b` along the edges its terminator may take to blocks
/// `to` accepts; `None` past `MAX_STATES`.
fn leave(
    func: &Function,
    b: Block,
    state: &State,
    comp: &[usize],
    arriving: &mut BTreeMap<Block, Vec<State>>,
    to: impl Fn(Block) -> bool,
) -> Option<()> {
    let Some(t) = func.terminator(b) else {
        return Some(());
    };
    let data = func.dfg.inst(t);
    // Each edge taken, with what it tells of a branch's condition.
    let mut calls: Vec<_> = data.successors().into_iter().map(|c| (c, None)).collect();
    if let InstData::Branch {
        cond,
        then_dest,
        else_dest,
    } = data
    {
        calls = match eval(func, &state.known, *cond, 0) {
            Some(Constant::Bool(true)) => vec![(then_dest, None)],
            Some(Constant::Bool(false)) => vec![(else_dest, None)],
            _ if then_dest.block != else_dest.block => vec![
                (then_dest, Some((*cond, Constant::Bool(true)))),
                (else_dest, Some((*cond, Constant::Bool(false)))),
            ],
            _ => calls,
        };
    }
    for (call, learnt) in calls.into_iter().filter(|c| to(c.0.block)) {
        let mut next = state.clone();
        if let Some((cond, c)) = learnt {
            next.known.insert(cond, c);
        }
        // A loop's parameters change from one iteration to the next.
        let looping = on_cycle(func, comp, call.block);
        for (&p, &a) in func.dfg.block_params(call.block).iter().zip(&call.args) {
            match eval(func, &state.known, a, 0).filter(|_| !looping) {
                Some(c) => next.known.insert(p, c),
                None => next.known.remove(&p),
            };
        }
        let list = arriving.entry(call.block).or_default();
        if !list.contains(&next) {
            list.push(next);
        }
        if list.len() > MAX_STATES {
            return None;
        }
    }
    Some(())
}

/// `v` as a constant `i64` or `bool` on the path `known` describes.
fn eval(
    func: &Function,
    known: &BTreeMap<Value, Constant>,
    v: Value,
    depth: usize,
) -> Option<Constant> {
    if let Some(c) = known.get(&v) {
        return Some(*c);
    }
    let ValueDef::Result(i, 0) = func.dfg.value_def(v) else {
        return None;
    };
    if depth > MAX_DEPTH || !matches!(func.dfg.value_type(v), Type::Scalar(_)) {
        return None;
    }
    let arg = |a: Value| eval(func, known, a, depth + 1);
    let c = match func.dfg.inst(i) {
        InstData::Const { value } => *value,
        InstData::Cmp { cond, args } => {
            let (a, b) = (arg(args[0])?, arg(args[1])?);
            (a.ty() == b.ty()).then(|| Constant::Bool(interp::compare(*cond, a, b)))?
        }
        InstData::Binary { op, args } => {
            let (a, b) = (arg(args[0])?, arg(args[1])?);
            let exact = !matches!(op, BinaryOp::Div | BinaryOp::Rem);
            (exact && a.ty() == b.ty()).then(|| interp::binary(*op, a, b))?
        }
        InstData::Unary {
            op: UnaryOp::Not,
            arg: a,
        } => match arg(*a)? {
            Constant::Bool(x) => Constant::Bool(!x),
            _ => return None,
        },
        InstData::Select { cond, args } => match arg(*cond)? {
            Constant::Bool(true) => arg(args[0])?,
            _ => arg(args[1])?,
        },
        _ => return None,
    };
    matches!(c, Constant::I64(_) | Constant::Bool(_)).then_some(c)
}

/// Promotes the pushes whose every pop undoes them alone: one slot per
/// pushed value.
fn rewrite(func: &mut Function, undoes: &BTreeMap<Inst, BTreeSet<Inst>>) -> bool {
    let mut undone_by: BTreeMap<Inst, Vec<Inst>> = BTreeMap::new();
    for (&pop, pushes) in undoes {
        for &push in pushes {
            undone_by.entry(push).or_default().push(pop);
        }
    }
    let entry = func.layout[0];
    let mut slots: BTreeMap<Value, Value> = BTreeMap::new();
    let mut new_slots: Vec<Inst> = Vec::new();
    for (&push, pops) in &undone_by {
        let InstData::TapePush { value, .. } = *func.dfg.inst(push) else {
            continue;
        };
        let ty = func.dfg.value_type(value);
        let alone = pops.iter().all(|pop| {
            undoes[pop].len() == 1 && func.dfg.value_type(func.dfg.inst_results(*pop)[0]) == ty
        });
        let Type::Scalar(elem) = ty else {
            continue;
        };
        if !alone {
            continue;
        }
        let ptr = *slots.entry(value).or_insert_with(|| {
            let slot = func.dfg.make_inst(InstData::Slot, &[Type::Ref(elem)]);
            new_slots.push(slot);
            func.dfg.inst_results(slot)[0]
        });
        *func.dfg.inst_mut(push) = InstData::RefStore { ptr, value };
        for &pop in pops {
            *func.dfg.inst_mut(pop) = InstData::RefLoad { ptr };
        }
    }
    for (n, &slot) in new_slots.iter().enumerate() {
        func.set_span(slot, Span::UNDEFINED);
        func.set_tag(slot, Tag::Primal);
        func.dfg.block_mut(entry).insts.insert(n, slot);
    }
    !new_slots.is_empty()
}
