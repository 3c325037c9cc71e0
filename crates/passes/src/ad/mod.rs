//! The derivative passes (one module each, in pipeline order: `linearize`
//! (which runs `opt::inline` on its source first), `propagate`,
//! `lower_pairs` (`lower-pairs`), `unzip`, `transpose`; `split` is split
//! mode) and what they share: their error type, the internal derivatives of
//! callees, and the driver that runs them in rounds. They may use `opt`; `opt` never uses them.

pub mod band;
pub mod copies;
pub mod handles;
pub mod interactions;
pub mod linearize;
pub mod lower_pairs;
pub mod masks;
pub mod outline;
pub mod propagate;
pub(crate) mod scratch;
pub mod sets;
pub mod split;
pub mod transpose;
pub mod unzip;
pub mod widen;

use adc_ir::ad::{default_spec, spec_signature};
use adc_ir::{Activity, AdMode, FuncId, Function, Linkage, Module, Span};
use std::fmt;

/// Why a derivative was not generated, with the source span to blame.
#[derive(Clone, Debug, PartialEq)]
pub struct AdError {
    pub kind: AdErrorKind,
    pub message: String,
    pub span: Span,
}

/// What an [`AdError`] is: the user's program asks for a derivative adc
/// cannot generate (E0401), or a pass found its input broken (a compiler
/// bug, E0999).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AdErrorKind {
    Unsupported,
    Internal,
}

impl AdError {
    /// A derivative adc cannot generate for this program.
    pub fn new(message: impl Into<String>, span: Span) -> AdError {
        AdError {
            kind: AdErrorKind::Unsupported,
            message: message.into(),
            span,
        }
    }

    /// A compiler bug: what a pass assumes of its input does not hold.
    pub fn internal(message: impl Into<String>, span: Span) -> AdError {
        AdError {
            kind: AdErrorKind::Internal,
            message: message.into(),
            span,
        }
    }
}

impl fmt::Display for AdError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for AdError {}

/// Name of the internal derivative of `name` that callers' derivatives call.
pub fn internal_name(name: &str, mode: AdMode) -> String {
    match mode {
        AdMode::Forward => format!("__adc_jvp_{name}"),
        AdMode::Reverse => format!("__adc_vjp_{name}"),
    }
}

/// A custom derivative generated from the function it stands for would
/// call itself forever (`[autodiff_reverse(df, ..)] [reverse_derivative(df)]
/// double f(..)`): E0401 at the attribute that generates it.
fn custom_derivatives_not_self_generated(module: &Module) -> Result<(), AdError> {
    for f in &module.funcs {
        for g in [&f.custom_reverse, &f.custom_forward].into_iter().flatten() {
            let Some(d) = module.find(g).map(|id| module.func(id)) else {
                continue;
            };
            if d.deriv.as_ref().is_some_and(|spec| spec.of == f.name) {
                return Err(AdError::new(
                    format!(
                        "`{g}` is generated from `{}` and is also its custom derivative, so it would call itself forever: write the custom derivative by hand, or drop the attribute",
                        f.name
                    ),
                    d.deriv_span,
                ));
            }
        }
    }
    Ok(())
}

/// The function a derivative calls for `callee` in `mode`: its custom
/// reverse derivative, or the internal derivative with default activities
/// (`Dual` returns in forward mode, `ActiveOnly` in reverse mode), declared
/// now if new. A new declaration has no body until `linearize` makes one.
pub fn derivative_of(
    module: &mut Module,
    callee: FuncId,
    mode: AdMode,
    span: Span,
) -> Result<FuncId, AdError> {
    let c = module.func(callee);
    if mode == AdMode::Reverse {
        if let Some(g) = &c.custom_reverse {
            return module
                .find(g)
                .ok_or_else(|| AdError::new(format!("custom derivative `{g}` not found"), span));
        }
        if c.is_import() {
            return Err(AdError::new(
                format!(
                    "cannot differentiate through `extern {}` in reverse mode: give it a `[reverse_derivative(...)]`",
                    c.name
                ),
                span,
            ));
        }
    }
    let spec = default_spec(c, mode);
    Ok(declare(
        module,
        callee,
        internal_name(&c.name, mode),
        spec,
        span,
    ))
}

/// The derivative `name` of `callee` with `spec`: found, or declared (no
/// body until `linearize` makes one).
pub(crate) fn declare(
    module: &mut Module,
    callee: FuncId,
    name: String,
    spec: adc_ir::DerivSpec,
    span: Span,
) -> FuncId {
    if let Some(id) = module.find(&name) {
        return id;
    }
    let (params, returns) = spec_signature(module.func(callee), &spec);
    let mut f = Function::new(name, params, returns, Linkage::Export);
    f.deriv = Some(spec);
    f.deriv_span = span;
    module.push(f)
}

/// The forward derivative of `callee` with the given parameter
/// activities (`Dual` or `Const`, one per parameter; the result's is the
/// default): the internal `__adc_jvp_NAME` when they are the defaults,
/// else `__adc_fwdMASK_NAME`, MASK a `d`/`c` per parameter (a call site
/// whose arguments have no tangent need not pass zeros, and the callee
/// computes no derivative from them). Declared now if new.
pub fn forward_derivative_with(
    module: &mut Module,
    callee: FuncId,
    params: Vec<Activity>,
    span: Span,
) -> Result<FuncId, AdError> {
    let c = module.func(callee);
    let mut spec = default_spec(c, AdMode::Forward);
    if spec.params == params {
        return derivative_of(module, callee, AdMode::Forward, span);
    }
    let mask: String = params
        .iter()
        .map(|a| if a.is_active() { 'd' } else { 'c' })
        .collect();
    let name = format!("__adc_fwd{mask}_{}", c.name);
    spec.params = params;
    Ok(declare(module, callee, name, spec, span))
}

/// The IR function `@__adc_digamma(f64) -> f64` (the derivative of
/// `lgamma`), added to the module the first time a derivative needs it. It is
/// an ordinary function with a loop, so its own derivatives (for higher
/// orders) are generated like any other callee's.
pub fn digamma_function(module: &mut Module) -> FuncId {
    helper_function(module, "__adc_digamma", include_str!("digamma.adir"))
}

/// The function `name` of the module, added from `text` (IR defining it
/// alone) the first time a pass needs it.
pub(crate) fn helper_function(module: &mut Module, name: &str, text: &str) -> FuncId {
    if let Some(id) = module.find(name) {
        return id;
    }
    let parsed = adc_ir::parse_module(text).expect(
        "invariant: the derivative passes' helpers are valid IR (tested by ad_helpers_parse)",
    );
    let func = parsed
        .funcs
        .into_iter()
        .next()
        .expect("invariant: a helper's IR defines one function");
    module.push(func)
}

/// A derivative the program asks for, of an `extern` or of a function with
/// a custom derivative of its mode, differentiates `__adc_wrap_NAME`, a
/// function that only calls `NAME`: the call goes through the custom
/// derivative (docs/derivatives.md#custom-derivatives: "use G instead of differentiating its body"), also
/// when `NAME` itself is the function differentiated, and an extern without
/// one gets E0401 like any call to it.
fn route_to_wrappers(module: &mut Module) {
    use adc_ir::InstData;
    for id in module.func_ids().collect::<Vec<_>>() {
        let f = module.func(id);
        let Some(spec) = f.deriv.as_ref().filter(|_| f.layout.is_empty()) else {
            continue;
        };
        // The derivatives calls need (`derivative_of`, `forward_derivative_with`;
        // of an extern, a stub the custom derivative replaces) are not requests.
        if ["__adc_jvp_", "__adc_vjp_", "__adc_fwd", "__adc_lin_"]
            .iter()
            .any(|p| f.name.starts_with(p))
        {
            continue;
        }
        let Some(src) = module.find(&spec.of) else {
            continue;
        };
        let s = module.func(src);
        let custom = match spec.mode {
            AdMode::Reverse => s.custom_reverse.is_some(),
            AdMode::Forward => s.custom_forward.is_some(),
        };
        if !custom && !s.is_import() {
            continue;
        }
        let (span, wrapper) = (f.deriv_span, format!("__adc_wrap_{}", s.name));
        if module.find(&wrapper).is_none() {
            let (params, returns) = (s.params.clone(), s.returns.clone());
            let mut w = Function::new(
                wrapper.clone(),
                params.clone(),
                returns.clone(),
                Linkage::Static,
            );
            let entry = w.dfg.make_block();
            w.layout.push(entry);
            let args = params
                .iter()
                .map(|p| w.dfg.append_block_param(entry, p.ty))
                .collect();
            let call = w.append_inst(entry, InstData::Call { func: src, args }, &returns, span);
            let results = w.dfg.inst_results(call).to_vec();
            w.append_inst(entry, InstData::Return { args: results }, &[], span);
            module.push(w);
        }
        if let Some(spec) = module.func_mut(id).deriv.as_mut() {
            spec.of = wrapper;
        }
    }
}

/// Functions still waiting for `linearize`.
pub fn pending(module: &Module) -> Vec<FuncId> {
    pending_since(module, 0)
}

/// `pending` among the functions from the `first`th on (those added since
/// a call of `linearize` saw `first` functions: a scan of the whole module
/// per generated derivative was quadratic).
pub fn pending_since(module: &Module, first: usize) -> Vec<FuncId> {
    (first..module.funcs.len())
        .map(FuncId::new)
        .filter(|id| {
            let f = module.func(*id);
            // Derivatives of externs are stubs that `transpose` replaces
            // by the custom derivative; they never get a body.
            let of_extern = f
                .deriv
                .as_ref()
                .and_then(|d| module.find(&d.of))
                .is_some_and(|s| module.func(s).is_import());
            f.deriv.is_some() && f.layout.is_empty() && !of_extern
        })
        .collect()
}

/// True when `linearize` can differentiate `of` now: no function it calls,
/// directly or not, is a derivative still to be generated.
pub fn ready(module: &Module, of: FuncId) -> bool {
    let mut seen = vec![false; module.funcs.len()];
    let mut stack = vec![of];
    while let Some(id) = stack.pop() {
        if std::mem::replace(&mut seen[id.index()], true) {
            continue;
        }
        let f = module.func(id);
        if f.deriv.is_some() && f.layout.is_empty() {
            return false;
        }
        for &b in &f.layout {
            for &i in &f.dfg.block(b).insts {
                if let adc_ir::InstData::Call { func, .. } = f.dfg.inst(i) {
                    stack.push(*func);
                }
            }
        }
    }
    true
}

/// The derivative passes in pipeline order.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum AdStage {
    Linearize,
    Propagate,
    LowerPairs,
    Widen,
    Unzip,
    Transpose,
}

/// Generates every derivative the module asks for. Runs the four passes in
/// rounds: a round handles the requests whose functions call no derivative
/// still missing, so derivatives of generated functions (higher order) come
/// in a later round. The last round stops after `stop`, so `adc ir --after
/// unzip` shows the unzipped form of the last requests.
pub fn differentiate(module: &mut Module, stop: AdStage) -> Result<(), AdError> {
    differentiate_observed(module, stop, &mut |_, _| {})
}

/// `differentiate`, calling `observe` after each pass of the last round
/// with the module as `differentiate` stopped there would leave it (one
/// run yields every stage's IR, as the differential tester's interpreter
/// oracle needs). Not called at all when the module asks for nothing.
pub fn differentiate_observed(
    module: &mut Module,
    stop: AdStage,
    observe: &mut dyn FnMut(AdStage, &Module),
) -> Result<(), AdError> {
    // The derivative passes rebuild each generated function; what its
    // request marks of its parameters (`Function::cold`, positions in the
    // final signature) is put back on it.
    let cold: Vec<(String, Vec<usize>)> = (module.funcs.iter())
        .filter(|f| !f.cold.is_empty())
        .map(|f| (f.name.clone(), f.cold.clone()))
        .collect();
    let result = differentiate_stages(module, stop, observe);
    for (name, c) in cold {
        if let Some(id) = module.find(&name) {
            module.func_mut(id).cold = c;
        }
    }
    result
}

fn differentiate_stages(
    module: &mut Module,
    stop: AdStage,
    observe: &mut dyn FnMut(AdStage, &Module),
) -> Result<(), AdError> {
    custom_derivatives_not_self_generated(module)?;
    let split = crate::ad::split::enabled(module);
    route_to_wrappers(module);
    crate::ad::band::run(module)?;
    loop {
        let waiting = pending(module);
        if waiting.is_empty() {
            return Ok(());
        }
        let generated = crate::ad::linearize::run(module)?;
        if generated.is_empty() {
            let f = module.func(waiting[0]);
            return Err(AdError::new(
                format!(
                    "cannot generate `{}`: `{}` depends on derivatives that depend on it",
                    f.name,
                    f.deriv.as_ref().map_or("?", |d| d.of.as_str())
                ),
                f.deriv_span,
            ));
        }
        let last = pending(module).is_empty();
        // After `done`'s pass of the last round: show it, and say whether
        // to stop.
        let mut reached = |done: AdStage, module: &Module| {
            if last {
                observe(done, module);
            }
            last && stop <= done
        };
        if reached(AdStage::Linearize, module) {
            return Ok(());
        }
        for &id in &generated {
            crate::ad::propagate::run(module, id)?;
        }
        if reached(AdStage::Propagate, module) {
            return Ok(());
        }
        for &id in &generated {
            crate::ad::lower_pairs::run(module.func_mut(id))?;
        }
        if reached(AdStage::LowerPairs, module) {
            return Ok(());
        }
        let mut generated = generated;
        for k in 0..generated.len() {
            let id = generated[k];
            if let Some(more) = crate::ad::widen::run(module, id)? {
                generated.push(more);
            }
            crate::ad::sets::run(module, id)?;
        }
        if reached(AdStage::Widen, module) {
            return Ok(());
        }
        let reverse: Vec<FuncId> = generated
            .iter()
            .copied()
            .filter(|id| {
                module
                    .func(*id)
                    .deriv
                    .as_ref()
                    .is_some_and(|d| d.mode == AdMode::Reverse)
            })
            .collect();
        for &id in &reverse {
            crate::ad::unzip::run(module, id, split)?;
        }
        if reached(AdStage::Unzip, module) {
            return Ok(());
        }
        for &id in &reverse {
            crate::ad::transpose::run(module, id, split)?;
        }
        // Every sweep exists once the last round is through.
        if last {
            crate::ad::sets::prune(module);
        }
        reached(AdStage::Transpose, module);
    }
}

/// The source function of an internal forward derivative `__adc_jvp_NAME`
/// (or a specialised one, `__adc_fwdMASK_NAME`).
pub fn jvp_source(module: &Module, callee: FuncId) -> Option<FuncId> {
    let name = &module.func(callee).name;
    // The mask is `c`s and `d`s: the first `_` after it ends it.
    if let Some((_, of)) = name
        .strip_prefix("__adc_fwd")
        .and_then(|rest| rest.split_once('_'))
    {
        return module.find(of);
    }
    // `__adc_lin_NAME` stands for `__adc_jvp_NAME` with a tape handle
    // between `unzip` and `transpose` (`split`).
    let name = name
        .strip_prefix("__adc_jvp_")
        .or_else(|| name.strip_prefix("__adc_lin_"))?;
    module.find(name)
}

/// Which values of a linearized (or unzipped) function are differentials:
/// scalar tangent parameters, results of `diff` instructions, the tangent
/// results of derivative calls, and block parameters that receive any of
/// these. Shadows are pointers, hence primal.
pub fn diff_values(module: &Module, func: &Function) -> Vec<bool> {
    use adc_ir::{InstData, Tag, Type, ValueDef};
    let mut d = vec![false; func.dfg.num_values()];
    if let (Some(spec), Some(entry)) = (&func.deriv, func.entry_block()) {
        if let Some(src) = module.find(&spec.of) {
            let (acts, _) = adc_ir::ad::linearized_activities(spec);
            let layout = adc_ir::ad::forward_param_layout(module.func(src), &acts);
            for (&v, (_, is_tan)) in func.dfg.block_params(entry).iter().zip(layout) {
                d[v.index()] = is_tan && matches!(func.dfg.value_type(v), Type::Scalar(_));
            }
        }
    }
    for &b in &func.layout {
        for &i in &func.dfg.block(b).insts {
            let results = func.dfg.inst_results(i);
            match (func.tag(i), func.dfg.inst(i)) {
                (Tag::Diff, _) => results.iter().for_each(|r| d[r.index()] = true),
                (Tag::Mixed, InstData::Call { func: callee, .. }) => {
                    let n_primal = jvp_source(module, *callee)
                        .map_or(results.len(), |s| module.func(s).returns.len());
                    results[n_primal.min(results.len())..]
                        .iter()
                        .for_each(|r| d[r.index()] = true);
                }
                _ => (),
            }
        }
    }
    // Block parameters: fixpoint over the edges.
    loop {
        let mut changed = false;
        for &b in &func.layout {
            let Some(t) = func.terminator(b) else {
                continue;
            };
            for call in func.dfg.inst(t).successors() {
                for (&p, &a) in func.dfg.block_params(call.block).iter().zip(&call.args) {
                    if d[a.index()] && !d[p.index()] {
                        debug_assert!(matches!(func.dfg.value_def(p), ValueDef::Param(..)));
                        d[p.index()] = true;
                        changed = true;
                    }
                }
            }
        }
        if !changed {
            return d;
        }
    }
}

/// The reverse derivative callers use for `callee`, if declared.
pub fn existing_derivative(module: &Module, callee: FuncId) -> Option<FuncId> {
    let c = module.func(callee);
    match &c.custom_reverse {
        Some(g) => module.find(g),
        None => module.find(&internal_name(&c.name, AdMode::Reverse)),
    }
}
