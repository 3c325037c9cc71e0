//! JSON for `adc run`: reading `--args` by parameter type and printing the
//! result object of docs/cli.md.

use adc_codegen::{ArgValue, ArrayValue};
use adc_ir::{inst::fmt_f32, inst::fmt_f64, Constant, Param, ScalarType, Type};
use serde_json::Value as Json;

fn scalar_from_json(v: &Json, s: ScalarType) -> Option<Constant> {
    match s {
        ScalarType::Bool => v.as_bool().map(Constant::Bool),
        // An integral number (`2` or `2.0`) within `int`'s range (docs/cli.md).
        ScalarType::I64 => v
            .as_i64()
            .or_else(|| {
                let x = v.as_f64()?;
                (x.fract() == 0.0 && x.abs() < 9.2e18).then_some(x as i64)
            })
            .map(Constant::I64),
        ScalarType::F32 => float_from_json(v).map(|x| Constant::F32(x as f32)),
        ScalarType::F64 => float_from_json(v).map(Constant::F64),
    }
}

fn float_from_json(v: &Json) -> Option<f64> {
    match v {
        Json::Number(n) => n.as_f64(),
        Json::String(s) => match s.as_str() {
            "inf" => Some(f64::INFINITY),
            "-inf" => Some(f64::NEG_INFINITY),
            "nan" => Some(f64::NAN),
            _ => None,
        },
        _ => None,
    }
}

/// Reads `--args` against the parameters; the error says which argument.
pub fn args_from_json(text: &str, params: &[Param]) -> Result<Vec<ArgValue>, String> {
    let v: Json =
        serde_json::from_str(text).map_err(|e| format!("`--args` is not valid JSON: {e}"))?;
    let items = v.as_array().ok_or("`--args` must be a JSON array")?;
    if items.len() != params.len() {
        return Err(format!(
            "`--args` has {} values, but the function takes {}",
            items.len(),
            params.len()
        ));
    }
    params
        .iter()
        .zip(items)
        .map(|(p, item)| {
            let bad = || {
                format!(
                    "argument `{}`: expected {}, found `{item}`",
                    p.name,
                    describe(p.ty)
                )
            };
            match p.ty {
                Type::Scalar(s) | Type::Ref(s) => scalar_from_json(item, s)
                    .map(ArgValue::Scalar)
                    .ok_or_else(bad),
                // Never a parameter of verified IR; no JSON value fits it.
                Type::Pair(_) => Err(bad()),
                Type::Array(s) => {
                    let xs = item.as_array().ok_or_else(bad)?;
                    let cs: Option<Vec<Constant>> =
                        xs.iter().map(|x| scalar_from_json(x, s)).collect();
                    let cs = cs.ok_or_else(bad)?;
                    Ok(ArgValue::Array(match s {
                        ScalarType::Bool => ArrayValue::Bool(
                            cs.iter()
                                .map(|c| matches!(c, Constant::Bool(true)))
                                .collect(),
                        ),
                        ScalarType::I64 => ArrayValue::I64(
                            cs.iter()
                                .map(|c| if let Constant::I64(i) = c { *i } else { 0 })
                                .collect(),
                        ),
                        ScalarType::F32 => ArrayValue::F32(
                            cs.iter()
                                .map(|c| if let Constant::F32(x) = c { *x } else { 0.0 })
                                .collect(),
                        ),
                        ScalarType::F64 => ArrayValue::F64(
                            cs.iter()
                                .map(|c| if let Constant::F64(x) = c { *x } else { 0.0 })
                                .collect(),
                        ),
                    }))
                }
            }
        })
        .collect()
}

fn describe(t: Type) -> String {
    match t {
        Type::Scalar(ScalarType::Bool) | Type::Ref(ScalarType::Bool) => "`true` or `false`".into(),
        Type::Scalar(ScalarType::I64) | Type::Ref(ScalarType::I64) => "an integer".into(),
        Type::Scalar(_) | Type::Ref(_) => "a number".into(),
        Type::Pair(_) => "nothing (a dpair is no parameter type)".into(),
        Type::Array(s) => format!(
            "an array of {}",
            describe(Type::Scalar(s))
                .trim_start_matches("an ")
                .trim_start_matches("a ")
        ),
    }
}

/// A scalar as JSON text: floats in the shortest form that reads back to
/// the same value of their own type, non-finite ones as strings.
pub fn scalar_json(c: Constant) -> String {
    let float = |s: String| {
        if s == "nan" || s.ends_with("inf") {
            format!("\"{s}\"")
        } else {
            s
        }
    };
    match c {
        Constant::Bool(b) => b.to_string(),
        Constant::I64(i) => i.to_string(),
        Constant::F32(x) => float(fmt_f32(x)),
        Constant::F64(x) => float(fmt_f64(x)),
    }
}

pub fn arg_json(a: &ArgValue) -> String {
    let list = |items: Vec<String>| format!("[{}]", items.join(", "));
    match a {
        ArgValue::Scalar(c) => scalar_json(*c),
        ArgValue::Array(ArrayValue::Bool(v)) => list(v.iter().map(|b| b.to_string()).collect()),
        ArgValue::Array(ArrayValue::I64(v)) => list(v.iter().map(|i| i.to_string()).collect()),
        ArgValue::Array(ArrayValue::F32(v)) => {
            list(v.iter().map(|x| scalar_json(Constant::F32(*x))).collect())
        }
        ArgValue::Array(ArrayValue::F64(v)) => {
            list(v.iter().map(|x| scalar_json(Constant::F64(*x))).collect())
        }
    }
}

/// The result: `null` for void, a value, or an array for a tuple.
pub fn result_json(values: &[Constant]) -> String {
    match values {
        [] => "null".into(),
        [one] => scalar_json(*one),
        many => format!(
            "[{}]",
            many.iter()
                .map(|c| scalar_json(*c))
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
}

/// `--error-format json`: one JSON object per diagnostic, one per line:
/// `{"severity", "code", "message", "file", "line", "column", "end_line",
/// "end_column", "labels": [{"line", "column", "end_line", "end_column",
/// "message"}], "notes": [..]}`, lines and columns 1-based (columns in
/// characters); a diagnostic without a place has `null` for them.
pub fn diagnostics_json(diags: &[adc_frontend::Diagnostic], path: &str, source: &str) -> String {
    use serde_json::json;
    let lines = adc_frontend::diag::LineIndex::new(source);
    let place = |span: adc_ir::Span| {
        if !span.is_defined() {
            return (Json::Null, Json::Null, Json::Null, Json::Null);
        }
        let (l, c) = lines.line_col(span.start);
        let (el, ec) = lines.line_col(span.end.max(span.start));
        (json!(l), json!(c), json!(el), json!(ec))
    };
    let mut out = String::new();
    for d in diags {
        let (line, column, end_line, end_column) = place(d.span);
        let labels: Vec<Json> = d
            .labels
            .iter()
            .map(|(span, message)| {
                let (line, column, end_line, end_column) = place(*span);
                json!({"line": line, "column": column, "end_line": end_line,
                       "end_column": end_column, "message": message})
            })
            .collect();
        let severity = if d.is_error() { "error" } else { "warning" };
        let obj = json!({
            "severity": severity, "code": d.code, "message": d.message, "file": path,
            "line": line, "column": column, "end_line": end_line, "end_column": end_column,
            "labels": labels, "notes": d.notes,
        });
        out.push_str(&obj.to_string());
        out.push('\n');
    }
    out
}
