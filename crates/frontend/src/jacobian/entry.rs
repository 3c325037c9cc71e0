//! Where `adc run --jacobian`/`--hessian` and the library's Jacobian and
//! Hessian requests put their attribute: before the function in the
//! source, or, for a function the source does not define (a derivative,
//! Jacobian or Hessian an attribute generates), on a wrapper appended to
//! the source that calls it with its own parameters and returns what it
//! returns. Guarantees: the source is otherwise unchanged; the wrapper is
//! `static`, named by nothing in the source, and has the generated
//! function's parameters (names, types, modes) in order.

use crate::ast::*;
use adc_ir::{Param, ParamMode, Type};

/// A function of the compiled module: its parameters and results (as
/// `adc_ir::Function` and `JitFunction` have them).
pub struct Signature {
    pub params: Vec<Param>,
    pub returns: Vec<Type>,
}

/// `source` with `[attr]` put before the function `of`, or on a wrapper of
/// it when the source has no function `of` and `compiled` (asked only
/// then) gives its signature; the error names what is missing, the
/// `what` of `of` ("Jacobian", "Hessian").
pub fn with_attribute(
    source: &str,
    of: &str,
    attr: &str,
    what: &str,
    compiled: impl FnOnce() -> Option<Signature>,
) -> Result<String, String> {
    let (items, _) = crate::parse::parse_program(source);
    let named = |body: bool| {
        items.iter().find_map(|i| match i {
            Item::Func(f) if f.name.name == of && f.body.is_some() == body => Some(f),
            _ => None,
        })
    };
    let kind = attr.split('(').next().unwrap_or(attr);
    let tuple = || format!("`{kind}` on `{of}`, which returns a tuple, is not supported yet");
    if let Some(f) = named(true) {
        // Refused here as the attribute would be, without a line quoting
        // the attribute this request wrote (and its generated name).
        if matches!(f.ret, ReturnType::Tuple(_)) {
            return Err(tuple());
        }
        let at = f.span.start as usize;
        return Ok(format!("{}[{attr}] {}", &source[..at], &source[at..]));
    }
    if named(false).is_some() {
        return Err(format!(
            "`{of}` is an `extern` declaration: adc has no body of it to take the {what} of"
        ));
    }
    let sig = compiled().ok_or_else(|| format!("no function `{of}` to take the {what} of"))?;
    let ret = match sig.returns.as_slice() {
        [] => "void",
        [t] => t.elem().source_name(),
        _ => return Err(tuple()),
    };
    let name = fresh(source, &format!("adc_{kind}_of_{of}"));
    let mut params = Vec::new();
    let mut args = Vec::new();
    for (i, p) in sig.params.iter().enumerate() {
        let mode = match p.mode {
            ParamMode::In => "",
            ParamMode::Inout => "inout ",
            ParamMode::Out => "out ",
        };
        let ty = match p.ty {
            Type::Array(s) => format!("{}[]", s.source_name()),
            Type::Scalar(s) | Type::Ref(s) => s.source_name().to_string(),
            Type::Pair(_) => return Err(format!("`{of}` takes a dual pair: no {what} of it")),
        };
        // The IR's name when it is one the wrapper can take.
        let taken = p.name == of || sig.params[..i].iter().any(|q| q.name == p.name);
        let arg = if is_plain_name(&p.name) && !taken {
            p.name.clone()
        } else {
            format!("adc_p{i}")
        };
        params.push(format!("{mode}{ty} {arg}"));
        args.push(arg);
    }
    let call = format!("{of}({})", args.join(", "));
    let body = if ret == "void" {
        format!("{call};")
    } else {
        format!("return {call};")
    };
    Ok(format!(
        "{source}\n[{attr}] static {ret} {name}({}) {{ {body} }}\n",
        params.join(", ")
    ))
}

/// `base`, with `_` appended until the source does not contain it.
fn fresh(source: &str, base: &str) -> String {
    let mut name = base.to_string();
    while source.contains(&name) {
        name.push('_');
    }
    name
}

/// A name the wrapper may give a parameter: an identifier, not a keyword
/// nor a name a function may not take, not one of adc's (`adc_p0`, ...).
fn is_plain_name(n: &str) -> bool {
    crate::lower::reserved_function_name(n, true).is_none() && !n.starts_with("adc_")
}
