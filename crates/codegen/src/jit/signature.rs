//! Signatures in `.ad` syntax (`double f(double[] x, inout double s)`), as
//! a typed handle's errors show the function's signature and the one its
//! Rust types ask for.

use super::typed::{kind_of, ParamKind};
use adc_ir::{Param, ParamMode, ScalarType, Type};

/// A parameter's type as source writes it: `double`, `double[]`,
/// `inout double`, `out double[]`.
fn param_type(p: &Param) -> String {
    let mode = match p.mode {
        ParamMode::In => "",
        ParamMode::Inout => "inout ",
        ParamMode::Out => "out ",
    };
    match p.ty {
        Type::Array(s) => format!("{mode}{}[]", s.source_name()),
        // A `ref` is an `inout`/`out` scalar; its mode says which.
        Type::Scalar(s) | Type::Ref(s) | Type::Pair(s) => format!("{mode}{}", s.source_name()),
    }
}

/// What a Rust argument type stands for, as source writes it (a writable
/// array or reference is `inout`, which also fits an `out` parameter).
fn kind_type(k: ParamKind) -> String {
    match k {
        ParamKind::Scalar(s) => s.source_name().to_string(),
        ParamKind::Ref(s) => format!("inout {}", s.source_name()),
        ParamKind::Array(s, false) => format!("{}[]", s.source_name()),
        ParamKind::Array(s, true) => format!("inout {}[]", s.source_name()),
    }
}

/// A result list as source writes it: `void`, `double`, `(double, int)`.
fn results(types: &[ScalarType]) -> String {
    match types {
        [] => "void".into(),
        [t] => t.source_name().into(),
        many => {
            let names: Vec<&str> = many.iter().map(|t| t.source_name()).collect();
            format!("({})", names.join(", "))
        }
    }
}

/// The function's signature: `double f(double[] x, int n)`.
pub(crate) fn declared(name: &str, params: &[Param], returns: &[Type]) -> String {
    let params: Vec<String> = params
        .iter()
        .map(|p| format!("{} {}", param_type(p), p.name))
        .collect();
    let returns: Vec<ScalarType> = returns.iter().map(|t| t.elem()).collect();
    format!("{} {name}({})", results(&returns), params.join(", "))
}

/// The signature a handle's Rust types ask for, without parameter names;
/// a parameter its kind fits is written as the function declares it, so
/// only the differences show.
pub(crate) fn asked(
    name: &str,
    params: &[Param],
    kinds: &[ParamKind],
    returns: &[ScalarType],
) -> String {
    let params: Vec<String> = kinds
        .iter()
        .enumerate()
        .map(|(i, k)| match params.get(i) {
            Some(p) if kind_of(p) == Some(*k) => param_type(p),
            _ => kind_type(*k),
        })
        .collect();
    format!("{} {name}({})", results(returns), params.join(", "))
}
