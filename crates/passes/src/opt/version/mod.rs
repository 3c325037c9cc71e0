//! Loop versioning for bounds checks: a loop whose array accesses are
//! affine in its counter (`a[row + j]`, `b[j * n + col]`) gets a second
//! copy without those checks, entered when a test before the loop shows
//! that every access of every iteration is in bounds.
//!
//! Pattern: a stepped loop (`loops::stepped_loops`) of two blocks, a header
//! `h` holding only `cmp lt i, N` (`N` defined before the loop) and the
//! branch on it, a body `B` that jumps back with `i + 1`, and an exit `x`
//! whose only predecessor is `h`. An access qualifies when it is a checked
//! load or store in `B` of an array defined before the loop at an index
//! `base + c * i` (`base` and `c` defined before the loop, or absent; `c` a
//! constant or a value), or that minus a constant `k` (`y[i - 1]`). An
//! index defined before the loop counts with `c = 0` (`cam[3]`, `cam[k]`),
//! and a view of constant bounds `0 <= lo <= hi` (`hi >= 1`) of an array
//! defined before the loop as an access at `hi - 1`: it cannot fail when
//! that index is in bounds (the copy keeps the view; `licm` takes it out
//! once the test holds).
//!
//! Then a new preheader tests `0 <= i0 < N`, `N - 1 < 2^31` and, per
//! access, `0 <= base < 2^62`, `0 <= c < 2^31` and
//! `base + c * (N - 1) < len`, with no overflow possible within these
//! bounds: the accessed indices then lie in `[base + c*i0, base + c*(N-1)]`.
//! When `base` is itself `b + e * j` for the counter `j` of an enclosing
//! stepped loop whose header tests `j < M` (`j0` its start; `b`, `e`, `M`,
//! `c` and `N` defined before that loop), the access's terms cover every
//! `j` at once: `0 <= j0 < M`, `M - 1 < 2^31`, `0 <= e < 2^31`,
//! `-2^62 <= b < 2^62`, `0 <= b + e*j0`, `b + e*(M-1) < 2^62` and
//! `b + e*(M-1) + c*(N-1) < len`. They are then invariant in the enclosing
//! loop, and `licm` computes them once for all of its iterations (kmeans'
//! `c[j * d + r]`), not once per `j`.
//! It enters a copy of `h` and `B` whose qualifying accesses are unchecked
//! when the test holds, the original loop otherwise. An access at
//! `base + c * i - k` (`0 < k < 2^31`) is tested for its first and last
//! index instead: `-2^62 <= b < 2^62` for `b = base - k` (or `-k`),
//! `0 <= b + c*i0` and `b + c*(N-1) < len`. Values of `h` used
//! after the loop (its parameters, its test) reach `x` as new parameters.
//!
//! Assumes: verified input. Guarantees: verified output; only checks that
//! cannot fail are dropped, and the copy runs the same instructions.

use crate::defs::{checked_access, def_data, int_const};
use crate::loops::{counted_header, stepped_loops, SteppedLoop};
use crate::rewrite::drop_check;
use adc_ir::{BinaryOp, Block, BlockCall, Function, Inst, InstData, Tag, Value, ValueDef};
use std::collections::{BTreeMap, BTreeSet};

mod guard;
use guard::{guard, At};

pub fn run(func: &mut Function) -> bool {
    let mut changed = false;
    let mut done: BTreeSet<Block> = BTreeSet::new();
    for _ in 0..64 {
        let all: BTreeSet<Block> = func.layout.iter().copied().collect();
        let loops = stepped_loops(func, &all);
        let found = loops
            .iter()
            .filter(|lp| !done.contains(&lp.header))
            .find_map(|lp| plan(func, lp, &loops).map(|p| (lp, p)));
        let Some((lp, p)) = found else { break };
        let copy = rewrite(func, lp, &p);
        done.extend([lp.header, copy]);
        changed = true;
    }
    changed
}

#[derive(Clone, Copy)]
enum Coef {
    Const(i64),
    Value(Value),
}

struct Access {
    inst: Inst,
    array: Value,
    base: Option<Value>,
    coef: Coef,
    /// The constant subtracted from `base + coef * i` (0 for none).
    minus: i64,
    /// `base` as `b + e * j` over an enclosing loop's counter range.
    outer: Option<Outer>,
}

/// `base = b + e * j` where the enclosing loop runs `j` over `[j0, bound)`.
struct Outer {
    j0: Value,
    bound: Value,
    b: Option<Value>,
    e: Coef,
}

struct Plan {
    body: Block,
    bound: Value,
    accesses: Vec<Access>,
}

fn outside(func: &Function, lp: &SteppedLoop, v: Value) -> bool {
    match func.dfg.value_def(v) {
        ValueDef::Param(b, _) => !lp.body.contains(&b),
        ValueDef::Result(i, _) => !lp
            .body
            .iter()
            .any(|b| func.dfg.block(*b).insts.contains(&i)),
        ValueDef::Unused => false,
    }
}

/// `c * i` for the counter `i`: `i`, `mul i, c` or `mul c, i`.
fn scaled(func: &Function, lp: &SteppedLoop, v: Value, i: Value) -> Option<Coef> {
    if v == i {
        return Some(Coef::Const(1));
    }
    let Some(InstData::Binary {
        op: BinaryOp::Mul,
        args,
    }) = def_data(func, v)
    else {
        return None;
    };
    let c = match (args[0] == i, args[1] == i) {
        (true, false) => args[1],
        (false, true) => args[0],
        _ => return None,
    };
    if !outside(func, lp, c) {
        return None;
    }
    Some(int_const(func, c).map_or(Coef::Value(c), Coef::Const))
}

/// `base + c * i` (or `c * i` alone; or `base` alone, `c = 0`, for an
/// index defined before the loop).
fn affine(func: &Function, lp: &SteppedLoop, v: Value, i: Value) -> Option<(Option<Value>, Coef)> {
    if let Some(c) = scaled(func, lp, v, i) {
        return Some((None, c));
    }
    if outside(func, lp, v) {
        return Some((Some(v), Coef::Const(0)));
    }
    let Some(InstData::Binary {
        op: BinaryOp::Add,
        args,
    }) = def_data(func, v)
    else {
        return None;
    };
    for (s, b) in [(args[0], args[1]), (args[1], args[0])] {
        if let Some(c) = scaled(func, lp, s, i) {
            if outside(func, lp, b) {
                return Some((Some(b), c));
            }
        }
    }
    None
}

/// `M` when `l`'s header leaves the loop unless `j < M` for its counter
/// `j` stepping up (`M` defined before the loop): every block of the body
/// then runs with `j0 <= j < M`.
fn counter_bound(func: &Function, l: &SteppedLoop) -> Option<Value> {
    let j = func.dfg.block_params(l.header)[l.param];
    let head = counted_header(func, l.header, j)?;
    let stays = head.else_dest.block == l.exit && l.body.contains(&head.then_dest.block);
    (stays && l.step >= 1 && outside(func, l, head.bound)).then_some(head.bound)
}

/// `base` over the innermost enclosing loop of `lp` whose counter it is
/// affine in, when the access's other terms (`c`, the bound `n`) do not
/// change in that loop either.
fn outer_range(
    func: &Function,
    lp: &SteppedLoop,
    loops: &[SteppedLoop],
    base: Value,
    coef: Coef,
    n: Value,
) -> Option<Outer> {
    let mut enclosing: Vec<&SteppedLoop> = loops
        .iter()
        .filter(|l| l.header != lp.header && l.body.is_superset(&lp.body))
        .collect();
    enclosing.sort_by_key(|l| l.body.len());
    enclosing.into_iter().find_map(|l| {
        let bound = counter_bound(func, l)?;
        if !outside(func, l, n) || matches!(coef, Coef::Value(c) if !outside(func, l, c)) {
            return None;
        }
        let j = func.dfg.block_params(l.header)[l.param];
        let (b, e) = affine(func, l, base, j)?;
        // `e = 0`: `base` does not move in that loop either; its plain
        // test is invariant there already, and the terms of `j`'s range
        // would only fail the guard of a loop whose `j` starts below 0.
        if matches!(e, Coef::Const(k) if !(1..1 << 31).contains(&k)) {
            return None;
        }
        Some(Outer {
            j0: l.init,
            bound,
            b,
            e,
        })
    })
}

fn plan(func: &Function, lp: &SteppedLoop, loops: &[SteppedLoop]) -> Option<Plan> {
    let h = lp.header;
    if lp.step != 1 || lp.body.len() != 2 || lp.latch == h {
        return None;
    }
    let i = func.dfg.block_params(h)[lp.param];
    let head = counted_header(func, h, i)?;
    // The header holds the `cmp` and the `br`, nothing else.
    let [cmp, _br] = func.dfg.block(h).insts.as_slice() else {
        return None;
    };
    if *cmp != head.cmp || head.then_dest.block != lp.latch || head.else_dest.block != lp.exit {
        return None;
    }
    if !head.then_dest.args.is_empty()
        || !outside(func, lp, head.bound)
        || predecessors(func, lp.exit) != 1
    {
        return None;
    }
    let body = lp.latch;
    let mut accesses = Vec::new();
    for &inst in &func.dfg.block(body).insts {
        if let Some(access) = view_access(func, lp, inst) {
            accesses.push(access);
            continue;
        }
        let Some((array, index)) = checked_access(func, inst) else {
            continue;
        };
        if !outside(func, lp, array) {
            continue;
        }
        let (index, minus) = match def_data(func, index) {
            Some(InstData::Binary {
                op: BinaryOp::Sub,
                args,
            }) => match int_const(func, args[1]) {
                Some(k) if (1..1 << 31).contains(&k) => (args[0], k),
                _ => (index, 0),
            },
            _ => (index, 0),
        };
        if let Some((base, coef)) = affine(func, lp, index, i) {
            if matches!(coef, Coef::Const(c) if !(0..1 << 31).contains(&c)) {
                continue;
            }
            let outer = base
                .filter(|_| minus == 0)
                .and_then(|b| outer_range(func, lp, loops, b, coef, head.bound));
            accesses.push(Access {
                inst,
                array,
                base,
                coef,
                minus,
                outer,
            });
        }
    }
    (!accesses.is_empty()).then_some(Plan {
        body,
        bound: head.bound,
        accesses,
    })
}

/// `view a, lo, hi` with `a` and `hi` defined before the loop and constant
/// bounds `0 <= lo <= hi`, `hi >= 1`: it cannot fail when `hi - 1` is in bounds,
/// the access `hi - 1` stands for. (The copy keeps the view; the guard's
/// test is what lets `licm` take it out of the loop.)
fn view_access(func: &Function, lp: &SteppedLoop, inst: Inst) -> Option<Access> {
    let &InstData::ArrayView { array, lo, hi } = func.dfg.inst(inst) else {
        return None;
    };
    let (l, h) = (int_const(func, lo)?, int_const(func, hi)?);
    let before = outside(func, lp, array) && outside(func, lp, hi);
    if !(0 <= l && l <= h && (1..1 << 31).contains(&h)) || !before {
        return None;
    }
    Some(Access {
        inst,
        array,
        base: Some(hi),
        coef: Coef::Const(0),
        minus: 1,
        outer: None,
    })
}

fn predecessors(func: &Function, b: Block) -> usize {
    func.layout
        .iter()
        .filter_map(|&p| func.terminator(p))
        .map(|t| {
            func.dfg
                .inst(t)
                .successors()
                .iter()
                .filter(|c| c.block == b)
                .count()
        })
        .sum()
}

/// Copies `b`'s instructions into `to` through `map` (which it extends).
fn copy_block(
    func: &mut Function,
    b: Block,
    to: Block,
    map: &mut BTreeMap<Value, Value>,
) -> Vec<(Inst, Inst)> {
    let mut pairs = Vec::new();
    for i in func.dfg.block(b).insts.clone() {
        let new = crate::rewrite::copy_inst(func, i, to, map);
        pairs.push((i, new));
    }
    pairs
}

/// Rewrites the loop; returns the copy's header.
fn rewrite(func: &mut Function, lp: &SteppedLoop, p: &Plan) -> Block {
    let h = lp.header;
    let span = func.span(func.dfg.block(h).insts[0]);
    let (h2, b2, pre) = (
        func.dfg.make_block(),
        func.dfg.make_block(),
        func.dfg.make_block(),
    );
    // The copy: header parameters first, so the body's copy can use them.
    let mut map: BTreeMap<Value, Value> = BTreeMap::new();
    for &param in &func.dfg.block_params(h).to_vec() {
        let ty = func.dfg.value_type(param);
        map.insert(param, func.dfg.append_block_param(h2, ty));
    }
    copy_block(func, h, h2, &mut map);
    let copied = copy_block(func, p.body, b2, &mut map);
    let checked: BTreeSet<Inst> = p.accesses.iter().map(|a| a.inst).collect();
    for (old, new) in copied {
        if checked.contains(&old) {
            drop_check(func, new);
        }
    }
    // Branch targets of the copies: the copied header enters the copied body.
    retarget(func, h2, p.body, b2);
    retarget(func, b2, h, h2);
    // The new preheader takes the entry edge and chooses the version.
    let entry_term = func
        .terminator(lp.entry)
        .expect("invariant: verified blocks end in a terminator");
    let mut entry_args = Vec::new();
    for call in func.dfg.inst_mut(entry_term).successors_mut() {
        if call.block == h {
            entry_args = std::mem::take(&mut call.args);
            call.block = pre;
        }
    }
    let at = At { block: pre, span };
    let init = entry_args[lp.param];
    let ok = guard(func, &at, init, p.bound, &p.accesses);
    let choose = InstData::Branch {
        cond: ok,
        then_dest: BlockCall {
            block: h2,
            args: entry_args.clone(),
        },
        else_dest: BlockCall {
            block: h,
            args: entry_args,
        },
    };
    let inst = func.append_inst(pre, choose, &[], span);
    func.set_tag(inst, Tag::Primal);
    // Values of the header used after the loop come through the exit.
    let in_loop: BTreeSet<Block> = [h, p.body, h2, b2, pre].into();
    let mut used_after: BTreeSet<Value> = BTreeSet::new();
    let header_values: BTreeSet<Value> = func
        .dfg
        .block_params(h)
        .iter()
        .copied()
        .chain(
            func.dfg
                .block(h)
                .insts
                .iter()
                .flat_map(|i| func.dfg.inst_results(*i).to_vec()),
        )
        .collect();
    for &b in func.layout.iter().filter(|b| !in_loop.contains(b)) {
        for &i in &func.dfg.block(b).insts {
            func.dfg.inst(i).for_each_arg(|a| {
                if header_values.contains(&a) {
                    used_after.insert(a);
                }
            });
        }
    }
    let mut through: BTreeMap<Value, Value> = BTreeMap::new();
    for v in used_after {
        let ty = func.dfg.value_type(v);
        let param = func.dfg.append_block_param(lp.exit, ty);
        through.insert(v, param);
        for (header, arg) in [(h, v), (h2, map[&v])] {
            let t = func
                .terminator(header)
                .expect("invariant: verified blocks end in a terminator");
            for call in func.dfg.inst_mut(t).successors_mut() {
                if call.block == lp.exit {
                    call.args.push(arg);
                }
            }
        }
    }
    for b in func
        .layout
        .clone()
        .into_iter()
        .filter(|b| !in_loop.contains(b))
    {
        for i in func.dfg.block(b).insts.clone() {
            func.dfg
                .inst_mut(i)
                .map_args(|a| *through.get(&a).unwrap_or(&a));
        }
    }
    let pos = func.layout.iter().position(|b| *b == h).unwrap_or(0);
    func.layout.insert(pos, pre);
    let after = func
        .layout
        .iter()
        .position(|b| *b == p.body)
        .map_or(func.layout.len(), |k| k + 1);
    func.layout.insert(after, h2);
    func.layout.insert(after + 1, b2);
    h2
}

/// Points `b`'s branches to `from` at `to` instead.
fn retarget(func: &mut Function, b: Block, from: Block, to: Block) {
    let t = func
        .terminator(b)
        .expect("invariant: verified blocks end in a terminator");
    for call in func.dfg.inst_mut(t).successors_mut() {
        if call.block == from {
            call.block = to;
        }
    }
}
