//! `widen`: vector mode (`width = W`). Carries `W` derivative directions
//! over one run of the primal code.
//!
//! Assumes: `lower-pairs`' output for a request whose spec is `vector`
//! (`width = W` given, `W` from 1; `propagate` keeps such a spec): a
//! width-1 forward-mode derivative whose instructions `propagate` classified.
//! Guarantees (check with `adc ir --after widen`): the function has the
//! signature of docs/jacobians.md#vector-mode. Its primal instructions
//! are the input's, once each, so the primal runs once. Every differential
//! value, differential instruction and block parameter that carries a
//! tangent stands `W` times, one lane per direction, in lane order (the
//! vector differential type, spelled out lane by lane). Shadows too: a
//! tangent parameter of `W` directions is split into `W` views (scalars:
//! `W` loads), after `lencheck` of its length; a local shadow is one
//! array of `W` times the elements, split the same way. A call of a
//! callee's derivative calls its vector-mode derivative
//! (`__adc_fwdMASKxW_NAME`, which `linearize` declared along with the
//! caller, `declare_callees`) once, with the lanes of scalar tangents
//! gathered into an array of `W` (and scattered back for references). A
//! custom forward derivative that only reads its arguments is called once
//! per lane. The tangents of the result go to the `t_ret` arrays.
//! A reverse request stays in forward form (its spec kept) for `unzip` and
//! `transpose`: an `Active` scalar's tangent is the array its `W`
//! gradients go to (zeroed at entry; `transpose` turns the loads of its
//! lanes into accumulations), and the result's `W` tangent lanes are
//! returned after the primal results, which `transpose` seeds from the
//! `seed` array.
//! Lanes stay scalar values here; codegen runs two adjacent lanes of one
//! operation as one `f64x2` operation (`translate/simd/lanes.rs`).
//!
//! Not carried in lanes: arrays on the tape (vector mode over a reverse
//! derivative's tape of arrays), custom forward derivatives of functions
//! that write through their parameters, calls that stay calls in reverse
//! mode. A request with those runs a width-1 derivative once per
//! direction instead (`lanes.rs`).

mod build;
mod lanes;
mod shadows;

use crate::ad::{jvp_source, AdError, AdErrorKind};
use adc_ir::{AdMode, FuncId, InstData, Module};

pub(crate) use shadows::callee_spec;

/// Widens the function `id` if its request is vector mode. Where
/// lanes cannot be carried, `id` calls a width-1 derivative once per
/// direction (`lanes.rs`); a reverse one is a new request, returned, for
/// `unzip` and `transpose`.
pub fn run(module: &mut Module, id: FuncId) -> Result<Option<FuncId>, AdError> {
    let func = module.func(id);
    let Some(spec) = func.deriv.clone().filter(|s| s.vector) else {
        return Ok(None);
    };
    let mut more = None;
    match build::widen(module, id, &spec) {
        Ok(out) => *module.func_mut(id) = out,
        Err(e) if e.kind == AdErrorKind::Unsupported && spec.mode == AdMode::Forward => {
            lanes::lanes(module, id, &spec)?
        }
        Err(e) if e.kind == AdErrorKind::Unsupported => {
            more = Some(lanes::reverse_lanes(module, id, &spec)?)
        }
        Err(e) => return Err(e),
    }
    if cfg!(debug_assertions) {
        if let Err(e) = adc_ir::verify(module) {
            return Err(AdError::internal(
                format!("internal error: `widen` left IR that does not verify:\n{e}"),
                module.func(id).deriv_span,
            ));
        }
    }
    Ok(more)
}

/// The name of the vector-mode derivative of width `width` standing for a
/// width-1 derivative with `spec`: `__adc_fwdMASKxW_NAME` (MASK a `d` or
/// `c` per parameter).
fn vector_name(spec: &adc_ir::DerivSpec, width: u32) -> String {
    let mask: String = spec
        .params
        .iter()
        .map(|a| if a.is_active() { 'd' } else { 'c' })
        .collect();
    format!("__adc_fwd{mask}x{width}_{}", spec.of)
}

/// The vector-mode derivative a call of `callee` (a width-1 derivative)
/// becomes in a derivative of width `width`, if declared.
pub(crate) fn vector_callee(module: &Module, callee: FuncId, width: u32) -> Option<FuncId> {
    let spec = callee_spec(module, callee)?;
    module.find(&vector_name(&spec, width))
}

/// After `linearize` generated `id`: when it is vector mode, declares
/// the vector-mode derivative of every callee derivative it calls, so that
/// `linearize` generates them in the same run.
pub fn declare_callees(module: &mut Module, id: FuncId) {
    let func = module.func(id);
    let Some(width) = func
        .deriv
        .as_ref()
        .filter(|s| s.mode == AdMode::Forward)
        .filter(|s| s.vector)
        .map(|s| s.width)
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
        let name = vector_name(&spec, width);
        let spec = adc_ir::DerivSpec {
            width,
            vector: true,
            ..spec
        };
        crate::ad::declare(module, src, name, spec, span);
    }
}
