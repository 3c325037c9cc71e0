//! The evals adc implements: each module's `.ad` source (under
//! `gradbench/evals/`) and how a GradBench input becomes arguments of its
//! functions and their results an output.

use adc::{ArgValue, ArrayValue, Constant};
use serde_json::{json, Value as Json};

/// The source of a GradBench module, if adc implements it.
pub fn source(module: &str) -> Option<&'static str> {
    Some(match module {
        "lse" => include_str!("../../../gradbench/evals/lse.ad"),
        "llsq" => include_str!("../../../gradbench/evals/llsq.ad"),
        "det" => include_str!("../../../gradbench/evals/det.ad"),
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
        _ => {
            return Err(format!(
                "adc has no function `{function}` for module `{module}`"
            ))
        }
    })
}
