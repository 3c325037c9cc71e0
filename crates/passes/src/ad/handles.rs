//! `handles`: the `float` tangents of a dependency sweep (`ad::sets`,
//! docs/jacobians.md#sparse-jacobians) made `f64` set handles.
//!
//! A handle is an integer (an arena offset, or `-(c + 1)` for the set
//! `{c}`) that an `f32` holds exactly only up to 2^24; so in the sweep of
//! a function computing in `float` every tangent, and every shadow of a
//! `float` array or reference, becomes `f64`, while the primal values
//! keep their types (the sweep takes the branches `F` takes). Loads,
//! stores, choices, block parameters and the tape then move handles as in
//! a `double` function; a tangent's conversion between `float` and
//! `double` is the handle itself (`sets`).
//!
//! Assumes: `sets`' input, before its arena parameter: a width-1 forward
//! derivative whose differential scalars `diff_values` gives.
//! Guarantees: the signature is `adc_ir::ad::sets_signature`'s; every
//! differential scalar and every shadow (a tangent parameter, an array or
//! reference a differential instruction reads, writes or frees, or that
//! is passed as a callee's tangent, and what views, copies, chooses or
//! carries one as a block argument) has `f64` elements in place of `f32`
//! ones; a zero constant or null array left in a handle's place is
//! replaced by an `f64` one made in the entry block. Any other `f32`
//! operand in a handle's place is an error (E0401), never a wrong set.

use crate::ad::widen::callee_spec;
use crate::ad::{diff_values, jvp_source, AdError};
use adc_ir::{Constant, Function, Inst, InstData, Module, ScalarType, Tag, Type, Value, ValueDef};
use std::collections::BTreeMap;

/// Widens `func`'s handles (see the module doc); does nothing to a
/// function without `float` tangents.
pub fn widen(module: &Module, func: &mut Function) -> Result<(), AdError> {
    let Some(spec) = func.deriv.clone() else {
        return Ok(());
    };
    let Some(src) = module.find(&spec.of) else {
        return Ok(());
    };
    // The signature of `adc_ir::ad::sets_signature`, in place.
    let mut params = func.params.clone();
    for (p, t) in params.iter_mut().zip(tangent_positions(module, func)) {
        if t {
            p.ty = p.ty.with_elem_f64();
        }
    }
    let mut returns = func.returns.clone();
    let floats = module
        .func(src)
        .returns
        .iter()
        .filter(|t| t.elem().is_float());
    if spec.ret != adc_ir::Activity::Const {
        let first = returns.len().saturating_sub(floats.count());
        returns[first..]
            .iter_mut()
            .for_each(|t| *t = t.with_elem_f64());
    }
    if params == func.params && returns == func.returns && !has_f32_diff(module, func) {
        return Ok(());
    }
    let diff = diff_values(module, func);
    let shadow = shadows(module, func);
    for v in 0..func.dfg.num_values() {
        let value = Value::new(v);
        let ty = func.dfg.value_type(value);
        let scalar = matches!(ty, Type::Scalar(_)) && diff[v];
        if ty.elem() == ScalarType::F32 && (scalar || shadow[v]) {
            func.dfg.set_value_type(value, ty.with_elem_f64());
        }
    }
    for b in func.layout.clone() {
        for i in func.dfg.block(b).insts.clone() {
            if let InstData::Const {
                value: Constant::F32(x),
            } = *func.dfg.inst(i)
            {
                if func
                    .dfg
                    .inst_results(i)
                    .first()
                    .is_some_and(|r| diff[r.index()])
                {
                    *func.dfg.inst_mut(i) = InstData::Const {
                        value: Constant::F64(f64::from(x)),
                    };
                }
            }
        }
    }
    func.params = params;
    func.returns = returns;
    fix_operands(module, func)
}

/// Whether some differential scalar of `func` is `f32`.
fn has_f32_diff(module: &Module, func: &Function) -> bool {
    diff_values(module, func)
        .iter()
        .enumerate()
        .any(|(v, &d)| d && func.dfg.value_type(Value::new(v)) == Type::F32)
}

/// Union-find root of `v`.
fn root(parent: &mut [usize], mut v: usize) -> usize {
    while parent[v] != v {
        parent[v] = parent[parent[v]];
        v = parent[v];
    }
    v
}

/// Which values are shadows of `float` arrays or references: the seeds
/// (tangent parameters, what differential instructions access, callees'
/// tangent arguments) and every value joined to one of them, both ways:
/// a view, element reference or copy and what it is of, a choice and
/// its operands, a block parameter and its arguments. Null arrays are
/// left out ([`fix_operands`] copies them where needed).
fn shadows(module: &Module, func: &Function) -> Vec<bool> {
    let n = func.dfg.num_values();
    let candidate = |v: Value| {
        matches!(
            func.dfg.value_type(v),
            Type::Array(ScalarType::F32) | Type::Ref(ScalarType::F32)
        ) && !matches!(func.dfg.value_def(v), ValueDef::Result(i, _)
            if matches!(func.dfg.inst(i), InstData::ArrayNull))
    };
    let mut parent: Vec<usize> = (0..n).collect();
    let mut seeds = Vec::new();
    let tangent_params = func.params.iter().zip(tangent_positions(module, func));
    if let Some(entry) = func.entry_block() {
        for ((_, t), &v) in tangent_params.zip(func.dfg.block_params(entry)) {
            if t {
                seeds.push(v);
            }
        }
    }
    let mut edges = Vec::new();
    for &b in &func.layout {
        for &i in &func.dfg.block(b).insts {
            let data = func.dfg.inst(i);
            let results = func.dfg.inst_results(i);
            match (func.tag(i), data) {
                (
                    Tag::Diff,
                    InstData::Load { array, .. }
                    | InstData::Store { array, .. }
                    | InstData::ArrayFree { array }
                    | InstData::DeferFree { array },
                ) => seeds.push(*array),
                (Tag::Diff, InstData::CopyRange { dst, src, .. }) => seeds.extend([*dst, *src]),
                (Tag::Diff, InstData::RefLoad { ptr } | InstData::RefStore { ptr, .. }) => {
                    seeds.push(*ptr)
                }
                (
                    _,
                    InstData::ArrayView { array, .. }
                    | InstData::ElemRef { array, .. }
                    | InstData::ArrayCopy { array },
                ) => edges.push((*array, results[0])),
                (_, InstData::Select { args, .. }) => {
                    edges.extend(args.iter().map(|&a| (a, results[0])))
                }
                (Tag::Mixed, InstData::Call { func: callee, args }) => {
                    if let Some(types) = callee_params(module, *callee) {
                        let tangents = types.iter().zip(args).filter(|(t, _)| t.1);
                        seeds.extend(tangents.map(|(_, &a)| a));
                    }
                }
                _ => (),
            }
            for call in data.successor_calls() {
                let params = func.dfg.block_params(call.block);
                edges.extend(call.args.iter().copied().zip(params.iter().copied()));
            }
        }
    }
    for (a, b) in edges {
        if candidate(a) && candidate(b) {
            let (ra, rb) = (root(&mut parent, a.index()), root(&mut parent, b.index()));
            parent[ra] = rb;
        }
    }
    let mut marked = vec![false; n];
    for s in seeds.into_iter().filter(|&s| candidate(s)) {
        let r = root(&mut parent, s.index());
        marked[r] = true;
    }
    (0..n)
        .map(|v| candidate(Value::new(v)) && marked[root(&mut parent, v)])
        .collect()
}

/// Whether each parameter of `func` (a forward derivative) is a tangent.
fn tangent_positions(module: &Module, func: &Function) -> Vec<bool> {
    let Some(spec) = &func.deriv else {
        return Vec::new();
    };
    let Some(src) = module.find(&spec.of) else {
        return Vec::new();
    };
    let (acts, _) = adc_ir::ad::linearized_activities(spec);
    adc_ir::ad::forward_param_layout(module.func(src), &acts)
        .into_iter()
        .map(|(_, t)| t)
        .collect()
}

/// The parameter types of the sweep a call of `callee` (a forward
/// derivative) becomes, each with whether it is a tangent; `None` for
/// any other callee.
fn callee_params(module: &Module, callee: adc_ir::FuncId) -> Option<Vec<(Type, bool)>> {
    let src = jvp_source(module, callee)?;
    let spec = callee_spec(module, callee)?;
    let (params, _) = adc_ir::ad::sets_signature(module.func(src), &spec);
    let layout = adc_ir::ad::forward_param_layout(module.func(src), &spec.params);
    Some(
        params
            .iter()
            .zip(layout)
            .map(|(p, (_, t))| (p.ty, t))
            .collect(),
    )
}

/// The type each operand of `i` (in `InstData::args` order) must have
/// where a handle or shadow may go; `None` where any type goes.
fn expected(module: &Module, func: &Function, i: Inst) -> Vec<Option<Type>> {
    let data = func.dfg.inst(i);
    let ty = |v: Value| func.dfg.value_type(v);
    let result = || ty(func.dfg.inst_results(i)[0]);
    let scalar = |t: Type| Some(Type::Scalar(t.elem()));
    let mut out = match data {
        InstData::Select { .. } => vec![None, Some(result()), Some(result())],
        InstData::Load { .. } => vec![Some(Type::Array(result().elem())), None],
        InstData::RefLoad { .. } => vec![Some(Type::Ref(result().elem()))],
        InstData::Store { array, .. } => vec![None, None, scalar(ty(*array))],
        InstData::RefStore { ptr, .. } => vec![None, scalar(ty(*ptr))],
        InstData::CopyRange { dst, .. } => vec![None, None, Some(ty(*dst)), None, None],
        InstData::Return { .. } => func.returns.iter().map(|&t| Some(t)).collect(),
        InstData::TapePush { value, .. } if func.tag(i) == Tag::Diff => {
            vec![Some(ty(*value).with_elem_f64())]
        }
        InstData::Call { func: callee, .. } if func.tag(i) == Tag::Mixed => {
            callee_params(module, *callee)
                .map(|ps| ps.into_iter().map(|(t, _)| Some(t)).collect())
                .unwrap_or_default()
        }
        InstData::Call { args, .. } if func.tag(i) == Tag::Diff => {
            // A marker of interactions: its two tangents.
            args.iter()
                .take(2)
                .map(|&a| Some(ty(a).with_elem_f64()))
                .collect()
        }
        InstData::Branch { .. } => vec![None],
        _ => Vec::new(),
    };
    for call in data.successor_calls() {
        let params = func.dfg.block_params(call.block);
        out.extend(params.iter().map(|&p| Some(ty(p))));
    }
    out
}

/// Replaces each `f32` zero constant or null array in a place
/// [`expected`] gives an `f64` type by an `f64` one; any other mismatch
/// is an error.
fn fix_operands(module: &Module, func: &mut Function) -> Result<(), AdError> {
    let mut made: BTreeMap<String, Value> = BTreeMap::new();
    for b in func.layout.clone() {
        for i in func.dfg.block(b).insts.clone() {
            let want = expected(module, func, i);
            let args = func.dfg.inst(i).args();
            let mut new = args.clone();
            for (k, (&a, w)) in args.iter().zip(&want).enumerate() {
                let Some(w) = *w else { continue };
                let have = func.dfg.value_type(a);
                // Only types that differ in their floats' width.
                if have == w || have.with_elem_f64() != w.with_elem_f64() {
                    continue;
                }
                let fixed = (w == have.with_elem_f64())
                    .then(|| replacement(func, a, w, &mut made))
                    .flatten();
                new[k] = fixed.ok_or_else(|| {
                    AdError::new(
                        "a sparse Jacobian's dependency sweep cannot yet handle this `float` value as a set",
                        func.span(i),
                    )
                })?;
            }
            if new != args {
                let mut it = new.into_iter();
                // Invariant: `new` has one value per operand, as `args`.
                func.dfg.inst_mut(i).map_args(|v| it.next().unwrap_or(v));
            }
        }
    }
    Ok(())
}

/// An `f64` copy of `a`, of type `w`, when `a` is a float zero constant
/// or a null array (one per type, made at the entry block's start).
fn replacement(
    func: &mut Function,
    a: Value,
    w: Type,
    made: &mut BTreeMap<String, Value>,
) -> Option<Value> {
    let ValueDef::Result(d, _) = func.dfg.value_def(a) else {
        return None;
    };
    let data = match func.dfg.inst(d) {
        InstData::Const {
            value: Constant::F32(x),
        } if *x == 0.0 && w == Type::F64 => InstData::Const {
            value: Constant::F64(0.0),
        },
        InstData::ArrayNull => InstData::ArrayNull,
        _ => return None,
    };
    if let Some(&v) = made.get(&w.to_string()) {
        return Some(v);
    }
    let entry = func.entry_block()?;
    let c = func.dfg.make_inst(data, &[w]);
    let tag = if w == Type::F64 {
        Tag::Diff
    } else {
        Tag::Primal
    };
    func.set_tag(c, tag);
    func.set_span(c, func.span(d));
    func.dfg.block_mut(entry).insts.insert(0, c);
    let v = func.dfg.inst_results(c)[0];
    made.insert(w.to_string(), v);
    Some(v)
}
