//! `adc run --grad` and `--tangent` (docs/cli.md): a derivative request
//! for the entry, added to the module before the pipeline runs, and the
//! arguments and JSON around its call.

use adc_codegen::{ArgValue, ArrayValue};
use adc_ir::ad::default_activity;
use adc_ir::{Activity, AdMode, Constant, DerivSpec, Function, Linkage, Module, Type};
use serde_json::Value as Json;

/// Name of the function `--grad` / `--tangent` generate and call.
pub const GRAD_ENTRY: &str = "__adc_cli_grad";
pub const TANGENT_ENTRY: &str = "__adc_cli_tangent";

/// What the command line asked to differentiate.
#[derive(Clone, Debug)]
pub enum Request {
    Grad,
    /// One tangent per parameter (`Json::Null` for none).
    Tangent(Vec<Json>),
}

/// Adds the request for `entry` to `module`; the error is a usage error.
pub fn add_request(module: &mut Module, entry: &str, req: &Request) -> Result<String, String> {
    let id = module.find(entry).ok_or_else(|| {
        let names: Vec<&str> = module
            .funcs
            .iter()
            .filter(|f| !f.is_import())
            .map(|f| f.name.as_str())
            .collect();
        no_entry(entry, &names)
    })?;
    let src = module.func(id);
    let float_ret = matches!(src.returns.as_slice(), [t] if t.elem().is_float());
    let (name, spec) = match req {
        Request::Grad => {
            if !float_ret {
                return Err(format!(
                    "`--grad` needs an entry that returns `float` or `double`; `{entry}` does not"
                ));
            }
            let params = src
                .params
                .iter()
                .map(|p| default_activity(p, AdMode::Reverse))
                .collect();
            (
                GRAD_ENTRY,
                DerivSpec {
                    mode: AdMode::Reverse,
                    of: entry.into(),
                    params,
                    ret: Activity::Active,
                    width: 1,
                    vector: false,
                    sets: false,
                    masks: false,
                    interactions: false,
                },
            )
        }
        Request::Tangent(ts) => {
            if ts.len() != src.params.len() {
                return Err(tangent_count(entry, src, ts.len()));
            }
            let mut params = Vec::new();
            for (p, t) in src.params.iter().zip(ts) {
                if t.is_null() {
                    params.push(Activity::Const);
                } else if adc_ir::ad::is_differentiable(p.ty) {
                    params.push(Activity::Dual);
                } else {
                    return Err(format!(
                        "`--tangent`: parameter `{}` has no derivative; pass `null`",
                        p.name
                    ));
                }
            }
            // A tuple's float elements have tangents too (printed as an
            // array, like the tuple).
            let ret = if src.returns.iter().any(|t| t.elem().is_float()) {
                Activity::Dual
            } else {
                Activity::Const
            };
            (
                TANGENT_ENTRY,
                DerivSpec {
                    mode: AdMode::Forward,
                    of: entry.into(),
                    params,
                    ret,
                    width: 1,
                    vector: false,
                    sets: false,
                    masks: false,
                    interactions: false,
                },
            )
        }
    };
    crate::request::declare(module, id, name, spec, Linkage::Export);
    Ok(name.to_string())
}

fn zero_like(a: &ArgValue) -> ArgValue {
    match a {
        ArgValue::Scalar(c) => ArgValue::Scalar(Constant::zero(c.ty())),
        ArgValue::Array(ArrayValue::F32(v)) => ArgValue::Array(ArrayValue::F32(vec![0.0; v.len()])),
        ArgValue::Array(ArrayValue::F64(v)) => ArgValue::Array(ArrayValue::F64(vec![0.0; v.len()])),
        other => other.clone(),
    }
}

/// The generated function's arguments: primal values, zero shadows (and
/// seed 1) for `--grad`, the given tangents for `--tangent`. Returns the
/// arguments and, per entry parameter, the index of its shadow or tangent.
pub fn derivative_args(
    src: &Function,
    primal: &[ArgValue],
    req: &Request,
) -> Result<(Vec<ArgValue>, Vec<Option<usize>>), String> {
    let mut args = Vec::new();
    let mut shadow_at = Vec::new();
    for (k, (p, a)) in src.params.iter().zip(primal).enumerate() {
        args.push(a.clone());
        let d = match req {
            Request::Grad => match (adc_ir::ad::is_differentiable(p.ty), p.ty) {
                (true, Type::Array(_) | Type::Ref(_)) => Some(zero_like(a)),
                _ => None,
            },
            Request::Tangent(ts) if ts[k].is_null() => None,
            Request::Tangent(ts) => {
                let t = crate::json::arg_from_json(p, &ts[k])
                    .map_err(|e| format!("`--tangent`: {e}"))?;
                if let (ArgValue::Array(x), ArgValue::Array(y)) = (a, &t) {
                    if x.len() != y.len() {
                        return Err(format!(
                            "`--tangent`: the tangent of `{}` has {} elements, the argument {}",
                            p.name,
                            y.len(),
                            x.len()
                        ));
                    }
                }
                Some(t)
            }
        };
        shadow_at.push(d.as_ref().map(|_| args.len()));
        args.extend(d);
    }
    if let (Request::Grad, [t]) = (req, src.returns.as_slice()) {
        args.push(ArgValue::Scalar(match t.elem() {
            adc_ir::ScalarType::F32 => Constant::F32(1.0),
            _ => Constant::F64(1.0),
        }));
    }
    Ok((args, shadow_at))
}

/// Per parameter of the entry, its derivative as JSON text: a number
/// (returned gradient), an array or number (shadow after the call), or
/// `None` for a parameter without one.
pub fn gradient_items(
    src: &Function,
    args: &[ArgValue],
    shadow_at: &[Option<usize>],
    grads: &[Constant],
) -> Vec<Option<String>> {
    let mut next_grad = grads.iter();
    src.params
        .iter()
        .zip(shadow_at)
        .map(|(p, at)| match (p.ty, at) {
            (Type::Scalar(s), _) if s.is_float() => {
                next_grad.next().map(|g| crate::json::scalar_json(*g))
            }
            (_, Some(i)) => Some(crate::json::arg_json(&args[*i])),
            _ => None,
        })
        .collect()
}

/// The `gradient` array of docs/cli.md: `null` for a parameter without a
/// derivative.
pub fn gradient_json(items: &[Option<String>]) -> String {
    let items: Vec<&str> = items
        .iter()
        .map(|i| i.as_deref().unwrap_or("null"))
        .collect();
    format!("[{}]", items.join(", "))
}

/// The gradient for people: one line per parameter, `d/dx = 2.0`, or
/// `d/dn: none (int n has no derivative)`.
pub fn gradient_text(src: &Function, items: &[Option<String>]) -> String {
    let mut out = String::new();
    for (p, item) in src.params.iter().zip(items) {
        let line = match item {
            Some(v) => format!("d/d{} = {v}\n", p.name),
            None => format!(
                "d/d{}: none (`{}` has no derivative)\n",
                p.name,
                crate::json::param_text(p)
            ),
        };
        out.push_str(&line);
    }
    out
}

/// The usage error for an `--entry` the module does not define: the
/// functions it does define (not the compiler's own), and the closest.
pub fn no_entry(entry: &str, names: &[&str]) -> String {
    let mut names: Vec<&str> = names
        .iter()
        .copied()
        .filter(|n| !n.starts_with("__adc"))
        .collect();
    names.sort_unstable();
    if names.is_empty() {
        return format!("no function `{entry}` to run: the file defines no functions");
    }
    let hint = adc_frontend::suggest::closest(entry, names.iter().copied())
        .map(|c| format!("; did you mean `--entry {c}`?"))
        .unwrap_or_default();
    const SHOWN: usize = 12;
    let mut list: Vec<String> = names.iter().take(SHOWN).map(|n| format!("`{n}`")).collect();
    if names.len() > SHOWN {
        list.push(format!("and {} more", names.len() - SHOWN));
    }
    format!(
        "no function `{entry}` to run{hint}\n  the file defines {}; choose one with `--entry NAME`",
        list.join(", ")
    )
}

/// The usage error for a `--tangent` with the wrong number of values.
fn tangent_count(entry: &str, src: &Function, got: usize) -> String {
    let without: Vec<String> = src
        .params
        .iter()
        .filter(|p| !adc_ir::ad::is_differentiable(p.ty))
        .map(|p| format!("`{}`", p.name))
        .collect();
    let nulls = match without.as_slice() {
        [] => String::new(),
        names => format!(", `null` for {} (no derivative)", names.join(", ")),
    };
    format!(
        "`--tangent` has {}, but {}\n  give one tangent per parameter{nulls}",
        crate::json::plural(got, "value"),
        crate::json::takes(entry, &src.params)
    )
}

/// Name of the function `--jacobian` generates and calls.
pub const JACOBIAN_ENTRY: &str = "adc_cli_jacobian";

/// The rows and columns of the dense Jacobian of a function with
/// parameters `params` (default activities) at arguments `args`
/// (docs/jacobians.md#jacobians): columns are float scalars by value,
/// read-only and `inout` float arrays and `inout` float scalars; rows the
/// float result, then `out`/`inout` float arrays and scalars.
pub fn jacobian_shape(
    params: &[adc_ir::Param],
    returns: &[Type],
    args: &[ArgValue],
) -> (usize, usize) {
    let mut rows = usize::from(matches!(returns, [t] if t.elem().is_float()));
    let mut cols = 0;
    for (p, a) in params.iter().zip(args) {
        if !p.ty.elem().is_float() {
            continue;
        }
        let n = match a {
            ArgValue::Array(v) => v.len(),
            ArgValue::Scalar(_) => 1,
        };
        match (p.ty, p.mode) {
            (Type::Scalar(_), _) | (Type::Array(_), adc_ir::ParamMode::In) => cols += n,
            (_, adc_ir::ParamMode::Out) => rows += n,
            _ => {
                cols += n;
                rows += n;
            }
        }
    }
    (rows, cols)
}

/// The Jacobian `jac` (row-major, `rows` x `cols`) as JSON rows: `rows`
/// lists, each of `cols` numbers (a row with no columns is `[]`).
pub fn jacobian_json(jac: &[f64], rows: usize, cols: usize) -> String {
    let rows: Vec<String> = (0..rows)
        .map(|r| {
            let xs: Vec<String> = jac
                .iter()
                .skip(r * cols)
                .take(cols)
                .map(|x| crate::json::scalar_json(Constant::F64(*x)))
                .collect();
            format!("[{}]", xs.join(", "))
        })
        .collect();
    format!("[{}]", rows.join(", "))
}
