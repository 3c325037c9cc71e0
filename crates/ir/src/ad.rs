//! The vocabulary of derivatives shared by the frontend and the passes:
//! activities (docs/derivatives.md#reverse-mode, docs/derivatives.md#forward-mode), derivative requests,
//! instruction tags, and the signatures generated functions get.

use crate::function::{Function, Param, ParamMode};
use crate::types::{ScalarType, Type};
use std::fmt;

/// How a parameter or result takes part in a derivative
/// (docs/derivatives.md#reverse-mode, docs/derivatives.md#forward-mode), as an
/// attribute names it.
///
/// ```
/// # use adc_ir::Activity;
/// assert_eq!(Activity::from_name("DualOnly"), Some(Activity::DualOnly));
/// assert_eq!(Activity::Duplicated.to_string(), "Duplicated");
/// ```
#[derive(Clone, Copy, PartialEq, Eq, Debug, Hash)]
pub enum Activity {
    /// No derivative with respect to it (a result: not differentiated).
    Const,
    /// Reverse mode, a float scalar by value: its derivative is returned
    /// (a result: a `seed` parameter is added, the result still returned).
    Active,
    /// A reverse-mode result as `Active`, but not returned.
    ActiveOnly,
    /// Reverse mode, an array or `inout`/`out` scalar: followed by its
    /// shadow, which receives the derivative.
    Duplicated,
    /// As `Duplicated`; the primal's contents after the call are
    /// unspecified.
    DuplicatedOnly,
    /// Forward mode: followed by its tangent (a result: returns the result
    /// and its tangent).
    Dual,
    /// As `Dual`; the primal's contents after the call are unspecified (a
    /// result: returns the tangent only).
    DualOnly,
}

impl Activity {
    /// Every activity, in the order of the enum.
    ///
    /// ```
    /// # use adc_ir::Activity;
    /// assert_eq!(Activity::ALL.len(), 7);
    /// assert_eq!(Activity::ALL[0], Activity::Const);
    /// ```
    pub const ALL: &'static [Activity] = &[
        Activity::Const,
        Activity::Active,
        Activity::ActiveOnly,
        Activity::Duplicated,
        Activity::DuplicatedOnly,
        Activity::Dual,
        Activity::DualOnly,
    ];

    /// The activity's name in attributes.
    ///
    /// ```
    /// # use adc_ir::Activity;
    /// assert_eq!(Activity::ActiveOnly.name(), "ActiveOnly");
    /// ```
    pub fn name(self) -> &'static str {
        match self {
            Activity::Const => "Const",
            Activity::Active => "Active",
            Activity::ActiveOnly => "ActiveOnly",
            Activity::Duplicated => "Duplicated",
            Activity::DuplicatedOnly => "DuplicatedOnly",
            Activity::Dual => "Dual",
            Activity::DualOnly => "DualOnly",
        }
    }

    /// The activity of a name in attributes (case-sensitive).
    ///
    /// ```
    /// # use adc_ir::Activity;
    /// assert_eq!(Activity::from_name("Active"), Some(Activity::Active));
    /// assert_eq!(Activity::from_name("active"), None);
    /// ```
    pub fn from_name(s: &str) -> Option<Activity> {
        Activity::ALL.iter().copied().find(|a| a.name() == s)
    }

    /// True for everything but `Const`: the value carries a derivative.
    ///
    /// ```
    /// # use adc_ir::Activity;
    /// assert!(Activity::Dual.is_active());
    /// assert!(!Activity::Const.is_active());
    /// ```
    pub fn is_active(self) -> bool {
        self != Activity::Const
    }
}

impl fmt::Display for Activity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The mode of a derivative: `autodiff_forward` or `autodiff_reverse`.
///
/// ```
/// # use adc_ir::AdMode;
/// assert_ne!(AdMode::Forward, AdMode::Reverse);
/// ```
#[derive(Clone, Copy, PartialEq, Eq, Debug, Hash)]
pub enum AdMode {
    /// Tangents carried forward with the values.
    Forward,
    /// Adjoints accumulated backwards from the result.
    Reverse,
}

/// A function whose body the derivative passes generate: `NAME` of an
/// `autodiff_*` attribute, or an internal derivative of a callee. Printed
/// after the signature as `= reverse @f(Active, Const, Active)`.
#[derive(Clone, PartialEq, Debug)]
pub struct DerivSpec {
    pub mode: AdMode,
    /// The differentiated function, by name.
    pub of: String,
    /// One activity per parameter of `of`.
    pub params: Vec<Activity>,
    /// The return's activity (`Const` for `void`).
    pub ret: Activity,
    /// Derivative directions carried at once over one primal run (vector
    /// mode, `width = W`; printed ` width W` after the activities when
    /// `vector`); 1 otherwise.
    pub width: u32,
    /// Vector mode (`width = W` given, even `width = 1`): the vector-mode
    /// signature ([`vector_forward_signature`], [`vector_reverse_signature`])
    /// with `width` directions. Always set when `width` is above 1.
    pub vector: bool,
    /// A dependency sweep (printed ` sets`): a width-1 forward derivative
    /// whose tangents are sets of input indices (docs/jacobians.md#sparse-jacobians),
    /// with a last parameter `arena: inout i64[]` that holds them.
    pub sets: bool,
    /// With `sets`, the sweep of an element Jacobian (printed ` masks`):
    /// its sets are bit sets of the input reads of one run, held in the
    /// handles, instead of index sets in the arena (`ad::sets`).
    pub masks: bool,
    /// With `sets`, the sweep of a sparse Hessian (printed ` interactions`):
    /// it also records, for each nonlinear operation, the pair of index
    /// sets whose columns interact (`ad::sets`, docs/jacobians.md#sparse-hessians).
    pub interactions: bool,
}

/// What an instruction computes, as the `propagate` pass classifies it:
/// only primal values, only differentials (linear in the tangents), or both
/// (a call of a derivative, a branch carrying both kinds).
#[derive(Clone, Copy, PartialEq, Eq, Debug, Default, Hash)]
pub enum Tag {
    #[default]
    Primal,
    Diff,
    Mixed,
}

impl Tag {
    /// The prefix the printer writes before the opcode (none for primal).
    pub fn prefix(self) -> &'static str {
        match self {
            Tag::Primal => "",
            Tag::Diff => "diff ",
            Tag::Mixed => "mixed ",
        }
    }
}

/// Float values, and arrays and references of floats, carry derivatives.
pub fn is_differentiable(ty: Type) -> bool {
    ty.elem().is_float()
}

/// What an activity stands on, as far as the rules of activities go
/// (docs/derivatives.md#default-activities): a parameter passed by value,
/// one passed by reference (an array, an `inout`/`out` scalar), or the
/// result; `float` when derivatives flow through it (a float value, or an
/// array or reference of floats; one float result). The attributes of
/// source, the derivatives asked for from Rust and the derivative
/// declarations of textual IR all check activities by these rules.
///
/// ```
/// # use adc_ir::ad::ActivitySlot;
/// # use adc_ir::{Activity, AdMode, ScalarType, Type};
/// let xs = ActivitySlot::param(Type::Array(ScalarType::F64));
/// assert_eq!(xs, ActivitySlot::Reference { float: true });
/// assert!(xs.fits(Activity::Duplicated, AdMode::Reverse));
/// assert!(!xs.fits(Activity::Active, AdMode::Reverse));
/// assert_eq!(
///     ActivitySlot::result(&[Type::F64]).allowed(AdMode::Forward),
///     [Activity::Const, Activity::Dual, Activity::DualOnly]
/// );
/// assert_eq!(ActivitySlot::param(Type::I64).allowed(AdMode::Reverse), [Activity::Const]);
/// ```
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum ActivitySlot {
    /// A parameter passed by value.
    Value { float: bool },
    /// An array parameter, or an `inout`/`out` scalar.
    Reference { float: bool },
    /// The result (`float`: one float scalar; a tuple or `void` is not).
    Result { float: bool },
}

impl ActivitySlot {
    /// The slot of a parameter of IR type `ty`.
    pub fn param(ty: Type) -> ActivitySlot {
        let float = is_differentiable(ty);
        match ty {
            Type::Scalar(_) => ActivitySlot::Value { float },
            _ => ActivitySlot::Reference { float },
        }
    }

    /// The slot of a function's result, of IR types `returns`.
    pub fn result(returns: &[Type]) -> ActivitySlot {
        ActivitySlot::Result {
            float: matches!(returns, [t] if t.elem().is_float()),
        }
    }

    /// The activities that fit the slot in `mode`, `Const` first (the
    /// order diagnostics list them in).
    pub fn allowed(self, mode: AdMode) -> &'static [Activity] {
        use Activity::*;
        match (self, mode) {
            (
                ActivitySlot::Value { float: false }
                | ActivitySlot::Reference { float: false }
                | ActivitySlot::Result { float: false },
                _,
            ) => &[Const],
            (_, AdMode::Forward) => &[Const, Dual, DualOnly],
            (ActivitySlot::Value { .. }, AdMode::Reverse) => &[Const, Active],
            (ActivitySlot::Reference { .. }, AdMode::Reverse) => {
                &[Const, Duplicated, DuplicatedOnly]
            }
            (ActivitySlot::Result { .. }, AdMode::Reverse) => &[Const, Active, ActiveOnly],
        }
    }

    /// Whether `a` fits the slot in `mode`.
    pub fn fits(self, a: Activity, mode: AdMode) -> bool {
        self.allowed(mode).contains(&a)
    }
}

/// The default activity of a parameter (docs/derivatives.md#default-activities).
pub fn default_activity(p: &Param, mode: AdMode) -> Activity {
    match (is_differentiable(p.ty), p.ty, mode) {
        (false, _, _) => Activity::Const,
        (true, Type::Scalar(_), AdMode::Reverse) => Activity::Active,
        (true, _, AdMode::Reverse) => Activity::Duplicated,
        (true, _, AdMode::Forward) => Activity::Dual,
    }
}

/// The derivative of `src` with default activities, as callees are
/// differentiated: tangents of every float result in forward mode
/// (`Dual`), gradients only in reverse mode (`ActiveOnly`).
pub fn default_spec(src: &Function, mode: AdMode) -> DerivSpec {
    let float_ret = src.returns.iter().any(|t| t.elem().is_float());
    DerivSpec {
        mode,
        of: src.name.clone(),
        params: src
            .params
            .iter()
            .map(|p| default_activity(p, mode))
            .collect(),
        ret: match (float_ret, mode) {
            (false, _) => Activity::Const,
            (true, AdMode::Forward) => Activity::Dual,
            (true, AdMode::Reverse) => Activity::ActiveOnly,
        },
        width: 1,
        vector: false,
        sets: false,
        masks: false,
        interactions: false,
    }
}

fn tangent_param(p: &Param) -> Param {
    let mode = match (p.ty, p.mode) {
        (Type::Array(_), ParamMode::In) | (Type::Scalar(_), _) => ParamMode::In,
        _ => ParamMode::Inout,
    };
    Param {
        name: format!("d_{}", p.name),
        ty: p.ty,
        mode,
    }
}

/// Whether each parameter of the forward-mode signature is a tangent: the
/// layout is each primal parameter followed by its tangent when active.
pub fn forward_param_layout(src: &Function, acts: &[Activity]) -> Vec<(usize, bool)> {
    let mut out = Vec::new();
    for (i, a) in acts.iter().enumerate().take(src.params.len()) {
        out.push((i, false));
        if a.is_active() {
            out.push((i, true));
        }
    }
    out
}

/// The forward-mode signature for `acts` and return activity `ret`:
/// tangents right after their parameter; `Dual` returns the primal results
/// then one tangent per float result, `DualOnly` the tangents only.
pub fn forward_signature(
    src: &Function,
    acts: &[Activity],
    ret: Activity,
) -> (Vec<Param>, Vec<Type>) {
    let params = forward_param_layout(src, acts)
        .into_iter()
        .map(|(i, t)| {
            if t {
                tangent_param(&src.params[i])
            } else {
                src.params[i].clone()
            }
        })
        .collect();
    let tangents = src.returns.iter().filter(|t| t.elem().is_float()).copied();
    let returns = match ret {
        Activity::Const => src.returns.clone(),
        Activity::DualOnly | Activity::ActiveOnly => tangents.collect(),
        _ => src.returns.iter().copied().chain(tangents).collect(),
    };
    (params, returns)
}

/// The reverse-mode signature of docs/derivatives.md#reverse-mode: shadows after `Duplicated`
/// parameters, one seed per float result appended when the return is
/// active; the primal results (unless `ActiveOnly`), then one gradient per
/// `Active` parameter.
pub fn reverse_signature(
    src: &Function,
    acts: &[Activity],
    ret: Activity,
) -> (Vec<Param>, Vec<Type>) {
    let mut params = Vec::new();
    let mut grads = Vec::new();
    for (p, a) in src.params.iter().zip(acts) {
        params.push(p.clone());
        match a {
            Activity::Active => grads.push(p.ty),
            Activity::Duplicated | Activity::DuplicatedOnly => params.push(Param {
                mode: ParamMode::Inout,
                ..tangent_param(p)
            }),
            _ => (),
        }
    }
    let seeded = matches!(ret, Activity::Active | Activity::ActiveOnly);
    let float_rets: Vec<Type> = src
        .returns
        .iter()
        .filter(|t| t.elem().is_float())
        .copied()
        .collect();
    if seeded {
        for (k, t) in float_rets.iter().enumerate() {
            let name = if float_rets.len() == 1 {
                "seed".to_string()
            } else {
                format!("seed{k}")
            };
            params.push(Param {
                name,
                ty: *t,
                mode: ParamMode::In,
            });
        }
    }
    let mut returns = if ret == Activity::ActiveOnly {
        Vec::new()
    } else {
        src.returns.clone()
    };
    returns.extend(grads);
    (params, returns)
}

/// The signature a request generates.
pub fn spec_signature(src: &Function, spec: &DerivSpec) -> (Vec<Param>, Vec<Type>) {
    if spec.sets {
        let (mut params, returns) = sets_signature(src, spec);
        params.push(sets_arena_param(&params));
        return (params, returns);
    }
    match (spec.mode, spec.vector) {
        (AdMode::Forward, false) => forward_signature(src, &spec.params, spec.ret),
        (AdMode::Reverse, false) => reverse_signature(src, &spec.params, spec.ret),
        (AdMode::Forward, true) => vector_forward_signature(src, &spec.params, spec.ret),
        (AdMode::Reverse, true) => vector_reverse_signature(src, &spec.params, spec.ret),
    }
}

/// The signature of a dependency sweep (`sets`) before its arena: the
/// forward signature with every tangent in `f64` (a set handle, an
/// integer that an `f32` would not hold exactly past 2^24), `float`
/// ones too.
pub fn sets_signature(src: &Function, spec: &DerivSpec) -> (Vec<Param>, Vec<Type>) {
    let (mut params, mut returns) = forward_signature(src, &spec.params, spec.ret);
    for (p, (_, tangent)) in params
        .iter_mut()
        .zip(forward_param_layout(src, &spec.params))
    {
        if tangent {
            p.ty = p.ty.with_elem_f64();
        }
    }
    // The tangents follow the primal results (none for `DualOnly`).
    let tangents = returns.len() - src.returns.iter().filter(|t| t.elem().is_float()).count();
    let first = match spec.ret {
        Activity::Const => returns.len(),
        _ => tangents,
    };
    for t in &mut returns[first..] {
        *t = t.with_elem_f64();
    }
    (params, returns)
}

/// The last parameter of a dependency sweep (`sets`): the arena of its
/// index sets, named `arena` unless a parameter already is.
pub fn sets_arena_param(params: &[Param]) -> Param {
    let mut name = "arena".to_string();
    while params.iter().any(|p| p.name == name) {
        name.push('_');
    }
    Param {
        name,
        ty: Type::Array(ScalarType::I64),
        mode: ParamMode::Inout,
    }
}

/// A tangent of vector mode: an array holding the `W` tangents of a
/// scalar, or `W` times the elements of an array, direction after
/// direction; `inout` where the width-1 tangent is by reference.
fn vector_tangent_param(p: &Param) -> Param {
    let t = tangent_param(p);
    let mode = match p.ty {
        Type::Scalar(_) => ParamMode::In,
        _ => t.mode,
    };
    Param {
        ty: Type::Array(p.ty.elem()),
        mode,
        ..t
    }
}

/// The forward-mode signature of vector mode (`width = W`,
/// docs/jacobians.md#vector-mode): each tangent an array of `W`
/// directions ([`vector_tangent_param`]) right after its parameter; an
/// active return returns the primal results (none for `DualOnly`) and
/// writes each float result's `W` tangents to an `out` array appended last
/// (`t_ret`, then `t_ret1`, ... for a tuple).
pub fn vector_forward_signature(
    src: &Function,
    acts: &[Activity],
    ret: Activity,
) -> (Vec<Param>, Vec<Type>) {
    let mut params: Vec<Param> = forward_param_layout(src, acts)
        .into_iter()
        .map(|(i, t)| {
            if t {
                vector_tangent_param(&src.params[i])
            } else {
                src.params[i].clone()
            }
        })
        .collect();
    let floats: Vec<Type> = src
        .returns
        .iter()
        .filter(|t| t.elem().is_float())
        .copied()
        .collect();
    if ret.is_active() {
        for (k, t) in floats.iter().enumerate() {
            params.push(Param {
                name: if k == 0 {
                    "t_ret".to_string()
                } else {
                    format!("t_ret{k}")
                },
                ty: Type::Array(t.elem()),
                mode: ParamMode::Out,
            });
        }
    }
    let returns = match ret {
        Activity::DualOnly | Activity::ActiveOnly => Vec::new(),
        _ => src.returns.clone(),
    };
    (params, returns)
}

/// The reverse-mode signature of vector mode (float scalar return only):
/// each `Active` scalar's `W` gradients to an `out T[] d_x` right after it,
/// shadows of `W` directions after `Duplicated` parameters, and the seed
/// `T[] seed` of `W` directions appended last; the primal result returned
/// unless `ActiveOnly`.
pub fn vector_reverse_signature(
    src: &Function,
    acts: &[Activity],
    ret: Activity,
) -> (Vec<Param>, Vec<Type>) {
    let mut params = Vec::new();
    for (p, a) in src.params.iter().zip(acts) {
        params.push(p.clone());
        match a {
            Activity::Active => params.push(Param {
                mode: ParamMode::Out,
                ..vector_tangent_param(p)
            }),
            Activity::Duplicated | Activity::DuplicatedOnly => params.push(Param {
                mode: ParamMode::Inout,
                ..vector_tangent_param(p)
            }),
            _ => (),
        }
    }
    if matches!(ret, Activity::Active | Activity::ActiveOnly) {
        for t in src.returns.iter().filter(|t| t.elem().is_float()) {
            params.push(Param {
                name: "seed".to_string(),
                ty: Type::Array(t.elem()),
                mode: ParamMode::In,
            });
        }
    }
    let returns = if ret == Activity::ActiveOnly {
        Vec::new()
    } else {
        src.returns.clone()
    };
    (params, returns)
}

/// Where each array parameter of `src` and its shadow (reverse mode) or
/// tangent (forward mode) stand in the signature `spec` generates: a call
/// checks their lengths agree (the generated function checks too, but a
/// call can name itself in the runtime error).
pub fn shadow_pairs(src: &Function, spec: &DerivSpec) -> Vec<(usize, usize)> {
    let mut pairs = Vec::new();
    // Vector mode's shadows are `W` times as long: the generated function
    // checks them.
    if spec.vector {
        return pairs;
    }
    let mut pos = 0;
    for (p, a) in src.params.iter().zip(&spec.params) {
        let shadowed = match spec.mode {
            AdMode::Forward => a.is_active(),
            AdMode::Reverse => matches!(a, Activity::Duplicated | Activity::DuplicatedOnly),
        };
        if shadowed && matches!(p.ty, Type::Array(_)) {
            pairs.push((pos, pos + 1));
        }
        pos += 1 + usize::from(shadowed);
    }
    pairs
}

/// The forward-mode (linearized) form of a reverse request: what
/// `linearize` produces before `unzip` and `transpose` turn it around.
pub fn linearized_activities(spec: &DerivSpec) -> (Vec<Activity>, Activity) {
    let dual = |a: Activity| {
        if a.is_active() {
            Activity::Dual
        } else {
            Activity::Const
        }
    };
    match spec.mode {
        AdMode::Forward => (spec.params.clone(), spec.ret),
        AdMode::Reverse => (
            spec.params.iter().map(|a| dual(*a)).collect(),
            dual(spec.ret),
        ),
    }
}

/// The suffix of a sparse Hessian's band-pattern stub, `NAME__hband`,
/// written by the frontend (`hessian/band.rs`) and filled by the pass
/// `ad::band` from the function its sweep `NAME__hp` differentiates.
pub const BAND_STUB_SUFFIX: &str = "__hband";

/// The length of the stub's `info` array, the most the pass may write.
pub const BAND_INFO_LEN: usize = 512;
