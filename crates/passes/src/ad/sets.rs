//! `sets`: the dependency sweep of sparse Jacobians
//! (docs/jacobians.md#sparse-jacobians). A forward derivative whose
//! tangents are sets of input indices instead of numbers: the tangent of a
//! value is the set of inputs it depends on along this execution.
//!
//! Assumes: `lower-pairs`' output for a request whose spec has `sets`
//! (`propagate` keeps such a spec): a width-1 forward-mode derivative whose
//! instructions `propagate` classified.
//! Guarantees (check with `adc ir --after widen`, the stage it runs in):
//! the function has the forward signature with one more parameter last,
//! `arena: inout i64[]`; every differential `f64` value is a set handle,
//! an offset into the arena held exactly as a `f64` (below 2^53), so
//! shadows keep their type and layout. Handle 0 is the empty set (a zero
//! tangent, and a fresh shadow's zeros, are empty); a negative handle
//! `-(c + 1)` is the set `{c}`, held in the handle alone (the caller seeds
//! each input this way); a set at offset `h >= 4` is `arena[h]` indices,
//! increasing, in `arena[h + 1 ..]`, or when `arena[h]` is negative a
//! union node, the union of the sets `arena[h + 1]` and `arena[h + 2]`
//! (made for large sets, so that a sum over many inputs costs constant
//! time and room per term: the caller flattens it).
//! `arena[0]` is the next free offset and `arena[1]` becomes 1 when the
//! arena is too small (the sets are then wrong, and the caller runs the
//! sweep again with a larger arena, sized from `arena[0]`, which goes on
//! counting the room asked for); `arena[2]` counts the union nodes;
//! `arena[3]` is the set the last union made (0 when it made none), which
//! a union whose caller uses its first operand for nothing else (`grow`)
//! may extend in place.
//! Each differential instruction maps to
//! a set operation: a sum, difference, `min` or `max` is the union
//! (a call of `__adc_set_union`, an internal function added to the
//! module; none when it is one of its operands: of one value with itself,
//! with the empty set, or with a set the other is a union of), a product or quotient
//! by a primal value and a negation keep the set, a zero constant is the
//! empty set; loads, stores, selects, block parameters and the tape's
//! pushes, pops and reads (in the sweep of a reverse derivative, as sparse
//! Hessians run it) move handles as they moved tangents. A call of a
//! callee's forward derivative calls its dependency sweep
//! (`__adc_fwdMASKs_NAME`, declared after `linearize` by
//! [`declare_callees`]) with the arena. The primal instructions are the
//! input's: the sweep runs the function once.
//!
//! With `interactions` (a sparse Hessian's sweep), each marker call
//! `linearize` put after a nonlinear operation becomes a record of two
//! sets in the arena ([`crate::ad::interactions`]), and a callee's sweep
//! is `__adc_fwdMASKh_NAME`, with interactions too.
//!
//! A `float` (`f32`) tangent or shadow is made `f64` first
//! ([`crate::ad::handles`]): an `f32` would hold handles exactly only up
//! to 2^24. Not handled (E0401): custom forward derivatives.

use crate::ad::interactions;
use crate::ad::widen::callee_spec;
use crate::ad::{diff_values, jvp_source, AdError};
use adc_ir::{
    AdMode, BinaryOp, Constant, DerivSpec, FuncId, Function, InstData, LenCheckOf, Module,
    ParamMode, ScalarType, Tag, Type, UnaryOp, Value,
};
use std::collections::{BTreeMap, BTreeSet};

const UNION: &str = "__adc_set_union";

/// Rewrites the function `id` into its dependency sweep if its request
/// has `sets`.
pub fn run(module: &mut Module, id: FuncId) -> Result<(), AdError> {
    if !module.func(id).deriv.as_ref().is_some_and(|s| s.sets) {
        return Ok(());
    }
    let union = union_function(module);
    let mut func = module.func(id).clone();
    let spec = func.deriv.clone().filter(|s| s.masks);
    let interacts = func
        .deriv
        .as_ref()
        .is_some_and(|s| s.interactions)
        .then(|| interactions::interacts_function(module));
    rewrite(module, &mut func, union, interacts)?;
    if !is_internal_sweep(&func.name) {
        drop_unread_outputs(&mut func);
    }
    if let Some(interacts) = interacts {
        interactions::finish(&mut func, interacts, union);
    }
    if let Some(spec) = spec {
        // A callee's sweep gets its caller's tangents, not seeds.
        let seeded = !is_internal_sweep(&func.name);
        crate::ad::masks::rewrite(&mut func, union, &spec, seeded);
    }
    *module.func_mut(id) = func;
    Ok(())
}

/// The name of the dependency sweep standing for the width-1 forward
/// derivative with `spec`: `__adc_fwdMASKs_NAME`, `__adc_fwdMASKm_NAME`
/// for a sweep of bit sets (`masks`), `__adc_fwdMASKh_NAME` for one with
/// `interactions`.
fn sets_name(spec: &DerivSpec, (masks, interactions): (bool, bool)) -> String {
    let mask: String = spec
        .params
        .iter()
        .map(|a| if a.is_active() { 'd' } else { 'c' })
        .collect();
    let kind = if masks {
        'm'
    } else if interactions {
        'h'
    } else {
        's'
    };
    format!("__adc_fwd{mask}{kind}_{}", spec.of)
}

/// The sweep a call of `callee` (a width-1 forward derivative) becomes
/// in a sweep of `kind` (`masks`, `interactions`).
fn sets_callee(module: &Module, callee: FuncId, kind: (bool, bool)) -> Option<FuncId> {
    let spec = callee_spec(module, callee)?;
    module.find(&sets_name(&spec, kind))
}

/// After `linearize` generated `id`: when it is a dependency sweep,
/// declares the sweep of every callee derivative it calls, so that
/// `linearize` generates them in the same run.
pub fn declare_callees(module: &mut Module, id: FuncId) {
    let func = module.func(id);
    let Some((masks, interactions)) = func
        .deriv
        .as_ref()
        .filter(|s| s.sets && s.mode == AdMode::Forward)
        .map(|s| (s.masks, s.interactions))
    else {
        return;
    };
    let mut wanted = Vec::new();
    for &b in &func.layout {
        for &i in &func.dfg.block(b).insts {
            if let InstData::Call { func: callee, .. } = func.dfg.inst(i) {
                if jvp_source(module, *callee).is_some() {
                    if let Some(spec) = callee_spec(module, *callee) {
                        wanted.push((spec, func.span(i)));
                    }
                }
            }
        }
    }
    for (spec, span) in wanted {
        let Some(src) = module.find(&spec.of) else {
            continue;
        };
        let name = sets_name(&spec, (masks, interactions));
        let spec = DerivSpec {
            sets: true,
            masks,
            interactions,
            width: 1,
            vector: false,
            ..spec
        };
        crate::ad::declare(module, src, name, spec, span);
    }
}

/// `@__adc_set_union(arena, a, b)`: the handle of the union of sets `a`
/// and `b` (one of them when it holds the other), added to the module the
/// first time a sweep needs it.
fn union_function(module: &mut Module) -> FuncId {
    crate::ad::helper_function(module, UNION, include_str!("set_union.adir"))
}

fn unsupported(func: &Function, inst: adc_ir::Inst, what: &str) -> AdError {
    AdError::new(
        format!("a sparse Jacobian's dependency sweep cannot yet handle {what}"),
        func.span(inst),
    )
}

/// True when `v` is the constant zero (the empty set).
pub(super) fn is_zero(func: &Function, v: Value) -> bool {
    match func.dfg.value_def(v) {
        adc_ir::ValueDef::Result(i, _) => {
            matches!(func.dfg.inst(i), InstData::Const { value: Constant::F64(x) } if *x == 0.0)
        }
        _ => false,
    }
}

/// `interacts`: the function recording interactions, for a sweep with
/// `interactions`.
fn rewrite(
    module: &Module,
    func: &mut Function,
    union: FuncId,
    interacts: Option<FuncId>,
) -> Result<(), AdError> {
    let spec = func.deriv.as_ref();
    let kind = (
        spec.is_some_and(|s| s.masks),
        spec.is_some_and(|s| s.interactions),
    );
    let markers = [interactions::MARKER, interactions::MARKER_F32].map(|m| module.find(m));
    crate::ad::handles::widen(module, func)?;
    let diff = diff_values(module, func);
    let entry = func
        .entry_block()
        .ok_or_else(|| AdError::internal("internal error: `sets`: no body", func.deriv_span))?;
    let param = adc_ir::ad::sets_arena_param(&func.params);
    func.params.push(param);
    let arena = func
        .dfg
        .append_block_param(entry, Type::Array(ScalarType::I64));
    for (v, &d) in diff.iter().enumerate() {
        let v = Value::new(v);
        if d && func.dfg.value_type(v).elem() != ScalarType::F64 {
            return Err(AdError::internal(
                "internal error: `sets`: a tangent not made a `f64` handle",
                func.deriv_span,
            ));
        }
    }
    let mut subst: BTreeMap<Value, Value> = BTreeMap::new();
    // The operands (after `subst`) each union result is the union of.
    let mut parts: BTreeMap<Value, BTreeSet<Value>> = BTreeMap::new();
    let insts: Vec<adc_ir::Inst> = func
        .layout
        .iter()
        .flat_map(|&b| func.dfg.block(b).insts.clone())
        .collect();
    for i in insts {
        let data = func.dfg.inst(i).clone();
        let results = func.dfg.inst_results(i).to_vec();
        let is_diff = |v: &Value| diff[v.index()];
        match (func.tag(i), &data) {
            (Tag::Diff, InstData::Binary { op, args }) => {
                let d: Vec<Value> = args.iter().copied().filter(is_diff).collect();
                let keep = matches!(
                    op,
                    BinaryOp::Mul | BinaryOp::MulZ | BinaryOp::Div | BinaryOp::DivZ
                );
                let d: Vec<Value> = d.iter().map(|&v| resolve(&subst, v)).collect();
                match (keep, d.as_slice()) {
                    (true, [t]) => {
                        subst.insert(results[0], *t);
                    }
                    (_, &[a, b]) => match absorbed(func, &parts, a, b) {
                        Some(v) => {
                            subst.insert(results[0], v);
                        }
                        None => {
                            *func.dfg.inst_mut(i) = InstData::Call {
                                func: union,
                                args: vec![arena, a, b],
                            };
                            parts.insert(results[0], union_parts(&parts, a, b));
                        }
                    },
                    _ => return Err(unsupported(func, i, "an operation on no tangent")),
                }
            }
            (
                Tag::Diff,
                InstData::Unary {
                    op: UnaryOp::Neg,
                    arg,
                },
            ) => {
                subst.insert(results[0], *arg);
            }
            (Tag::Diff, InstData::Const { value }) => {
                if value.ty().is_float() && !matches!(value, Constant::F64(x) if *x == 0.0) {
                    return Err(unsupported(func, i, "a nonzero tangent constant"));
                }
            }
            (Tag::Diff, InstData::Store { value, .. } | InstData::RefStore { value, .. })
                if !is_diff(value) && !is_zero(func, *value) =>
            {
                return Err(unsupported(
                    func,
                    i,
                    "a store of a primal value to a shadow",
                ))
            }
            (Tag::Diff, InstData::Select { args, .. })
                if args.iter().any(|a| !is_diff(a) && !is_zero(func, *a)) =>
            {
                return Err(unsupported(
                    func,
                    i,
                    "a choice of a primal value as a tangent",
                ))
            }
            (
                Tag::Diff,
                InstData::Load { .. }
                | InstData::Store { .. }
                | InstData::Select { .. }
                | InstData::RefLoad { .. }
                | InstData::RefStore { .. }
                | InstData::CopyRange { .. }
                | InstData::ArrayFree { .. }
                | InstData::DeferFree { .. }
                | InstData::TapePush { .. }
                | InstData::TapePop { .. }
                | InstData::TapeRead { .. },
            ) => (),
            (Tag::Diff, InstData::Convert { arg }) if is_diff(arg) => {
                // A tangent's conversion between `float` and `double`:
                // both are `f64` handles (`ad::handles`).
                subst.insert(results[0], *arg);
            }
            (Tag::Diff, InstData::Call { func: f, args }) if markers.contains(&Some(*f)) => {
                let Some(interacts) = interacts else {
                    return Err(AdError::internal(
                        "internal error: `sets`: an interaction in a sweep without them",
                        func.span(i),
                    ));
                };
                let args = vec![arena, args[0], args[1], args[2]];
                *func.dfg.inst_mut(i) = InstData::Call {
                    func: interacts,
                    args,
                };
            }
            (Tag::Diff, InstData::Call { .. }) => {
                return Err(unsupported(func, i, "a custom forward derivative"))
            }
            (Tag::Diff, other) => {
                return Err(unsupported(
                    func,
                    i,
                    &format!("`{}`", adc_ir::print::fmt_inst_data(Some(module), other)),
                ))
            }
            (Tag::Mixed, InstData::Call { func: callee, args })
                if jvp_source(module, *callee).is_some() =>
            {
                let wide = sets_callee(module, *callee, kind).ok_or_else(|| {
                    AdError::internal(
                        "internal error: `sets`: a callee without its dependency sweep",
                        func.span(i),
                    )
                })?;
                let mut args = args.clone();
                args.push(arena);
                *func.dfg.inst_mut(i) = InstData::Call { func: wide, args };
            }
            (_, d) if d.is_terminator() => (),
            (_, d) if d.args().iter().any(is_diff) => {
                return Err(unsupported(
                    func,
                    i,
                    &format!(
                        "`{}` on a tangent",
                        adc_ir::print::fmt_inst_data(Some(module), d)
                    ),
                ))
            }
            _ => (),
        }
    }
    crate::rewrite::substitute(func, &subst);
    // Common subexpressions make more unions of a set with itself (two
    // choices between a tangent and zero on one condition).
    crate::opt::cse::run(func);
    simplify_unions(func, union);
    crate::opt::dce::run(func);
    mark_growable(func, union);
    func.deriv = None;
    Ok(())
}

/// Removes the union calls of `func` that [`absorbed`] finds to be one
/// of their operands.
fn simplify_unions(func: &mut Function, union: FuncId) {
    let mut subst: BTreeMap<Value, Value> = BTreeMap::new();
    let mut parts: BTreeMap<Value, BTreeSet<Value>> = BTreeMap::new();
    for b in func.layout.clone() {
        let mut kept = Vec::new();
        for i in func.dfg.block(b).insts.clone() {
            if let InstData::Call { func: f, args } = func.dfg.inst(i) {
                if *f == union {
                    let (a, c) = (resolve(&subst, args[1]), resolve(&subst, args[2]));
                    let r = func.dfg.inst_results(i)[0];
                    if let Some(v) = absorbed(func, &parts, a, c) {
                        subst.insert(r, v);
                        continue;
                    }
                    parts.insert(r, union_parts(&parts, a, c));
                }
            }
            kept.push(i);
        }
        func.dfg.block_mut(b).insts = kept;
    }
    crate::rewrite::substitute(func, &subst);
}

/// Unread outputs (a requested sweep only, not a callee's): the primal
/// stores to an `out` array parameter that the sweep only stores to (no
/// load, view, copy or call reads it) go (a checked one leaves its bounds
/// check, which the tangent's unchecked store after it relies on), and
/// with them the primal work that only they needed (Bratu's `exp`),
/// which `dce` then removes. The sweep computes the pattern, not `F`'s
/// outputs: its callers (generated by `[jacobian(NAME, sparse)]` and
/// `[hessian(NAME, sparse)]`) get those from the compressed evaluation or
/// a call of `F`. A callee's sweep keeps
/// them, since its caller may read them.
fn drop_unread_outputs(func: &mut Function) {
    let Some(entry) = func.entry_block() else {
        return;
    };
    let outs: Vec<Value> = func
        .params
        .iter()
        .zip(func.dfg.block_params(entry))
        .filter(|(p, v)| {
            p.mode == ParamMode::Out && matches!(func.dfg.value_type(**v), Type::Array(_))
        })
        .map(|(_, &v)| v)
        .collect();
    let mut drop = Vec::new();
    for out in outs {
        let mut stores = Vec::new();
        let mut only_stored = true;
        for &b in &func.layout {
            for &i in &func.dfg.block(b).insts {
                let data = func.dfg.inst(i);
                if !data.args().contains(&out) {
                    continue;
                }
                match data {
                    InstData::Store {
                        array,
                        index,
                        value,
                        ..
                    } if *array == out
                        && *index != out
                        && *value != out
                        && func.tag(i) == Tag::Primal =>
                    {
                        stores.push(i)
                    }
                    InstData::ArrayLen { .. } | InstData::LenCheck { .. } => (),
                    _ => only_stored = false,
                }
            }
        }
        if only_stored {
            drop.extend(stores);
        }
    }
    if drop.is_empty() {
        return;
    }
    // A checked store leaves its check (`lencheck.index`, at its place):
    // the tangent's store at that index is unchecked, relying on it.
    let mut gone = Vec::new();
    for i in drop {
        match *func.dfg.inst(i) {
            InstData::Store {
                array,
                index,
                checked: true,
                ..
            } => {
                *func.dfg.inst_mut(i) = InstData::LenCheck {
                    args: [index, array],
                    what: LenCheckOf::Index,
                };
            }
            _ => gone.push(i),
        }
    }
    for b in func.layout.clone() {
        func.dfg.block_mut(b).insts.retain(|i| !gone.contains(i));
    }
    crate::opt::dce::run(func);
}

/// Gives each union call its last argument, `grow`: true when one operand
/// is the result of a union call that nothing else uses (that operand
/// then goes first), so that `__adc_set_union` may merge the other into
/// its set in place when it is the set the last call made (a chain of
/// sums, `((a + b) + c) + d`, then makes one set instead of one per
/// term). Every other use of a handle, a store or a tape push or a block
/// argument, keeps it from growing, and so does a union made in another
/// block: its one use may run many times for one run of it (a loop's body
/// adding to a set made before the loop would grow that set at every
/// iteration, and every iteration's set would be the last one's).
fn mark_growable(func: &mut Function, union: FuncId) {
    let counts = crate::defs::use_counts(func);
    let mut block_of = BTreeMap::new();
    for &b in &func.layout {
        for &i in &func.dfg.block(b).insts {
            block_of.insert(i, b);
        }
    }
    let made_here = |func: &Function, v: Value, b: adc_ir::Block| {
        counts[v.index()] == 1
            && matches!(func.dfg.value_def(v), adc_ir::ValueDef::Result(i, _)
                if block_of.get(&i) == Some(&b)
                    && matches!(func.dfg.inst(i), InstData::Call { func: f, .. } if *f == union))
    };
    // A constant before each call (`cse` merges them), in its block.
    let flag = |func: &mut Function, b: adc_ir::Block, at: adc_ir::Inst, yes: bool| {
        let c = func.dfg.make_inst(
            InstData::Const {
                value: Constant::Bool(yes),
            },
            &[Type::BOOL],
        );
        func.set_span(c, func.span(at));
        let insts = &mut func.dfg.block_mut(b).insts;
        let k = insts.iter().position(|&i| i == at).unwrap_or(0);
        insts.insert(k, c);
        func.dfg.inst_results(c)[0]
    };
    for b in func.layout.clone() {
        for i in func.dfg.block(b).insts.clone() {
            let InstData::Call { func: f, args } = func.dfg.inst(i) else {
                continue;
            };
            if *f != union || args.len() != 3 {
                continue;
            }
            let (arena, a, c) = (args[0], args[1], args[2]);
            let args = if made_here(func, a, b) {
                vec![arena, a, c, flag(func, b, i, true)]
            } else if made_here(func, c, b) {
                vec![arena, c, a, flag(func, b, i, true)]
            } else {
                vec![arena, a, c, flag(func, b, i, false)]
            };
            *func.dfg.inst_mut(i) = InstData::Call { func: union, args };
        }
    }
}

/// `v` after the substitutions made so far.
fn resolve(subst: &BTreeMap<Value, Value>, mut v: Value) -> Value {
    while let Some(&w) = subst.get(&v) {
        v = w;
    }
    v
}

/// Most operands a union's `parts` records: a long sum keeps its last
/// ones only, so the map stays linear in the function.
const MAX_PARTS: usize = 16;

/// The union of `a` and `b` when it is one of them, with no call: of a
/// value with itself (`x + x`, or two products of one tangent), with the
/// empty set, or with a set one of them is already the union of
/// (`(a + b) + a`, as in `x[i-1] - 2 x[i] + x[i+1] + h exp(x[i])`).
fn absorbed(
    func: &Function,
    parts: &BTreeMap<Value, BTreeSet<Value>>,
    a: Value,
    b: Value,
) -> Option<Value> {
    let part = |u: Value, v: Value| u == v || parts.get(&u).is_some_and(|p| p.contains(&v));
    // A choice between the empty set and `t` is within `t`.
    let holds = |u: Value, v: Value| {
        part(u, v) || chosen(func, v).is_some_and(|t| part(u, t) || is_zero(func, t))
    };
    if holds(a, b) || is_zero(func, b) {
        Some(a)
    } else if holds(b, a) || is_zero(func, a) {
        Some(b)
    } else {
        None
    }
}

/// `t` when `v` is a choice between the empty set and `t`.
fn chosen(func: &Function, v: Value) -> Option<Value> {
    let adc_ir::ValueDef::Result(i, _) = func.dfg.value_def(v) else {
        return None;
    };
    match func.dfg.inst(i) {
        InstData::Select { args: [a, b], .. } if is_zero(func, *a) => Some(*b),
        InstData::Select { args: [a, b], .. } if is_zero(func, *b) => Some(*a),
        _ => None,
    }
}

/// The parts of the union of `a` and `b`, at most [`MAX_PARTS`].
pub(super) fn union_parts(
    parts: &BTreeMap<Value, BTreeSet<Value>>,
    a: Value,
    b: Value,
) -> BTreeSet<Value> {
    let mut p: BTreeSet<Value> = [a, b].into();
    for v in [a, b] {
        for &w in parts.get(&v).into_iter().flatten() {
            if p.len() < MAX_PARTS {
                p.insert(w);
            }
        }
    }
    p
}

/// Whether `name` is an internal dependency sweep, `__adc_fwdMASKs_NAME`,
/// `__adc_fwdMASKm_NAME` or `__adc_fwdMASKh_NAME` (called only from other sweeps, never from
/// user code).
fn is_internal_sweep(name: &str) -> bool {
    name.strip_prefix("__adc_fwd")
        .and_then(|rest| rest.split_once('_'))
        .and_then(|(mask, _)| mask.strip_suffix(['s', 'm', 'h']))
        .is_some_and(|mask| mask.chars().all(|c| c == 'c' || c == 'd'))
}

/// After every derivative is generated: the float results of internal
/// sweeps that no call reads become zero (an empty set), and set unions
/// whose handle nothing observable needs go. A caller that discards a
/// callee's result (a sum over all inputs, whose set grows one union per
/// term) then pays nothing for it: without this, quadratic in the number
/// of inputs. Repeated while a caller's pruning
/// leaves results of its own callees unread.
///
/// Assumes: `run` rewrote every sweep. Guarantees: each sweep's handles
/// that reach a store, a branch, a call other than a union or a read
/// result are unchanged; the sets they stand for too.
pub fn prune(module: &mut Module) {
    let Some(union) = module.find(UNION) else {
        return;
    };
    for _ in 0..8 {
        let mut used: BTreeMap<FuncId, Vec<bool>> = module
            .func_ids()
            .filter(|&id| is_internal_sweep(&module.func(id).name))
            .map(|id| (id, vec![false; module.func(id).returns.len()]))
            .collect();
        for f in module.funcs.iter().filter(|f| !f.layout.is_empty()) {
            let counts = crate::defs::use_counts(f);
            for &b in &f.layout {
                for &i in &f.dfg.block(b).insts {
                    let InstData::Call { func: callee, .. } = f.dfg.inst(i) else {
                        continue;
                    };
                    if let Some(u) = used.get_mut(callee) {
                        for (k, r) in f.dfg.inst_results(i).iter().enumerate() {
                            u[k] |= counts[r.index()] > 0;
                        }
                    }
                }
            }
        }
        let mut changed = false;
        for (id, u) in &used {
            changed |= zero_unread_returns(module.func_mut(*id), u);
        }
        if !changed {
            return;
        }
        for f in module.funcs.iter_mut().filter(|f| !f.layout.is_empty()) {
            drop_dead_unions(f, union);
        }
    }
}

/// Returns a zero in place of each float result not `used`; whether it
/// changed any.
fn zero_unread_returns(func: &mut Function, used: &[bool]) -> bool {
    let mut changed = false;
    for b in func.layout.clone() {
        let Some(term) = func.terminator(b) else {
            continue;
        };
        let InstData::Return { args } = func.dfg.inst(term).clone() else {
            continue;
        };
        let mut args = args;
        for (k, a) in args.iter_mut().enumerate() {
            let float = func.dfg.value_type(*a) == Type::F64;
            if used.get(k).copied().unwrap_or(true) || !float || is_zero(func, *a) {
                continue;
            }
            let zero = InstData::Const {
                value: Constant::F64(0.0),
            };
            let c = func.dfg.make_inst(zero, &[Type::F64]);
            func.set_tag(c, Tag::Diff);
            func.set_span(c, func.span(term));
            let insts = &mut func.dfg.block_mut(b).insts;
            insts.insert(insts.len() - 1, c);
            *a = func.dfg.inst_results(c)[0];
            changed = true;
        }
        *func.dfg.inst_mut(term) = InstData::Return { args };
    }
    changed
}

/// Removes the unions of `func` whose handles nothing observable needs:
/// each becomes a pure stand-in (an `add` of its two handles) for
/// `opt::dce`, which removes the dead ones (a loop-carried chain too);
/// the live ones become unions again.
pub(super) fn drop_dead_unions(func: &mut Function, union: FuncId) {
    let mut stand_ins = BTreeMap::new();
    for &b in &func.layout {
        for &i in &func.dfg.block(b).insts {
            if let InstData::Call { func: f, args } = func.dfg.inst(i) {
                if *f == union {
                    stand_ins.insert(i, args.clone());
                }
            }
        }
    }
    if stand_ins.is_empty() {
        return;
    }
    for (&i, args) in &stand_ins {
        *func.dfg.inst_mut(i) = InstData::Binary {
            op: BinaryOp::Add,
            args: [args[1], args[2]],
        };
    }
    crate::opt::dce::run(func);
    // `dce` took the `grow` flags, which only the calls used: made again.
    for (i, args) in stand_ins {
        let args = args[..3].to_vec();
        *func.dfg.inst_mut(i) = InstData::Call { func: union, args };
    }
    mark_growable(func, union);
}
