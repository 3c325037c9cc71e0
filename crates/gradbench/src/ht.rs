//! GradBench's `ht` (hand tracking): how its input becomes the arguments of
//! `gradbench/evals/ht.ad`'s functions, and their results an output.

use crate::evals::Call;
use adc::{ArgValue, ArrayValue, Constant};
use serde_json::{json, Value as Json};

/// The call that evaluates `function` of `ht` on `input`.
pub fn call(function: &str, input: &Json) -> Result<Call, String> {
    Ok(match function {
        "objective" => Call {
            function: "ht_objective",
            args: args(input, false)?,
            output: objective,
        },
        "jacobian" => Call {
            function: "ht_jacobian",
            args: args(input, true)?,
            output: jacobian,
        },
        _ => return Err(format!("adc has no function `{function}` for module `ht`")),
    })
}

/// The numbers of `v`, an array of `width`-number rows (each row itself a
/// number array, or an array of them, as a 4x4 matrix's rows are).
fn rows(v: &Json, field: &str, width: usize) -> Result<Vec<f64>, String> {
    fn flatten(v: &Json, out: &mut Vec<f64>) -> bool {
        match v {
            Json::Array(a) => a.iter().all(|x| flatten(x, out)),
            _ => v.as_f64().map(|x| out.push(x)).is_some(),
        }
    }
    let mut out = Vec::new();
    for row in v.as_array().ok_or(format!("{field} is not an array"))? {
        let start = out.len();
        if !flatten(row, &mut out) || out.len() - start != width {
            return Err(format!("{field} must hold rows of {width} numbers"));
        }
    }
    Ok(out)
}

/// The integers of `v` (rows of `width`), each in `lo..hi`.
fn ints(v: &Json, field: &str, width: usize, lo: i64, hi: usize) -> Result<Vec<i64>, String> {
    let bad = || format!("{field} must hold integers from {lo} to {}", hi as i64 - 1);
    let numbers = if width == 1 {
        v.as_array()
            .ok_or(format!("{field} is not an array"))?
            .iter()
            .map(|x| x.as_f64().ok_or_else(bad))
            .collect::<Result<Vec<_>, _>>()?
    } else {
        rows(v, field, width)?
    };
    numbers
        .iter()
        .map(|&x| {
            let i = x as i64;
            (i as f64 == x && i >= lo && i < hi as i64)
                .then_some(i)
                .ok_or_else(bad)
        })
        .collect()
}

fn f64s(v: Vec<f64>) -> ArgValue {
    ArgValue::Array(ArrayValue::F64(v))
}

fn i64s(v: Vec<i64>) -> ArgValue {
    ArgValue::Array(ArrayValue::I64(v))
}

/// The arguments of `ht_objective` and `ht_jacobian`: theta, the model
/// (parents, base_relatives, inverse_base_absolutes, base_positions,
/// weights, triangles, is_mirrored), correspondences, points and us (each
/// matrix flattened row by row), then the output: the residuals, or the
/// column-major Jacobian (26 columns, 28 with us).
fn args(input: &Json, jacobian: bool) -> Result<Vec<ArgValue>, String> {
    let data = &input["data"];
    let model = &data["model"];
    let theta = rows(&input["theta"], "input.theta", 1)?;
    if theta.len() != 26 {
        return Err("input.theta must hold 26 numbers".into());
    }
    let parents = model["parents"]
        .as_array()
        .ok_or("input.data.model.parents is not an array")?;
    let nb = parents.len();
    let parents: Vec<i64> = parents
        .iter()
        .enumerate()
        .map(|(b, p)| {
            p.as_i64()
                .filter(|&p| p >= -1 && p < b as i64)
                .ok_or(format!("bone {b}'s parent must be -1 or an earlier bone"))
        })
        .collect::<Result<_, _>>()?;
    let field = |name: &str| format!("input.data.model.{name}");
    let base_relatives = rows(&model["base_relatives"], &field("base_relatives"), 16)?;
    let inverse = rows(
        &model["inverse_base_absolutes"],
        &field("inverse_base_absolutes"),
        16,
    )?;
    if base_relatives.len() != 16 * nb || inverse.len() != 16 * nb {
        return Err("the model must have a 4x4 transform of each kind per bone".into());
    }
    let base_positions = rows(&model["base_positions"], &field("base_positions"), 4)?;
    let nv = base_positions.len() / 4;
    let weights = rows(&model["weights"], &field("weights"), nb)?;
    if weights.len() != nb * nv {
        return Err("the model must have a weight per bone of each vertex".into());
    }
    let triangles = ints(&model["triangles"], &field("triangles"), 3, 0, nv)?;
    let is_mirrored = model["is_mirrored"]
        .as_bool()
        .ok_or("input.data.model.is_mirrored is not a bool")?;
    let points = rows(&data["points"], "input.data.points", 3)?;
    let npts = points.len() / 3;
    let us = match &input["us"] {
        Json::Null => Vec::new(),
        us => rows(us, "input.us", 2)?,
    };
    if !us.is_empty() && us.len() != 2 * npts {
        return Err("input.us must be empty or hold two numbers per point".into());
    }
    // Points correspond to vertices, or with us to triangles.
    let targets = if us.is_empty() {
        nv
    } else {
        triangles.len() / 3
    };
    let correspondences = ints(
        &data["correspondences"],
        "input.data.correspondences",
        1,
        0,
        targets,
    )?;
    if correspondences.len() != npts {
        return Err("input.data has a correspondence per point".into());
    }
    let out = if jacobian {
        3 * npts * (26 + if us.is_empty() { 0 } else { 2 })
    } else {
        3 * npts
    };
    Ok(vec![
        f64s(theta),
        i64s(parents),
        f64s(base_relatives),
        f64s(inverse),
        f64s(base_positions),
        f64s(weights),
        i64s(triangles),
        ArgValue::Scalar(Constant::Bool(is_mirrored)),
        i64s(correspondences),
        f64s(points),
        f64s(us),
        f64s(vec![0.0; out]),
    ])
}

/// The output argument (the last) and the number of points.
fn output(args: &[ArgValue]) -> Result<(&[f64], usize), String> {
    match (args.get(9), args.get(11)) {
        (
            Some(ArgValue::Array(ArrayValue::F64(points))),
            Some(ArgValue::Array(ArrayValue::F64(out))),
        ) => Ok((out, points.len() / 3)),
        other => Err(format!("unexpected arguments {other:?}")),
    }
}

/// The residuals, 3 per point.
fn objective(_: &[Constant], args: &[ArgValue]) -> Result<Json, String> {
    Ok(json!(output(args)?.0))
}

/// The Jacobian as rows (3 per point), from its column-major form.
fn jacobian(_: &[Constant], args: &[ArgValue]) -> Result<Json, String> {
    let (jac, npts) = output(args)?;
    let rows = 3 * npts;
    if rows == 0 {
        return Ok(json!([]));
    }
    let cols = jac.len() / rows;
    Ok(Json::Array(
        (0..rows)
            .map(|r| json!((0..cols).map(|c| jac[c * rows + r]).collect::<Vec<_>>()))
            .collect(),
    ))
}
