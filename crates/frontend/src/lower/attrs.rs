//! Function attributes (docs/derivatives.md) checked against the signature they
//! stand on.

use super::items::Globals;
use crate::ast::*;
use crate::diag::Diagnostic;
use adc_ir::ad::ActivitySlot;
use adc_ir::{Activity, AdMode, DerivSpec};

/// What a well-formed function attribute asks for.
pub(crate) enum AttrRequest {
    /// Generate function `name` by differentiating the function.
    /// The name, the request, and whether its input shadows are cold
    /// ([`COLD_OPTION`]).
    Generate(Ident, DerivSpec, bool),
    /// Use `g` as the function's custom derivative in this mode.
    Custom(AdMode, Ident),
    /// `[checkpoint]`: reverse-mode callers re-run the function.
    Checkpoint,
}

/// Checks a function attribute (docs/derivatives.md) against the signature it stands on.
pub(crate) fn check_function_attr(
    f: &FuncDecl,
    a: &Attr,
    globals: &Globals,
    diags: &mut Vec<Diagnostic>,
    claim_name: &mut dyn FnMut(&Ident, &mut Vec<Diagnostic>) -> bool,
) -> Option<AttrRequest> {
    let name = a.name.name.as_str();
    let args = a.args.clone().unwrap_or_default();
    match name {
        "autodiff_reverse" | "autodiff_forward" => {
            let mode = if name == "autodiff_reverse" {
                AdMode::Reverse
            } else {
                AdMode::Forward
            };
            let Some(AttrArg::Ident(gen)) = args.first() else {
                diags.push(Diagnostic::error(
                    "E0301",
                    format!("`{name}` needs the generated function's name first"),
                    a.span,
                ));
                return None;
            };
            let has_ret = f.ret != ReturnType::Void;
            let want = f.params.len() + usize::from(has_ret);
            let named = args[1..]
                .iter()
                .rev()
                .take_while(|a| matches!(a, AttrArg::Named(..)))
                .count();
            let acts = &args[1..args.len() - named];
            // `__adc_sets = 1`, which only `[jacobian(.., sparse)]` writes:
            // the dependency sweep (`ad::sets`); 2 its bit sets, 3 its
            // interactions (`[hessian(.., sparse)]`).
            let (sets, options): (Vec<&AttrArg>, Vec<&AttrArg>) = args[args.len() - named..]
                .iter()
                .partition(|a| matches!(a, AttrArg::Named(n, ..) if n.name == SETS_OPTION));
            // `__adc_cold = 1`, which only element Jacobians write: a call
            // reads few elements of the input shadows, far apart.
            let (cold, options): (Vec<&AttrArg>, Vec<&AttrArg>) = options
                .into_iter()
                .partition(|a| matches!(a, AttrArg::Named(n, ..) if n.name == COLD_OPTION));
            let cold = !cold.is_empty() && mode == AdMode::Reverse;
            let options: Vec<AttrArg> = options.into_iter().cloned().collect();
            let (width, vector) = vector_width(&options, mode, f, globals, diags)?;
            if acts.len() != want {
                diags.push(
                    Diagnostic::error("E0302", format!("`{}` has {} parameter{}{}, so `{name}` needs {want} activities, found {}", f.name.name, f.params.len(), if f.params.len() == 1 { "" } else { "s" }, if has_ret { " and a return value" } else { "" }, acts.len()), a.span)
                        .with_note("give one activity per parameter, then one for the return value (none for `void`)"),
                );
                return None;
            }
            let mut ok = true;
            let mut activities = Vec::new();
            for (i, act) in acts.iter().enumerate() {
                let AttrArg::Ident(act) = act else {
                    diags.push(Diagnostic::error("E0303", "expected an activity", a.span));
                    ok = false;
                    continue;
                };
                let slot = if i < f.params.len() {
                    let p = &f.params[i];
                    let float = matches!(p.ty, BaseType::Double | BaseType::Float);
                    if p.is_array || p.mode != Mode::Value {
                        ActivitySlot::Reference { float }
                    } else {
                        ActivitySlot::Value { float }
                    }
                } else {
                    ActivitySlot::Result {
                        float: matches!(
                            f.ret,
                            ReturnType::Base(BaseType::Double | BaseType::Float)
                        ),
                    }
                };
                let allowed: Vec<&str> = slot.allowed(mode).iter().map(|a| a.name()).collect();
                let activity = Activity::from_name(&act.name);
                activities.push(activity.unwrap_or(Activity::Const));
                if !activity.is_some_and(|a| slot.fits(a, mode)) {
                    let what = if i < f.params.len() {
                        format!("parameter `{}`", f.params[i].name.name)
                    } else {
                        "the return value".to_string()
                    };
                    diags.push(
                        with_suggestion(
                            Diagnostic::error(
                                "E0303",
                                format!("activity `{}` does not fit {what}", act.name),
                                act.span,
                            ),
                            &act.name,
                            allowed.iter().copied(),
                        )
                        .with_note(format!("allowed here: {}", allowed.join(", "))),
                    );
                    ok = false;
                }
            }
            if ok && claim_name(gen, diags) {
                let ret = if has_ret { activities.pop() } else { None };
                return Some(AttrRequest::Generate(
                    gen.clone(),
                    DerivSpec {
                        mode,
                        of: f.name.name.clone(),
                        params: activities,
                        ret: ret.unwrap_or(Activity::Const),
                        width,
                        vector,
                        sets: !sets.is_empty() && mode == AdMode::Forward && !vector,
                        masks: mode == AdMode::Forward
                            && !vector
                            && sets.iter().any(|a| matches!(a, AttrArg::Named(_, v, _) if matches!(**v, AttrArg::Int(2, _)))),
                        // `__adc_sets = 3`: a sparse Hessian's sweep.
                        interactions: mode == AdMode::Forward
                            && !vector
                            && sets.iter().any(|a| matches!(a, AttrArg::Named(_, v, _) if matches!(**v, AttrArg::Int(3, _)))),
                    },
                    cold,
                ));
            }
            None
        }
        "reverse_derivative" | "forward_derivative" => match args.as_slice() {
            [AttrArg::Ident(g)] if globals.funcs.contains_key(&g.name) => {
                let mode = if name == "reverse_derivative" {
                    AdMode::Reverse
                } else {
                    AdMode::Forward
                };
                Some(AttrRequest::Custom(mode, g.clone()))
            }
            [AttrArg::Ident(g)] => {
                diags.push(with_suggestion(
                    Diagnostic::error(
                        "E0306",
                        format!("cannot find function `{}`", g.name),
                        g.span,
                    ),
                    &g.name,
                    globals.funcs.keys().map(String::as_str),
                ));
                None
            }
            _ => {
                diags.push(Diagnostic::error(
                    "E0306",
                    format!("`{name}` takes the name of one function"),
                    a.span,
                ));
                None
            }
        },
        "checkpoint" if a.args.is_none() => Some(AttrRequest::Checkpoint),
        "checkpoint" => {
            diags.push(Diagnostic::error(
                "E0305",
                "a function's `checkpoint` takes no arguments",
                a.span,
            ));
            None
        }
        other => {
            diags.push(with_suggestion(
                Diagnostic::error("E0304", format!("unknown attribute `{other}`"), a.name.span),
                other,
                FUNCTION_ATTRIBUTES.iter().copied(),
            ));
            None
        }
    }
}

/// The width of `width = W` among a derivative attribute's named
/// arguments and whether one is given (vector mode, even at `width = 1`;
/// `(1, false)` without one); E0308 for anything else there, or a width
/// that is not a positive integer literal or `const int` up to
/// [`MAX_WIDTH`], or reverse vector mode on a function without one float
/// result.
fn vector_width(
    named: &[AttrArg],
    mode: AdMode,
    f: &FuncDecl,
    globals: &Globals,
    diags: &mut Vec<Diagnostic>,
) -> Option<(u32, bool)> {
    let mut width = None;
    for arg in named {
        let AttrArg::Named(name, value, span) = arg else {
            continue;
        };
        if name.name != "width" {
            diags.push(with_suggestion(
                Diagnostic::error(
                    "E0308",
                    format!("unknown option `{}` of a derivative attribute", name.name),
                    name.span,
                ),
                &name.name,
                ["width"],
            ));
            return None;
        }
        if width.is_some() {
            diags.push(Diagnostic::error("E0308", "`width` is given twice", *span));
            return None;
        }
        let w = match value.as_ref() {
            AttrArg::Int(k, _) => Some(*k),
            AttrArg::Ident(id) => match globals.consts.get(&id.name) {
                Some(adc_ir::Constant::I64(k)) => Some(*k),
                _ => None,
            },
            AttrArg::Named(..) => None,
        };
        match w {
            Some(k) if (1..=i64::from(MAX_WIDTH)).contains(&k) => width = Some(k as u32),
            _ => {
                diags.push(
                    Diagnostic::error(
                        "E0308",
                        format!("`width` needs a positive integer literal or `const int` up to {MAX_WIDTH}"),
                        *span,
                    )
                    .with_note("the number of derivative directions the generated function carries, as in `width = 4`"),
                );
                return None;
            }
        }
    }
    let vector = width.is_some();
    let float_ret = matches!(f.ret, ReturnType::Base(BaseType::Double | BaseType::Float));
    if vector && mode == AdMode::Reverse && !float_ret {
        let span = named.first().map_or(f.span, |a| match a {
            AttrArg::Named(_, _, s) => *s,
            _ => f.span,
        });
        diags.push(Diagnostic::error(
            "E0308",
            format!("reverse vector mode (`width`) needs a `float` or `double` result, and `{}` has none", f.name.name),
            span,
        ));
        return None;
    }
    Some((width.unwrap_or(1), vector))
}

/// The option of `autodiff_forward` that asks for a dependency sweep
/// (docs/jacobians.md#sparse-jacobians); only generated code writes it.
pub const SETS_OPTION: &str = "__adc_sets";

/// The option of `autodiff_reverse` that marks the shadows of the
/// read-only array parameters cold (`Function::cold`: a call reads few of
/// their elements, far apart); only element Jacobians write it.
pub const COLD_OPTION: &str = "__adc_cold";

/// The largest `width` of vector mode: the generated code holds `W` copies
/// of the derivative part.
pub const MAX_WIDTH: u32 = 64;

/// The attributes a function may carry (docs/derivatives.md).
const FUNCTION_ATTRIBUTES: &[&str] = &[
    "autodiff_reverse",
    "autodiff_forward",
    "reverse_derivative",
    "forward_derivative",
    "checkpoint",
];

/// `d` with a "did you mean" note when a candidate is close to `name`.
pub(crate) fn with_suggestion<'a>(
    d: Diagnostic,
    name: &str,
    candidates: impl IntoIterator<Item = &'a str>,
) -> Diagnostic {
    match crate::suggest::did_you_mean(name, candidates) {
        Some(note) => d.with_note(note),
        None => d,
    }
}
