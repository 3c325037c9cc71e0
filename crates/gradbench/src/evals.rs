//! The evals adc implements: each module's `.ad` source (under
//! `gradbench/evals/`) and how a GradBench input becomes arguments of its
//! functions and their results an output.

use adc::{ArgValue, ArrayValue, Constant};
use serde_json::{json, Value as Json};

/// The source of a GradBench module, if adc implements it: the tuned
/// port in `gradbench/evals/`, or with `plain` the plain port in
/// `gradbench/evals/plain/` (GradBench's C++ translated line by line; same
/// exported functions).
pub fn source(module: &str, plain: bool) -> Option<&'static str> {
    if plain {
        return Some(match module {
            "lse" => include_str!("../../../gradbench/evals/plain/lse.ad"),
            "llsq" => include_str!("../../../gradbench/evals/plain/llsq.ad"),
            "det" => include_str!("../../../gradbench/evals/plain/det.ad"),
            "gmm" => include_str!("../../../gradbench/evals/plain/gmm.ad"),
            "ode" => include_str!("../../../gradbench/evals/plain/ode.ad"),
            "kmeans" => include_str!("../../../gradbench/evals/plain/kmeans.ad"),
            "lstm" => include_str!("../../../gradbench/evals/plain/lstm.ad"),
            "ba" => include_str!("../../../gradbench/evals/plain/ba.ad"),
            "ht" => include_str!("../../../gradbench/evals/plain/ht.ad"),
            _ => return None,
        });
    }
    Some(match module {
        "lse" => include_str!("../../../gradbench/evals/lse.ad"),
        "llsq" => include_str!("../../../gradbench/evals/llsq.ad"),
        "det" => include_str!("../../../gradbench/evals/det.ad"),
        "gmm" => include_str!("../../../gradbench/evals/gmm.ad"),
        "ode" => include_str!("../../../gradbench/evals/ode.ad"),
        "saddle" => include_str!("../../../gradbench/evals/saddle.ad"),
        "particle" => include_str!("../../../gradbench/evals/particle.ad"),
        "kmeans" => include_str!("../../../gradbench/evals/kmeans.ad"),
        "lstm" => include_str!("../../../gradbench/evals/lstm.ad"),
        "ba" => include_str!("../../../gradbench/evals/ba.ad"),
        "ht" => include_str!("../../../gradbench/evals/ht.ad"),
        _ => return None,
    })
}

/// One call: the function to call and its arguments, and how to read the
/// output off the results and the arguments after the call.
pub struct Call {
    pub function: &'static str,
    pub args: Vec<ArgValue>,
    pub output: fn(&[Constant], &[ArgValue]) -> Result<Json, String>,
}

fn floats(input: &Json, field: &str) -> Result<Vec<f64>, String> {
    input[field]
        .as_array()
        .ok_or(format!("input.{field} is not an array"))?
        .iter()
        .map(|v| {
            v.as_f64()
                .ok_or(format!("input.{field} holds a non-number"))
        })
        .collect()
}

/// A matrix given as an array of rows, flattened row by row.
fn rows(input: &Json, field: &str) -> Result<Vec<f64>, String> {
    let mut out = Vec::new();
    for row in input[field]
        .as_array()
        .ok_or(format!("input.{field} is not an array"))?
    {
        let row = row
            .as_array()
            .ok_or(format!("input.{field} holds a non-array"))?;
        for v in row {
            out.push(
                v.as_f64()
                    .ok_or(format!("input.{field} holds a non-number"))?,
            );
        }
    }
    Ok(out)
}

fn int(input: &Json, field: &str) -> Result<i64, String> {
    input[field]
        .as_i64()
        .ok_or(format!("input.{field} is not an integer"))
}

fn f64s(v: Vec<f64>) -> ArgValue {
    ArgValue::Array(ArrayValue::F64(v))
}

fn scalar(c: Constant) -> ArgValue {
    ArgValue::Scalar(c)
}

/// The primal's result, a double.
fn result(results: &[Constant], _: &[ArgValue]) -> Result<Json, String> {
    match results {
        [Constant::F64(y)] => Ok(json!(y)),
        other => Err(format!("unexpected results {other:?}")),
    }
}

/// The shadow of the first parameter (the second argument), an array.
fn shadow(_: &[Constant], args: &[ArgValue]) -> Result<Json, String> {
    match args.get(1) {
        Some(ArgValue::Array(ArrayValue::F64(d))) => Ok(json!(d)),
        other => Err(format!("unexpected shadow {other:?}")),
    }
}

/// The third argument after the call (an `out` array).
fn third(_: &[Constant], args: &[ArgValue]) -> Result<Json, String> {
    match args.get(2) {
        Some(ArgValue::Array(ArrayValue::F64(d))) => Ok(json!(d)),
        other => Err(format!("unexpected output {other:?}")),
    }
}

/// The mode argument of saddle's and particle's functions for one letter
/// of the order (`ff`, `fr`, `rf`, `rr`: the outer derivative's first): 0
/// for reverse, 1 for forward.
fn mode(letter: u8) -> Constant {
    Constant::I64(i64::from(letter == b'f'))
}

/// kmeans' direction (the fourth argument) as rows of d (the third).
fn kmeans_dir(_: &[Constant], args: &[ArgValue]) -> Result<Json, String> {
    match (args.get(2), args.get(3)) {
        (Some(ArgValue::Scalar(Constant::I64(d))), Some(ArgValue::Array(ArrayValue::F64(v))))
            if *d > 0 =>
        {
            Ok(Json::Array(
                v.chunks(*d as usize).map(|r| json!(r)).collect(),
            ))
        }
        other => Err(format!("unexpected output {other:?}")),
    }
}

/// lstm's gradient: the main parameters' then the extra ones'.
fn lstm_jacobian(_: &[Constant], args: &[ArgValue]) -> Result<Json, String> {
    match (args.get(1), args.get(3)) {
        (
            Some(ArgValue::Array(ArrayValue::F64(main))),
            Some(ArgValue::Array(ArrayValue::F64(extra))),
        ) => Ok(json!(main.iter().chain(extra).collect::<Vec<_>>())),
        other => Err(format!("unexpected shadows {other:?}")),
    }
}

/// The fifth argument after the call (an `out` array).
fn fifth(_: &[Constant], args: &[ArgValue]) -> Result<Json, String> {
    match args.get(4) {
        Some(ArgValue::Array(ArrayValue::F64(d))) => Ok(json!(d)),
        other => Err(format!("unexpected output {other:?}")),
    }
}

/// The call that evaluates `function` of `module` on `input`.
pub fn call(module: &str, function: &str, input: &Json) -> Result<Call, String> {
    let seed = || scalar(Constant::F64(1.0));
    Ok(match (module, function) {
        ("lse", "primal") => Call {
            function: "lse",
            args: vec![f64s(floats(input, "x")?)],
            output: result,
        },
        ("lse", "gradient") => {
            let x = floats(input, "x")?;
            let zeros = vec![0.0; x.len()];
            Call {
                function: "lse_gradient",
                args: vec![f64s(x), f64s(zeros), seed()],
                output: shadow,
            }
        }
        ("llsq", "primal") => Call {
            function: "llsq",
            args: vec![
                f64s(floats(input, "x")?),
                scalar(Constant::I64(int(input, "n")?)),
            ],
            output: result,
        },
        ("llsq", "gradient") => {
            let x = floats(input, "x")?;
            let zeros = vec![0.0; x.len()];
            Call {
                function: "llsq_gradient",
                args: vec![
                    f64s(x),
                    f64s(zeros),
                    scalar(Constant::I64(int(input, "n")?)),
                    seed(),
                ],
                output: shadow,
            }
        }
        ("det", "primal") => Call {
            function: "det",
            args: vec![
                f64s(floats(input, "A")?),
                scalar(Constant::I64(int(input, "ell")?)),
            ],
            output: result,
        },
        ("det", "gradient") => {
            let a = floats(input, "A")?;
            let zeros = vec![0.0; a.len()];
            Call {
                function: "det_gradient",
                args: vec![
                    f64s(a),
                    f64s(zeros),
                    scalar(Constant::I64(int(input, "ell")?)),
                    seed(),
                ],
                output: shadow,
            }
        }
        ("ode", "primal") => {
            let x = floats(input, "x")?;
            let zeros = vec![0.0; x.len()];
            Call {
                function: "ode_primal",
                args: vec![
                    f64s(x),
                    scalar(Constant::I64(int(input, "s")?)),
                    f64s(zeros),
                ],
                output: third,
            }
        }
        ("ode", "gradient") => {
            let x = floats(input, "x")?;
            let zeros = vec![0.0; x.len()];
            Call {
                function: "ode_gradient",
                args: vec![
                    f64s(x),
                    f64s(zeros),
                    scalar(Constant::I64(int(input, "s")?)),
                    seed(),
                ],
                output: shadow,
            }
        }
        ("saddle", order @ ("ff" | "fr" | "rf" | "rr")) => {
            let start = floats(input, "start")?;
            let [s0, s1] = start[..] else {
                return Err("input.start must hold two numbers".into());
            };
            Call {
                function: "saddle",
                args: vec![
                    scalar(mode(order.as_bytes()[0])),
                    scalar(mode(order.as_bytes()[1])),
                    scalar(Constant::F64(s0)),
                    scalar(Constant::F64(s1)),
                    f64s(vec![0.0; 4]),
                ],
                output: fifth,
            }
        }
        ("particle", order @ ("ff" | "fr" | "rf" | "rr")) => {
            let w = input["w"].as_f64().ok_or("input.w is not a number")?;
            Call {
                function: "particle",
                args: vec![
                    scalar(mode(order.as_bytes()[0])),
                    scalar(mode(order.as_bytes()[1])),
                    scalar(Constant::F64(w)),
                ],
                output: result,
            }
        }
        ("kmeans", "cost" | "dir") => {
            let (p, c) = (rows(input, "points")?, rows(input, "centroids")?);
            let d = input["centroids"][0].as_array().map_or(0, Vec::len);
            let d = scalar(Constant::I64(d as i64));
            if function == "cost" {
                Call {
                    function: "cost",
                    args: vec![f64s(p), f64s(c), d],
                    output: result,
                }
            } else {
                let zeros = vec![0.0; c.len()];
                Call {
                    function: "dir",
                    args: vec![f64s(p), f64s(c), d, f64s(zeros)],
                    output: kmeans_dir,
                }
            }
        }
        ("lstm", "objective" | "jacobian") => {
            let (main, extra) = (rows(input, "main_params")?, rows(input, "extra_params")?);
            let (state, sequence) = (rows(input, "state")?, rows(input, "sequence")?);
            if function == "objective" {
                Call {
                    function: "lstm_objective",
                    args: vec![f64s(main), f64s(extra), f64s(state), f64s(sequence)],
                    output: result,
                }
            } else {
                let (dm, de) = (vec![0.0; main.len()], vec![0.0; extra.len()]);
                Call {
                    function: "lstm_jacobian",
                    args: vec![
                        f64s(main),
                        f64s(dm),
                        f64s(extra),
                        f64s(de),
                        f64s(state),
                        f64s(sequence),
                        seed(),
                    ],
                    output: lstm_jacobian,
                }
            }
        }
        ("ba", "objective") => Call {
            function: "ba_objective",
            args: ba_args(input, false)?,
            output: ba_objective,
        },
        ("ba", "jacobian") => Call {
            function: "ba_jacobian",
            args: ba_args(input, true)?,
            output: ba_jacobian,
        },
        ("ht", _) => return crate::ht::call(function, input),
        ("gmm", "objective") => Call {
            function: "gmm_objective",
            args: gmm_args(input, false)?,
            output: result,
        },
        ("gmm", "jacobian") => Call {
            function: "gmm_jacobian",
            args: gmm_args(input, true)?,
            output: gmm_jacobian,
        },
        _ => {
            return Err(format!(
                "adc has no function `{function}` for module `{module}`"
            ))
        }
    })
}

/// `gmm_objective`'s arguments (alpha, mu, q, l, x, m, gamma), with a
/// zero shadow after each of the first four for `gmm_jacobian` (and its
/// seed last).
fn gmm_args(input: &Json, shadows: bool) -> Result<Vec<ArgValue>, String> {
    let mut args = Vec::new();
    let independents = [
        floats(input, "alpha")?,
        rows(input, "mu")?,
        rows(input, "q")?,
        rows(input, "l")?,
    ];
    for v in independents {
        let zeros = vec![0.0; v.len()];
        args.push(f64s(v));
        if shadows {
            args.push(f64s(zeros));
        }
    }
    args.push(f64s(rows(input, "x")?));
    args.push(scalar(Constant::I64(int(input, "m")?)));
    let gamma = input["gamma"]
        .as_f64()
        .ok_or("input.gamma is not a number")?;
    args.push(scalar(Constant::F64(gamma)));
    if shadows {
        args.push(scalar(Constant::F64(1.0)));
    }
    Ok(args)
}

/// The gradient as GMM's `Independent`: alpha, and mu, q, l as rows.
fn gmm_jacobian(_: &[Constant], args: &[ArgValue]) -> Result<Json, String> {
    let shadow = |k: usize| match args.get(k) {
        Some(ArgValue::Array(ArrayValue::F64(d))) => Ok(d.clone()),
        other => Err(format!("unexpected shadow {other:?}")),
    };
    let alpha = shadow(1)?;
    let k = alpha.len().max(1);
    let as_rows = |v: Vec<f64>| -> Json {
        let w = v.len() / k;
        Json::Array((0..k).map(|c| json!(v[c * w..(c + 1) * w])).collect())
    };
    Ok(json!({
        "alpha": alpha,
        "mu": as_rows(shadow(3)?),
        "q": as_rows(shadow(5)?),
        "l": as_rows(shadow(7)?),
    }))
}

/// ba's arguments (cams, x, w, obs, feats) expanded from GradBench's input
/// (one camera, point, weight and feature, repeated: n cameras, m points,
/// p observations, observation i of camera i mod n and point i mod m, as
/// GradBench's `manual` reads it), then the outputs: reproj_err and w_err
/// for the objective, the Jacobian's vals, rows and cols for `jacobian`.
fn ba_args(input: &Json, jacobian: bool) -> Result<Vec<ArgValue>, String> {
    let count = |field| -> Result<usize, String> {
        let v = int(input, field)?;
        usize::try_from(v)
            .ok()
            .filter(|&v| v > 0)
            .ok_or(format!("input.{field} must be positive"))
    };
    let (n, m, p) = (count("n")?, count("m")?, count("p")?);
    let fixed = |field, len| -> Result<Vec<f64>, String> {
        let v = floats(input, field)?;
        if v.len() == len {
            Ok(v)
        } else {
            Err(format!("input.{field} must hold {len} numbers"))
        }
    };
    let (cam, x, feat) = (fixed("cam", 11)?, fixed("x", 3)?, fixed("feat", 2)?);
    let w = input["w"].as_f64().ok_or("input.w is not a number")?;
    let obs = (0..p)
        .flat_map(|i| [(i % n) as i64, (i % m) as i64])
        .collect();
    let mut args = vec![
        f64s(cam.repeat(n)),
        f64s(x.repeat(m)),
        f64s(vec![w; p]),
        ArgValue::Array(ArrayValue::I64(obs)),
        f64s(feat.repeat(p)),
    ];
    if jacobian {
        let entries = 31 * p;
        args.push(f64s(vec![0.0; entries]));
        args.push(ArgValue::Array(ArrayValue::I64(vec![0; 3 * p + 1])));
        args.push(ArgValue::Array(ArrayValue::I64(vec![0; entries])));
    } else {
        args.push(f64s(vec![0.0; 2 * p]));
        args.push(f64s(vec![0.0; p]));
    }
    Ok(args)
}

/// ba's objective as `manual` reports it: the first observation's
/// reprojection error and the first weight error, each with its count.
fn ba_objective(_: &[Constant], args: &[ArgValue]) -> Result<Json, String> {
    match (args.get(5), args.get(6)) {
        (
            Some(ArgValue::Array(ArrayValue::F64(reproj))),
            Some(ArgValue::Array(ArrayValue::F64(w_err))),
        ) if reproj.len() >= 2 && !w_err.is_empty() => Ok(json!({
            "reproj_error": {"elements": reproj[..2], "repeated": reproj.len() / 2},
            "w_err": {"element": w_err[0], "repeated": w_err.len()},
        })),
        // (Not shown: they may hold millions of numbers.)
        _ => Err("unexpected outputs".into()),
    }
}

/// ba's Jacobian as `manual` reports it: the first 30 entries and the
/// last of each of rows, cols and vals.
fn ba_jacobian(_: &[Constant], args: &[ArgValue]) -> Result<Json, String> {
    fn head_and_last<T: Clone>(v: &[T]) -> Vec<T> {
        let mut out = v[..v.len().min(30)].to_vec();
        out.extend(v.last().cloned());
        out
    }
    match (args.get(5), args.get(6), args.get(7)) {
        (
            Some(ArgValue::Array(ArrayValue::F64(vals))),
            Some(ArgValue::Array(ArrayValue::I64(rows))),
            Some(ArgValue::Array(ArrayValue::I64(cols))),
        ) => Ok(json!({
            "rows": head_and_last(rows),
            "cols": head_and_last(cols),
            "vals": head_and_last(vals),
        })),
        // (Not shown: they may hold millions of numbers.)
        _ => Err("unexpected outputs".into()),
    }
}
