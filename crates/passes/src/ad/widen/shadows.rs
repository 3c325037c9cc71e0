//! Which values of a linearized function are shadows (primal pointers to
//! differential memory), and which shadows `widen` keeps whole.

use crate::ad::jvp_source;
use adc_ir::ad::{default_spec, forward_param_layout, linearized_activities};
use adc_ir::{AdMode, DerivSpec, FuncId, Function, InstData, Module, Tag, Type};

/// The spec of a derivative that calls reach: its own while it has one
/// (`propagate` drops it from finished forward derivatives), else read off
/// the internal name (`__adc_jvp_g`: default activities;
/// `__adc_fwdMASK_g`: `Dual` where MASK has `d`).
pub(crate) fn callee_spec(module: &Module, callee: FuncId) -> Option<DerivSpec> {
    let c = module.func(callee);
    if let Some(spec) = &c.deriv {
        return Some(spec.clone());
    }
    let src = jvp_source(module, callee)?;
    let mut spec = default_spec(module.func(src), AdMode::Forward);
    if let Some((mask, _)) = c
        .name
        .strip_prefix("__adc_fwd")
        .and_then(|rest| rest.split_once('_'))
    {
        // `x` starts a vector width; a dependency sweep's mask ends in `s`.
        let mask = mask.split('x').next().unwrap_or("").trim_end_matches('s');
        if mask.len() != spec.params.len() {
            return None;
        }
        for (a, m) in spec.params.iter_mut().zip(mask.chars()) {
            if m == 'c' {
                *a = adc_ir::Activity::Const;
            }
        }
    }
    Some(spec)
}

/// For each argument of a call of `callee` from derivative code: whether
/// it is a tangent (or shadow). `None` for a callee that takes none.
pub(crate) fn tangent_positions(module: &Module, callee: FuncId) -> Option<Vec<bool>> {
    let (src, acts) = match callee_spec(module, callee) {
        Some(spec) => {
            let src = module.find(&spec.of)?;
            (src, linearized_activities(&spec).0)
        }
        // A custom forward derivative `H` of `f`: `f`'s default layout.
        None => {
            let name = &module.func(callee).name;
            let f = module
                .func_ids()
                .find(|id| module.func(*id).custom_forward.as_ref() == Some(name))?;
            (f, default_spec(module.func(f), AdMode::Forward).params)
        }
    };
    Some(
        forward_param_layout(module.func(src), &acts)
            .into_iter()
            .map(|(_, t)| t)
            .collect(),
    )
}

/// Whether each value of `func` (`lower-pairs`' output for `spec`) is a
/// shadow: the array and reference tangent parameters, what differential
/// loads, stores and frees go through, the tangent arguments of derivative
/// calls that are arrays or references; then, both ways until nothing
/// changes, views, copies and element references of shadows and what they
/// are taken of, and block parameters and the arguments passed to them.
pub(crate) fn shadows(
    module: &Module,
    func: &Function,
    src: &Function,
    spec: &DerivSpec,
) -> Vec<bool> {
    let n = func.dfg.num_values();
    let mut s = vec![false; n];
    let by_ref = |v: adc_ir::Value| !matches!(func.dfg.value_type(v), Type::Scalar(_));
    if let Some(entry) = func.entry_block() {
        let (acts, _) = linearized_activities(spec);
        for (&v, (_, t)) in func
            .dfg
            .block_params(entry)
            .iter()
            .zip(forward_param_layout(src, &acts))
        {
            s[v.index()] = t && by_ref(v);
        }
    }
    // (result, operand) of views, copies and element references.
    let mut links = Vec::new();
    for &b in &func.layout {
        for &i in &func.dfg.block(b).insts {
            let data = func.dfg.inst(i);
            match (func.tag(i), data) {
                (
                    Tag::Diff,
                    InstData::Load { array: a, .. }
                    | InstData::Store { array: a, .. }
                    | InstData::ArrayFree { array: a }
                    | InstData::DeferFree { array: a }
                    | InstData::RefLoad { ptr: a }
                    | InstData::RefStore { ptr: a, .. },
                ) => s[a.index()] = true,
                (Tag::Diff | Tag::Mixed, InstData::Call { func: callee, args }) => {
                    if let Some(pos) = tangent_positions(module, *callee) {
                        for (a, t) in args.iter().zip(pos) {
                            if t && by_ref(*a) {
                                s[a.index()] = true;
                            }
                        }
                    }
                }
                (
                    Tag::Primal,
                    InstData::ArrayView { array, .. }
                    | InstData::ArrayCopy { array }
                    | InstData::ElemRef { array, .. },
                ) => links.push((func.dfg.inst_results(i)[0], *array)),
                _ => (),
            }
            for call in data.successors() {
                for (&p, &a) in func.dfg.block_params(call.block).iter().zip(&call.args) {
                    links.push((p, a));
                }
            }
        }
    }
    loop {
        let mut changed = false;
        for &(x, y) in &links {
            if s[x.index()] != s[y.index()] && by_ref(x) {
                s[x.index()] = true;
                s[y.index()] = true;
                changed = true;
            }
        }
        if !changed {
            return s;
        }
    }
}

/// Whether each shadow array is kept whole: its `W` directions are views
/// of one array of `W` times its length (a parameter, a `new` or `null`, a
/// copy of a whole one, or a block parameter that only whole ones reach),
/// which a call of a vector-mode derivative can take as it is.
pub(crate) fn whole(func: &Function, shadow: &[bool]) -> Vec<bool> {
    let n = func.dfg.num_values();
    let mut w = vec![false; n];
    let array = |v: adc_ir::Value| matches!(func.dfg.value_type(v), Type::Array(_));
    if let Some(entry) = func.entry_block() {
        for &v in func.dfg.block_params(entry) {
            w[v.index()] = shadow[v.index()] && array(v);
        }
    }
    let mut edges = Vec::new();
    let mut copies = Vec::new();
    for &b in &func.layout {
        if Some(b) != func.entry_block() {
            for &p in func.dfg.block_params(b) {
                w[p.index()] = shadow[p.index()] && array(p);
            }
        }
        for &i in &func.dfg.block(b).insts {
            let data = func.dfg.inst(i);
            if let Some(&r) = func.dfg.inst_results(i).first() {
                if shadow[r.index()] {
                    match data {
                        InstData::ArrayNew { .. } | InstData::ArrayNull => w[r.index()] = true,
                        InstData::ArrayCopy { array } => copies.push((r, *array)),
                        _ => (),
                    }
                }
            }
            for call in data.successors() {
                for (&p, &a) in func.dfg.block_params(call.block).iter().zip(&call.args) {
                    edges.push((p, a));
                }
            }
        }
    }
    for &(r, a) in &copies {
        w[r.index()] = true;
        edges.push((r, a));
    }
    // The greatest fixpoint: a parameter (or copy) stays whole while all
    // that reaches it is.
    loop {
        let mut changed = false;
        for &(p, a) in &edges {
            if w[p.index()] && !w[a.index()] {
                w[p.index()] = false;
                changed = true;
            }
        }
        if !changed {
            return w;
        }
    }
}
