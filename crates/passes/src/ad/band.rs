//! Band pattern: a sparse Hessian's pattern found at compile time
//! (docs/jacobians.md#sparse-hessians), for the common case that needs no
//! dependency sweep. For each sweep request `NAME__hp` (`sets
//! interactions`, of `F`) whose stub `NAME__hband(F's parameters, inout
//! int[] info)` the frontend wrote (an empty body), it reads `F`'s IR by
//! abstract interpretation and, when it proves the shape below, makes the
//! stub a copy of `F` (its result dropped) that writes the pattern's
//! description into `info`; otherwise the stub stays empty (`info[0]`
//! stays -1) and `NAME` runs the sweep.
//!
//! The shape: `F` returns one `f64`, has exactly one `Dual` parameter, a
//! `f64` array `x`, and no instruction but arithmetic, comparisons of
//! integers, conversions from integers, `len`, loads and branches (no
//! store, call, array made, `no_diff`, rounding or `fmod`), and none turns
//! a float into an integer or a `bool`: control flow and every index are
//! independent of float values. In each block, every load of `x` is at
//! `B + c` for one integer value `B` of the block (or none: a constant
//! index) and constants `c`. A float value whose inputs come from another
//! block or another run of the block (a block parameter, a value of
//! another block) is "carried": it may enter only linear operations
//! (sums, differences, negation, a choice, products and quotients by
//! values independent of `x`). Then each nonlinear operation of a used
//! value (as `linearize`'s markers: `a * b`, `a / b`, nonlinear built-ins)
//! interacts offsets `c1` of one operand's loads with `c2` of the other's,
//! a fixed set of pairs per block: the block's run with base `B` adds the
//! entries `(B + c1, B + c2)` and their mirrors. The stub records, at the
//! end of each such block, `B` (`@__adc_band_step`): the pattern is exact
//! when each block's runs take the values `lo, lo + 1, ..., hi - 1` of
//! `B` in order (a value repeated is allowed), as a loop over `i` does; a
//! run out of that order marks the block broken and `NAME` falls back to
//! the sweep.
//!
//! `info`: `info[0]` the blocks `U` (-1: no static pattern), `info[1]`
//! the pairs `T`; block `u`'s `lo`, `hi`, state (0: not run, 1: runs in
//! order, 2: broken) at `2 + 3u`; pair `t` at `2 + 3U + 3t` as `(d, c1,
//! u)`, `d = c2 - c1`, sorted by `d`: row `r` has column `r + d` when
//! `lo <= r - c1 < hi` for block `u`.
//!
//! Assumes: verified input, `NAME__hp` declared (not yet generated).
//! Guarantees: the stub verifies; its pattern, read as above, holds every
//! entry the sweep of `F` would record at this input, and no other when
//! every block runs in order (the sweep's sets are those of one run).

use crate::ad::AdError;
use adc_ir::ad::{BAND_INFO_LEN, BAND_STUB_SUFFIX};
use adc_ir::{
    Activity, AdMode, BinaryOp, Block, FuncId, Function, Inst, InstData, MathFunc, Module, Type,
    UnaryOp, Value, ValueDef,
};
use std::collections::{BTreeMap, BTreeSet};

const STEP: &str = "__adc_band_step";

/// What a float value depends on: nothing of `x`, loads of `x` at offsets
/// of its own block's base, or anything carried.
#[derive(Clone, PartialEq, Debug)]
enum Dep {
    Zero,
    Local(Block, BTreeSet<i64>),
    Carried,
}

/// A block whose nonlinear operations interact loads: its base (`None`:
/// constant indices) and the pairs of offsets.
struct Unit {
    block: Block,
    base: Option<Value>,
    pairs: BTreeSet<(i64, i64)>,
}

/// Fills every stub whose function has the shape of the module doc.
pub fn run(module: &mut Module) -> Result<(), AdError> {
    for id in module.func_ids().collect::<Vec<_>>() {
        let f = module.func(id);
        let Some(spec) = f.deriv.as_ref() else {
            continue;
        };
        if !(spec.sets && spec.interactions && spec.mode == AdMode::Forward && f.layout.is_empty())
        {
            continue;
        }
        let Some(name) = f.name.strip_suffix("__hp") else {
            continue;
        };
        let stub = format!("{name}{BAND_STUB_SUFFIX}");
        let (Some(stub), Some(src)) = (module.find(&stub), module.find(&spec.of)) else {
            continue;
        };
        let params = spec.params.clone();
        if !is_stub(module.func(stub), module.func(src)) {
            continue;
        }
        // Small callees inlined, as `linearize` does before the sweep; the
        // blocks a call split merged again, the trivial block parameters
        // of maximal SSA dropped; `cse`: one leaf for `i + k` written twice.
        let mut body = module.func(src).clone();
        let recursive = crate::callgraph::Recursive::of(module);
        crate::opt::inline::run(&mut body, module, &recursive);
        crate::opt::block_params::run(&mut body);
        crate::opt::simplify_cfg::run(&mut body);
        crate::opt::cse::run(&mut body);
        crate::opt::dce::run(&mut body);
        let Some(units) = analyse(&body, &params) else {
            continue;
        };
        let step = crate::ad::helper_function(module, STEP, include_str!("band_step.adir"));
        if let Some(filled) = fill(&body, module, stub, &units, step) {
            *module.func_mut(stub) = filled;
        }
    }
    Ok(())
}

/// The frontend's stub: `F`'s parameters and `info`, no result, a body
/// of one `return`.
fn is_stub(stub: &Function, f: &Function) -> bool {
    let n = f.params.len();
    stub.returns.is_empty()
        && stub.params.len() == n + 1
        && stub.params[..n]
            .iter()
            .zip(&f.params)
            .all(|(a, b)| a.ty == b.ty)
        && stub.params[n].ty == Type::Array(adc_ir::ScalarType::I64)
        && stub.layout.len() == 1
        && stub.dfg.block(stub.layout[0]).insts.len() == 1
}

/// The blocks and pairs of `f` (after `inline`, `cse` and `dce`: used values only), or `None`
/// when `f` is not of the shape of the module doc.
fn analyse(f: &Function, params: &[Activity]) -> Option<Vec<Unit>> {
    if f.returns != [Type::F64] || params.len() != f.params.len() {
        return None;
    }
    let duals: Vec<usize> = (0..params.len())
        .filter(|&k| params[k].is_active())
        .collect();
    let [k] = duals[..] else {
        return None;
    };
    if f.params[k].ty != Type::Array(adc_ir::ScalarType::F64) {
        return None;
    }
    let entry = f.entry_block()?;
    let x = *f.dfg.block_params(entry).get(k)?;
    let order = crate::cfg::dominator_order(f);
    // Float block parameters: carried once an edge passes them anything
    // depending on `x` (a fixed point from all independent).
    let mut carried: BTreeSet<Value> = BTreeSet::new();
    loop {
        let (deps, units) = transfer(f, &order, x, &carried)?;
        let mut grew = false;
        for &b in &order {
            let Some(t) = f.terminator(b) else { continue };
            for call in f.dfg.inst(t).successors() {
                let ps = f.dfg.block_params(call.block).to_vec();
                for (p, a) in ps.into_iter().zip(&call.args) {
                    if is_float(f, p) && dep_at(&deps, &carried, *a, b) != Dep::Zero {
                        grew |= carried.insert(p);
                    }
                }
            }
        }
        if !grew {
            return Some(units);
        }
    }
}

/// An `f64` scalar (the only float the sweep records interactions of).
fn is_float(f: &Function, v: Value) -> bool {
    f.dfg.value_type(v) == Type::F64
}

/// An `f32` scalar or array anywhere: refused (the sweep records no
/// interaction of `f32` operations).
fn is_f32(f: &Function, v: Value) -> bool {
    f.dfg.value_type(v).elem() == adc_ir::ScalarType::F32
}

/// The dependence of `v` as block `at` reads it.
fn dep_at(deps: &BTreeMap<Value, Dep>, carried: &BTreeSet<Value>, v: Value, at: Block) -> Dep {
    if carried.contains(&v) {
        return Dep::Carried;
    }
    match deps.get(&v) {
        Some(Dep::Local(b, s)) if *b != at => {
            if s.is_empty() {
                Dep::Zero
            } else {
                Dep::Carried
            }
        }
        Some(d) => d.clone(),
        // Not a float of `F`'s code, or a parameter of `F`: independent.
        None => Dep::Zero,
    }
}

/// One pass over `f` in dominator order with the carried parameters
/// `carried`: each float value's dependence and each block's pairs.
fn transfer(
    f: &Function,
    order: &[Block],
    x: Value,
    carried: &BTreeSet<Value>,
) -> Option<(BTreeMap<Value, Dep>, Vec<Unit>)> {
    let mut deps: BTreeMap<Value, Dep> = BTreeMap::new();
    let mut units = Vec::new();
    for &b in order {
        let mut base: Option<Option<Value>> = None;
        let mut pairs = BTreeSet::new();
        for &i in &f.dfg.block(b).insts {
            let results = f.dfg.inst_results(i);
            let data = f.dfg.inst(i);
            if !allowed(f, data, results) {
                return None;
            }
            let Some(&r) = results.first() else { continue };
            if !is_float(f, r) {
                continue;
            }
            let get = |v: Value| dep_at(&deps, carried, v, b);
            let dep = match data {
                InstData::Load { array, index, .. } if *array == x => {
                    let (leaf, c) = decompose(f, *index);
                    let first = *base.get_or_insert(leaf);
                    if !same_leaf(f, first, leaf, 8) {
                        return None;
                    }
                    Dep::Local(b, BTreeSet::from([c]))
                }
                InstData::Load { array, .. } => {
                    // Another float array: a parameter (`Const`) only.
                    match f.dfg.value_def(*array) {
                        ValueDef::Param(pb, _) if Some(pb) == f.entry_block() => Dep::Zero,
                        _ => return None,
                    }
                }
                InstData::Const { .. } | InstData::Convert { .. } => Dep::Zero,
                InstData::Unary {
                    op: UnaryOp::Neg,
                    arg,
                } => get(*arg),
                // The sweep's set of a choice is the chosen operand's: as
                // a carried value, linear uses only.
                InstData::Select { args, .. } => choice(&[get(args[0]), get(args[1])]),
                InstData::Binary { op, args } => {
                    let (da, db) = (get(args[0]), get(args[1]));
                    match op {
                        BinaryOp::Add | BinaryOp::Sub => {}
                        BinaryOp::Min | BinaryOp::Max => {
                            deps.insert(r, choice(&[da, db]));
                            continue;
                        }
                        BinaryOp::Mul | BinaryOp::MulZ => interact(&mut pairs, &da, &db)?,
                        BinaryOp::Div | BinaryOp::DivZ => {
                            interact(&mut pairs, &da, &db)?;
                            interact(&mut pairs, &db, &db)?;
                        }
                        _ => return None,
                    }
                    union(b, &[da, db])
                }
                InstData::Math { func, args } => {
                    let ds: Vec<Dep> = args.iter().map(|a| get(*a)).collect();
                    if !matches!(func, MathFunc::Abs) {
                        for (k, a) in ds.iter().enumerate() {
                            for c in &ds[k..] {
                                interact(&mut pairs, a, c)?;
                            }
                        }
                    }
                    union(b, &ds)
                }
                _ => return None,
            };
            deps.insert(r, dep);
        }
        if !pairs.is_empty() {
            // Invariant: a pair comes from loads of `x`, which set the base.
            let base = base.expect("a block with pairs has loads of x");
            units.push(Unit {
                block: b,
                base,
                pairs,
            });
        }
    }
    Some((deps, units))
}

/// Whether the shape allows `data` (the module doc): no effects, nothing
/// from a float to an integer or a `bool`.
fn allowed(f: &Function, data: &InstData, results: &[Value]) -> bool {
    if data.args().iter().chain(results).any(|&v| is_f32(f, v)) {
        return false;
    }
    let float_in = data.args().iter().any(|&v| is_float(f, v));
    let float_out = results.iter().all(|&r| is_float(f, r));
    match data {
        InstData::Const { .. } | InstData::Select { .. } | InstData::ArrayLen { .. } => true,
        InstData::Unary { op, .. } => *op != UnaryOp::NoDiff,
        InstData::Binary { op, .. } => !(float_in && matches!(op, BinaryOp::Rem | BinaryOp::Or)),
        InstData::Cmp { .. } | InstData::Convert { .. } => !float_in,
        InstData::Math { func, .. } => {
            use MathFunc::{Ceil, Floor, Fmod, Round, Trunc};
            !matches!(func, Ceil | Floor | Fmod | Round | Trunc) && (float_out || !float_in)
        }
        InstData::Load { .. } => true,
        InstData::Jump { .. } | InstData::Branch { .. } | InstData::Return { .. } => true,
        _ => false,
    }
}

/// `v` as `leaf + c` (`None`: a constant), through additions and
/// subtractions of constants.
fn decompose(f: &Function, v: Value) -> (Option<Value>, i64) {
    let int_const = |v: Value| crate::defs::int_const(f, v);
    if let Some(k) = int_const(v) {
        return (None, k);
    }
    if let ValueDef::Result(i, _) = f.dfg.value_def(v) {
        if let InstData::Binary { op, args } = f.dfg.inst(i) {
            let (ka, kb) = (int_const(args[0]), int_const(args[1]));
            let shifted =
                |(leaf, c): (Option<Value>, i64), k: i64| c.checked_add(k).map(|c| (leaf, c));
            let found = match (op, ka, kb) {
                (BinaryOp::Add, _, Some(k)) => shifted(decompose(f, args[0]), k),
                (BinaryOp::Add, Some(k), _) => shifted(decompose(f, args[1]), k),
                (BinaryOp::Sub, _, Some(k)) => k
                    .checked_neg()
                    .and_then(|k| shifted(decompose(f, args[0]), k)),
                _ => None,
            };
            if let Some(found) = found {
                return found;
            }
        }
    }
    (Some(v), 0)
}

/// Whether the leaves `a` and `b` have the same value: one value, or the
/// same operation of the same operands (loads of arrays `F` never writes,
/// which `cse` leaves apart), to depth `depth`.
fn same_leaf(f: &Function, a: Option<Value>, b: Option<Value>, depth: u32) -> bool {
    let (Some(a), Some(b)) = (a, b) else {
        return a == b;
    };
    if a == b {
        return true;
    }
    let (ValueDef::Result(ia, _), ValueDef::Result(ib, _)) =
        (f.dfg.value_def(a), f.dfg.value_def(b))
    else {
        return false;
    };
    let (da, db) = (f.dfg.inst(ia), f.dfg.inst(ib));
    let same_args = |x: &[Value], y: &[Value]| {
        depth > 0
            && x.len() == y.len()
            && x.iter()
                .zip(y)
                .all(|(p, q)| same_leaf(f, Some(*p), Some(*q), depth - 1))
    };
    match (da, db) {
        (
            InstData::Load {
                array: x, index: i, ..
            },
            InstData::Load {
                array: y, index: j, ..
            },
        ) => x == y && same_args(&[*i], &[*j]),
        (InstData::Binary { op: p, args: x }, InstData::Binary { op: q, args: y }) => {
            p == q && same_args(x, y)
        }
        (InstData::Unary { op: p, arg: x }, InstData::Unary { op: q, arg: y }) => {
            p == q && same_args(&[*x], &[*y])
        }
        (InstData::ArrayLen { array: x }, InstData::ArrayLen { array: y }) => x == y,
        _ => false,
    }
}

/// The pairs of a nonlinear operation on operands `a` and `b`: none when
/// either is independent of `x`; `None` when a carried value meets one
/// that is not.
fn interact(pairs: &mut BTreeSet<(i64, i64)>, a: &Dep, b: &Dep) -> Option<()> {
    match (a, b) {
        (Dep::Zero, _) | (_, Dep::Zero) => Some(()),
        (Dep::Local(_, sa), Dep::Local(_, sb)) => {
            for &c1 in sa {
                for &c2 in sb {
                    pairs.insert((c1, c2));
                    pairs.insert((c2, c1));
                }
            }
            Some(())
        }
        _ => None,
    }
}

/// The dependence of a choice among `ds` (`min`, `max`, `select`): its
/// set is the chosen one's at run time, carried when any depends on `x`.
fn choice(ds: &[Dep]) -> Dep {
    if ds.iter().all(|d| *d == Dep::Zero) {
        Dep::Zero
    } else {
        Dep::Carried
    }
}

/// The dependence of a linear combination of `ds` in block `b`.
fn union(b: Block, ds: &[Dep]) -> Dep {
    let mut all = BTreeSet::new();
    for d in ds {
        match d {
            Dep::Zero => {}
            Dep::Local(_, s) => all.extend(s.iter().copied()),
            Dep::Carried => return Dep::Carried,
        }
    }
    if all.is_empty() {
        Dep::Zero
    } else {
        Dep::Local(b, all)
    }
}

/// The stub's new body: `body` (`F` after `dce`) with `info`, its result
/// dropped, the table written first and a step (`@__adc_band_step`,
/// inlined) at the end of each unit's block; `None` when the table does
/// not fit in `info`.
fn fill(
    body: &Function,
    module: &Module,
    stub: FuncId,
    units: &[Unit],
    step: FuncId,
) -> Option<Function> {
    let stub = module.func(stub);
    let mut table: Vec<(i64, i64, i64)> = Vec::new();
    for (u, unit) in units.iter().enumerate() {
        for &(c1, c2) in &unit.pairs {
            table.push((c2.checked_sub(c1)?, c1, u as i64));
        }
    }
    table.sort();
    let mut words = vec![units.len() as i64, table.len() as i64];
    for _ in units {
        words.extend([0, 0, 0]);
    }
    for &(d, c1, u) in &table {
        words.extend([d, c1, u]);
    }
    if words.len() > BAND_INFO_LEN {
        return None;
    }
    let mut out = body.clone();
    out.name = stub.name.clone();
    out.params = stub.params.clone();
    out.returns = Vec::new();
    out.linkage = stub.linkage;
    out.deriv = None;
    out.checkpoint = stub.checkpoint;
    out.custom_forward = None;
    out.custom_reverse = None;
    let entry = out.entry_block()?;
    let info = out.dfg.append_block_param(entry, stub.params.last()?.ty);
    let span = stub.decl_span;
    let mut head = Vec::new();
    let mut consts: BTreeMap<i64, Value> = BTreeMap::new();
    let mut get = |out: &mut Function, head: &mut Vec<Inst>, k: i64| {
        *consts.entry(k).or_insert_with(|| constant(out, head, k))
    };
    for (k, w) in words.iter().enumerate() {
        let at = get(&mut out, &mut head, k as i64);
        let v = get(&mut out, &mut head, *w);
        let store = InstData::Store {
            array: info,
            index: at,
            value: v,
            checked: true,
        };
        head.push(out.dfg.make_inst(store, &[]));
    }
    let insts = &mut out.dfg.block_mut(entry).insts;
    head.append(insts);
    *insts = head;
    let mut calls = Vec::new();
    for (u, unit) in units.iter().enumerate() {
        let mut tail = Vec::new();
        let base = match unit.base {
            Some(v) => v,
            None => constant(&mut out, &mut tail, 0),
        };
        let slot = constant(&mut out, &mut tail, 2 + 3 * u as i64);
        let call = InstData::Call {
            func: step,
            args: vec![info, slot, base],
        };
        tail.push(out.dfg.make_inst(call, &[]));
        let call = *tail.last()?;
        let insts = &mut out.dfg.block_mut(unit.block).insts;
        let term = insts.pop()?;
        insts.extend(tail);
        insts.push(term);
        calls.push((unit.block, call));
    }
    // The steps inlined: in the loop that runs a block, `opt` keeps the
    // slots' words at hand (a call of a helper stays a call).
    for (b, call) in calls {
        crate::opt::inline::inline_call(&mut out, module, b, call);
    }
    for b in out.layout.clone() {
        let t = out.terminator(b)?;
        if let InstData::Return { args } = out.dfg.inst_mut(t) {
            args.clear();
        }
    }
    let all: Vec<Inst> = out
        .layout
        .iter()
        .flat_map(|&b| out.dfg.block(b).insts.clone())
        .collect();
    for i in all {
        if out
            .srclocs
            .get(i.index())
            .is_none_or(|s| *s == adc_ir::Span::UNDEFINED)
        {
            out.set_span(i, span);
        }
    }
    Some(out)
}

fn constant(f: &mut Function, insts: &mut Vec<Inst>, k: i64) -> Value {
    let (i, v) = crate::rewrite::detached_int(f, k);
    insts.push(i);
    v
}
