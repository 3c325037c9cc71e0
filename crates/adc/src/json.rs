//! JSON for `adc run`: reading `--args` by parameter type and printing the
//! result object of docs/cli.md.

use adc_codegen::{ArgValue, ArrayValue};
use adc_ir::{inst::fmt_f32, inst::fmt_f64, Constant, Param, ParamMode, ScalarType, Type};
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

/// The JSON array given to the option `what` (`--args`, `--tangent`):
/// invalid JSON says what is wrong and where (line and column).
///
/// ```
/// let err = adc::json::json_list("--tangent", "[1,").unwrap_err();
/// assert_eq!(err, "`--tangent` is not valid JSON: EOF while parsing a value at line 1 column 3");
/// assert!(adc::json::json_list("--args", "{}").unwrap_err().contains("must be a JSON array"));
/// ```
pub fn json_list(what: &str, text: &str) -> Result<Vec<Json>, String> {
    let v: Json =
        serde_json::from_str(text).map_err(|e| format!("`{what}` is not valid JSON: {e}"))?;
    match v {
        Json::Array(items) => Ok(items),
        other => Err(format!(
            "`{what}` must be a JSON array with one value per parameter, found `{other}`"
        )),
    }
}

/// A parameter in `.ad` syntax: `inout double[] xs`.
pub fn param_text(p: &Param) -> String {
    let mode = match p.mode {
        ParamMode::In => "",
        ParamMode::Inout => "inout ",
        ParamMode::Out => "out ",
    };
    let brackets = if matches!(p.ty, Type::Array(_)) {
        "[]"
    } else {
        ""
    };
    format!("{mode}{}{brackets} {}", type_name(p.ty.elem()), p.name)
}

fn type_name(s: ScalarType) -> &'static str {
    match s {
        ScalarType::Bool => "bool",
        ScalarType::I64 => "int",
        ScalarType::F32 => "float",
        ScalarType::F64 => "double",
    }
}

/// "`f` takes 2 parameters: `double x, double[] ys`", "`g` takes no
/// parameters".
pub fn takes(entry: &str, params: &[Param]) -> String {
    if params.is_empty() {
        return format!("`{entry}` takes no parameters");
    }
    let list: Vec<String> = params.iter().map(param_text).collect();
    format!(
        "`{entry}` takes {}: `{}`",
        plural(params.len(), "parameter"),
        list.join(", ")
    )
}

/// "1 value", "2 values".
pub fn plural(n: usize, noun: &str) -> String {
    format!("{n} {noun}{}", if n == 1 { "" } else { "s" })
}

/// An example of `--args` for `params`: `[1.0, [1.0, 2.0], 1, true]`.
pub fn example_args(params: &[Param]) -> String {
    let one = |s: ScalarType| match s {
        ScalarType::Bool => "true",
        ScalarType::I64 => "1",
        ScalarType::F32 | ScalarType::F64 => "1.0",
    };
    let items: Vec<String> = params
        .iter()
        .map(|p| match p.ty {
            Type::Array(s) => format!("[{}, {}]", one(s), one(s)),
            t => one(t.elem()).to_string(),
        })
        .collect();
    format!("[{}]", items.join(", "))
}

/// Reads `--args` against the parameters of `entry`; the error says which
/// argument, or lists the parameters when the count is wrong.
///
/// ```
/// let params = [adc_ir::Param { name: "x".into(), ty: adc::Type::Scalar(adc::ScalarType::F64), mode: adc_ir::ParamMode::In }];
/// let err = adc::json::args_from_json("f", "[1, 2]", &params).unwrap_err();
/// assert_eq!(err, "`--args` has 2 values, but `f` takes 1 parameter: `double x`");
/// ```
pub fn args_from_json(entry: &str, text: &str, params: &[Param]) -> Result<Vec<ArgValue>, String> {
    let items = json_list("--args", text)?;
    if items.len() != params.len() {
        return Err(format!(
            "`--args` has {}, but {}",
            plural(items.len(), "value"),
            takes(entry, params)
        ));
    }
    params
        .iter()
        .zip(&items)
        .map(|(p, item)| arg_from_json(p, item))
        .collect()
}

/// One argument for parameter `p`; the error names the parameter.
pub fn arg_from_json(p: &Param, item: &Json) -> Result<ArgValue, String> {
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
            let cs: Option<Vec<Constant>> = xs.iter().map(|x| scalar_from_json(x, s)).collect();
            let cs = cs.ok_or_else(bad)?;
            Ok(ArgValue::Array(array_value(s, &cs)))
        }
    }
}

fn array_value(s: ScalarType, cs: &[Constant]) -> ArrayValue {
    match s {
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
    }
}

fn describe(t: Type) -> String {
    match t {
        Type::Scalar(ScalarType::Bool) | Type::Ref(ScalarType::Bool) => "`true` or `false`".into(),
        Type::Scalar(ScalarType::I64) | Type::Ref(ScalarType::I64) => "an integer".into(),
        Type::Scalar(_) | Type::Ref(_) => "a number".into(),
        Type::Pair(_) => "nothing (a dpair is no parameter type)".into(),
        Type::Array(ScalarType::Bool) => "an array of `true`/`false` values".into(),
        Type::Array(ScalarType::I64) => "an array of integers".into(),
        Type::Array(_) => "an array of numbers".into(),
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
            "labels": labels, "notes": d.notes, "helps": d.helps,
        });
        out.push_str(&obj.to_string());
        out.push('\n');
    }
    out
}
