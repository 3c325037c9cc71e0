//! `indvars`: induction-variable recognition. An integer that a loop
//! advances by a constant once per iteration, beside the loop's counter,
//! is computed from the counter instead of carried from the previous
//! iteration.
//!
//! Code ported from C keeps such counters (GradBench's gmm: `Lparamsidx++`
//! in the inner loop of a triangular nest, beside `j`). Carried in a block
//! parameter, the value is unknown to every analysis that reads indices
//! as `counter + k`, and a reverse derivative tapes it at each iteration
//! (8 bytes per multiply-add in gmm), because nothing in the reverse sweep
//! can compute it. As `start + (j - j0) * f` it is arithmetic of the
//! counter, which `unzip` computes again.
//!
//! Assumes: verified input. It matches a loop header `h` with two
//! incoming edges, an entry edge and a back edge from a block `h`
//! dominates (as `crate::loops` finds counted loops), and among `h`'s
//! `i64` parameters a counter `j` whose back-edge argument is `j + s` for
//! a constant `s != 0` (`|s| <= loops::MAX_STEP`): the one the header's
//! branch compares, else the first. Every other `i64` parameter `q` whose
//! back-edge argument is `q + c` for a constant `c` that is a multiple of
//! `s` is rewritten.
//!
//! Guarantees: on its k-th visit of `h`, `j = j0 + k*s` and
//! `q = q0 + k*c` (`j0`, `q0` what the entry edge passes), so
//! `q = (q0 - j0*f) + j*f` with `f = c / s`; the IR's integer arithmetic
//! wraps, so this holds whatever the intermediate values. The entry
//! edge's block computes `q0 - j0*f` before its terminator (it dominates
//! `h`), `h` computes `j*f + that` first, and every use of `q` takes it;
//! `q` is then carried into itself only and `dce` removes it.

use crate::cfg::{branch_test, incoming_edges};
use crate::defs::int_const;
use crate::loops::{natural_loop, MAX_STEP};
use adc_ir::dom::DomTree;
use adc_ir::offset::offset_of;
use adc_ir::{BinaryOp, Block, Constant, Function, Inst, InstData, Span, Tag, Type, Value};
use std::collections::{BTreeMap, BTreeSet};

pub fn run(func: &mut Function) -> bool {
    let rewrites = find(func);
    // A loop's start that is a parameter rewritten in this run waits for
    // the next (the fixed point runs the pass again).
    let params: BTreeSet<Value> = rewrites.iter().map(|r| r.param).collect();
    let rewrites: Vec<Rewrite> = rewrites
        .into_iter()
        .filter(|r| !params.contains(&r.start) && !params.contains(&r.counter_start))
        .collect();
    for r in &rewrites {
        // The back edge passes the start instead of `q + c`: the
        // parameter then always holds the start, and `block-params`
        // removes it once nothing reads it.
        set_back_arg(func, r);
        let (scaled, base) = rewrite(func, r);
        reassociate(func, r, scaled, base, &params);
        // The loop's own uses take a value computed in the header; uses
        // after the loop one computed once at its exit, where there is
        // one (not the header's, which `cse` would merge with it: an
        // addition in every iteration for a value read once).
        let used_inside = r.body.iter().any(|&b| uses_in(func, b, r.param));
        let after = r.exit.map(|x| {
            let scaled = if r.factor == 1 {
                r.counter
            } else {
                let f = emit_at(func, x, 0, r, konst(r.factor));
                emit_at(func, x, 1, r, bin(BinaryOp::Mul, r.counter, f))
            };
            let at = if r.factor == 1 { 0 } else { 2 };
            emit_at(func, x, at, r, add(scaled, base))
        });
        let inside = (used_inside || after.is_none()).then(|| {
            // After `counter * f`, if there is one.
            let at = if r.factor == 1 { 0 } else { 2 };
            emit_at(func, r.header, at, r, add(scaled, base))
        });
        // Invariant: one of them is made (`after` is `None` only when
        // `inside` is made).
        let inside_or_after = inside.or(after).expect("one of them is made");
        replace_uses(func, r, inside_or_after, after.unwrap_or(inside_or_after));
    }
    !rewrites.is_empty()
}

/// The parameters to rewrite, loop by loop.
fn find(func: &Function) -> Vec<Rewrite> {
    let mut rewrites = Vec::new();
    let dom = DomTree::new(func);
    let edges = incoming_edges(func);
    for &h in &func.layout {
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
        // (parameter index, step) of every parameter that steps.
        let stepping: Vec<(usize, i64)> = (0..params.len())
            .filter_map(|k| {
                let (base, step) = offset_of(func, back.args[k]);
                let steps = func.dfg.value_type(params[k]) == Type::I64
                    && base == params[k]
                    && step != 0
                    && step.unsigned_abs() <= MAX_STEP;
                steps.then_some((k, step))
            })
            .collect();
        if stepping.is_empty() {
            continue;
        }
        let tested = branch_test(func, h).and_then(|t| {
            stepping
                .iter()
                .position(|&(k, _)| t.args.contains(&params[k]))
        });
        let (j, s) = stepping[tested.unwrap_or(0)];
        let body = natural_loop(&edges, h, back.from);
        // The loop's only exit, when it is `h`'s edge to a block entered
        // from `h` alone: that block sees the counter as the loop left it.
        let exits: Vec<(Block, Block)> = body
            .iter()
            .flat_map(|&x| func.successors(x).into_iter().map(move |t| (x, t)))
            .filter(|(_, t)| !body.contains(t))
            .collect();
        let exit = match exits.as_slice() {
            [(from, x)] if *from == h && edges.get(x).is_some_and(|e| e.len() == 1) => Some(*x),
            _ => None,
        };
        let mut found: Vec<(usize, i64, Option<Inst>)> = stepping
            .iter()
            .filter(|&&(q, c)| q != j && c % s == 0)
            .map(|&(q, c)| (q, c / s, step_inst(func, back.args[q])))
            .collect();
        found.extend(trailing(func, params, &entry.args, &back.args, j, s));
        for (q, factor, at) in found {
            rewrites.push(Rewrite {
                body: body.clone(),
                header: h,
                entry: entry.from,
                exit,
                latch: back.from,
                index: q,
                counter: params[j],
                counter_start: entry.args[j],
                param: params[q],
                start: entry.args[q],
                factor,
                at,
            });
        }
    }
    rewrites
}

/// The parameters `q` (`i64`, not the counter `j`, whose step is `s`)
/// that trail the counter: the back edge passes `j + d` (the counter's
/// value in the iteration that ends, `d` a constant, 0 for `j` itself)
/// and the entry edge `start` with `start - j0 = d - s` (both constants,
/// or both offsets of one value). Then `q = j + (d - s)` on every visit:
/// on the entry, by that; on the k-th back edge, `q = j_{k-1} + d` and
/// `j = j_{k-1} + s` (wrapping, as the IR's arithmetic does). That is the
/// rewrite's `(start - j0) + j * 1` (factor 1); the step's span and tag
/// are the counter's. A loop `for (i = 0; i + 1 < n; i++)` carries `i`
/// and `i + 1` so once `cse` shares `i + 1`'s two uses.
fn trailing(
    func: &Function,
    params: &[Value],
    entry: &[Value],
    back: &[Value],
    j: usize,
    s: i64,
) -> Vec<(usize, i64, Option<Inst>)> {
    let (jb, jo) = offset_of(func, entry[j]);
    let at = step_inst(func, back[j]);
    (0..params.len())
        .filter(|&q| q != j && func.dfg.value_type(params[q]) == Type::I64)
        .filter(|&q| {
            let (base, d) = offset_of(func, back[q]);
            let (qb, qo) = offset_of(func, entry[q]);
            let related = match (int_const(func, entry[q]), int_const(func, entry[j])) {
                (Some(a), Some(b)) => Some(a.wrapping_sub(b)),
                _ => (qb == jb).then(|| qo.wrapping_sub(jo)),
            };
            base == params[j] && related == Some(d.wrapping_sub(s))
        })
        .map(|q| (q, 1, at))
        .collect()
}

/// Whether an instruction of `b` reads `v`.
fn uses_in(func: &Function, b: Block, v: Value) -> bool {
    func.dfg.block(b).insts.iter().any(|&i| {
        let mut found = false;
        func.dfg.inst(i).for_each_arg(|a| found |= a == v);
        found
    })
}

/// Makes the back edge pass `r.start` to `r.param`.
fn set_back_arg(func: &mut Function, r: &Rewrite) {
    let Some(term) = func.terminator(r.latch) else {
        return;
    };
    for call in func.dfg.inst_mut(term).successors_mut() {
        if call.block == r.header {
            call.args[r.index] = r.start;
        }
    }
}

/// Every use of `r.param` in the loop becomes `inside`; every other use,
/// and the parameters of the exit block it is passed to, `after`.
fn replace_uses(func: &mut Function, r: &Rewrite, inside: Value, after: Value) {
    let q = r.param;
    let mut exit_params: BTreeMap<Value, Value> = BTreeMap::new();
    if let (Some(x), Some(term)) = (r.exit, func.terminator(r.header)) {
        for call in func.dfg.inst(term).successors() {
            if call.block != x {
                continue;
            }
            for (&a, &p) in call.args.iter().zip(func.dfg.block_params(x)) {
                if a == q {
                    exit_params.insert(p, after);
                }
            }
        }
    }
    for b in func.layout.clone() {
        let to = if r.body.contains(&b) { inside } else { after };
        for i in func.dfg.block(b).insts.clone() {
            func.dfg.inst_mut(i).map_args(|a| {
                if a == q {
                    to
                } else {
                    exit_params.get(&a).copied().unwrap_or(a)
                }
            });
        }
    }
}

/// One parameter computed from its loop's counter.
struct Rewrite {
    /// The loop's blocks.
    body: BTreeSet<Block>,
    header: Block,
    /// The block the entry edge comes from.
    entry: Block,
    /// The loop's only exit, entered from the header alone.
    exit: Option<Block>,
    /// The block the back edge comes from.
    latch: Block,
    /// The parameter's position among the header's.
    index: usize,
    counter: Value,
    counter_start: Value,
    param: Value,
    start: Value,
    /// The parameter's step over the counter's.
    factor: i64,
    /// The back edge's `q + c` (its span and tag are the new code's).
    at: Option<Inst>,
}

fn step_inst(func: &Function, v: Value) -> Option<Inst> {
    match func.dfg.value_def(v) {
        adc_ir::ValueDef::Result(i, _) => Some(i),
        _ => None,
    }
}

/// `x + q` in the loop, for `x` defined outside it (and not rewritten),
/// becomes
/// `(x + base) + j*f`, with `x + base` computed in the entry block: one
/// addition per iteration, as `x + q` was, where `x + (j*f + base)` would
/// take two (an index `lo + Lparamsidx` into an array).
fn reassociate(
    func: &mut Function,
    r: &Rewrite,
    scaled: Value,
    base: Value,
    rewritten: &BTreeSet<Value>,
) {
    let inside: BTreeSet<Value> = r
        .body
        .iter()
        .flat_map(|&b| {
            let params = func.dfg.block_params(b).iter().copied();
            let results = func
                .dfg
                .block(b)
                .insts
                .iter()
                .flat_map(|&i| func.dfg.inst_results(i).iter().copied());
            params.chain(results).collect::<Vec<_>>()
        })
        .collect();
    let mut sums: Vec<(Inst, Value)> = Vec::new();
    for &b in &r.body {
        for &i in &func.dfg.block(b).insts {
            if let InstData::Binary {
                op: BinaryOp::Add,
                args,
            } = func.dfg.inst(i)
            {
                let x = match *args {
                    [x, q] | [q, x] if q == r.param && x != r.param && !inside.contains(&x) => x,
                    _ => continue,
                };
                // (A parameter this run rewrites is not there any more.)
                if func.dfg.value_type(x) == Type::I64 && !rewritten.contains(&x) {
                    sums.push((i, x));
                }
            }
        }
    }
    let mut rebased: BTreeMap<Value, Value> = BTreeMap::new();
    for (i, x) in sums {
        let xb = match rebased.get(&x) {
            Some(&v) => v,
            None => {
                let at = func.dfg.block(r.entry).insts.len() - 1;
                let v = emit_at(func, r.entry, at, r, add(x, base));
                rebased.insert(x, v);
                v
            }
        };
        *func.dfg.inst_mut(i) = add(scaled, xb);
    }
}

fn konst(k: i64) -> InstData {
    InstData::Const {
        value: Constant::I64(k),
    }
}

fn bin(op: BinaryOp, x: Value, y: Value) -> InstData {
    InstData::Binary { op, args: [x, y] }
}

fn add(x: Value, y: Value) -> InstData {
    InstData::Binary {
        op: BinaryOp::Add,
        args: [x, y],
    }
}

/// Inserts `data` (one `i64` result) at position `at` of `block`, with
/// the span and tag of the back edge's step.
fn emit_at(func: &mut Function, block: Block, at: usize, r: &Rewrite, data: InstData) -> Value {
    let (span, tag) = r.at.map_or((Span::UNDEFINED, Tag::Primal), |i| {
        (func.span(i), func.tag(i))
    });
    let inst = func.dfg.make_inst(data, &[Type::I64]);
    func.set_span(inst, span);
    func.set_tag(inst, tag);
    func.dfg.block_mut(block).insts.insert(at, inst);
    func.dfg.inst_results(inst)[0]
}

/// Emits `base = start - counter_start * f` before the entry block's
/// terminator and `counter * f` at the top of the header (the counter
/// itself when `f` is 1); returns both.
fn rewrite(func: &mut Function, r: &Rewrite) -> (Value, Value) {
    // In the entry block, before its terminator.
    let mut at = func.dfg.block(r.entry).insts.len() - 1;
    let scaled_start = if r.factor == 1 {
        r.counter_start
    } else {
        let f = emit_at(func, r.entry, at, r, konst(r.factor));
        at += 1;
        let m = emit_at(func, r.entry, at, r, bin(BinaryOp::Mul, r.counter_start, f));
        at += 1;
        m
    };
    let base = emit_at(
        func,
        r.entry,
        at,
        r,
        bin(BinaryOp::Sub, r.start, scaled_start),
    );
    // At the top of the header.
    let scaled = if r.factor == 1 {
        r.counter
    } else {
        let f = emit_at(func, r.header, 0, r, konst(r.factor));
        emit_at(func, r.header, 1, r, bin(BinaryOp::Mul, r.counter, f))
    };
    (scaled, base)
}
