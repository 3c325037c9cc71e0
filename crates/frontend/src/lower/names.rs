//! Names a function may not take (built-ins, the C library functions
//! compiled code calls, adc's prefixes), and the C signatures an `extern`
//! of a math library function must have.

use crate::ast::*;
use crate::diag::Diagnostic;
use adc_ir::{ScalarType, Span};

/// Built-in names a user function may not take (they would be unreachable).
const RESERVED: &[&str] = &["len", "print", "no_diff"];

/// C library functions that compiled code calls itself (allocation, copies,
/// output, and the number formatting of `print` in object files): a
/// function of the module with one of these names would take their place
/// in an object file (or clash with their signature). `crates/cli/tests/
/// objects.rs` checks that an object file needs no other symbol but libm's.
pub const C_RUNTIME: &[&str] = &[
    "calloc",
    "malloc",
    "realloc",
    "free",
    "memcpy",
    "memmove",
    "memset",
    "write",
    "exit",
    "abort",
    "malloc_usable_size",
    "fflush",
    "strchr",
    "strlen",
    "strpbrk",
    "strfromd",
    "strfromf",
    "strtod",
    "strtof",
    "strtol",
];

/// Why a function defined by the module (a generated derivative asked for
/// from Rust, say) may not be called `name`: not an identifier, a keyword,
/// or a reserved name (E0202, E0204).
pub fn function_name_error(name: &str) -> Option<String> {
    reserved_function_name(name, true)
}

/// Why a function of textual IR may not be called `name`: not an
/// identifier, or a keyword (a header could not declare it), or a reserved
/// name (E0202, E0204); `has_body` false for a declaration.
pub fn reserved_function_name(name: &str, has_body: bool) -> Option<String> {
    let mut toks = crate::lexer::tokens(name);
    let is_ident = matches!(
        (toks.next(), toks.next()),
        (Some(Ok((0, crate::lexer::Tok::Ident(ref n), end))), None) if n == name && end == name.len()
    );
    if !is_ident {
        return Some(format!("`{name}` is not an identifier (or is a keyword)"));
    }
    let id = Ident {
        name: name.to_string(),
        span: Span::UNDEFINED,
    };
    reserved_name(&id, has_body).map(|d| d.message)
}

/// An `extern` of a math built-in's C name (`cos`, `cosf`) declares that
/// very function, which every call of the built-in uses too: any other
/// signature than C's (`extern float cos(double x);`) would call it wrongly
/// (E0202).
pub(crate) fn math_extern_signature(f: &FuncDecl) -> Option<Diagnostic> {
    if f.body.is_some() {
        return None;
    }
    let n = f.name.name.as_str();
    if let Some(d) = int_math_extern_signature(f) {
        return Some(d);
    }
    let (m, ty) = adc_ir::MathFunc::ALL
        .iter()
        .filter(|m| m.in_source())
        .find_map(|m| {
            [ScalarType::F64, ScalarType::F32]
                .into_iter()
                .find(|t| m.libm_symbol(*t) == n)
                .map(|t| (*m, t))
        })?;
    let base = if ty == ScalarType::F64 {
        BaseType::Double
    } else {
        BaseType::Float
    };
    let exact = f.ret == ReturnType::Base(base)
        && f.params.len() == m.arity()
        && f.params
            .iter()
            .all(|p| p.mode == Mode::Value && !p.is_array && p.ty == base);
    if exact {
        return None;
    }
    let c = if ty == ScalarType::F64 {
        "double"
    } else {
        "float"
    };
    let params = vec![format!("{c} x"); m.arity()].join(", ");
    Some(
        Diagnostic::error(
            "E0202",
            format!("`{n}` is a math built-in: an `extern` of it must have its C signature"),
            f.name.span,
        )
        .with_note(format!(
            "declare it as `extern {c} {n}({params});`, or choose another name"
        )),
    )
}

/// The math library's functions with a C `int` that codegen calls as one
/// (`abi::c_int_positions`): a declaration must have their C signature,
/// `int` for C's `int` (`extern double ldexp(double x, double e);` passed a
/// double where C reads an `int`).
fn int_math_extern_signature(f: &FuncDecl) -> Option<Diagnostic> {
    use BaseType::{Double as D, Float as F, Int as I};
    let n = f.name.name.as_str();
    let (params, ret): (&[BaseType], BaseType) = match n {
        "ilogb" | "finite" | "isinf" | "isnan" => (&[D], I),
        "ilogbf" | "finitef" | "isinff" | "isnanf" => (&[F], I),
        "ldexp" | "scalbn" => (&[D, I], D),
        "ldexpf" | "scalbnf" => (&[F, I], F),
        "jn" | "yn" => (&[I, D], D),
        "jnf" | "ynf" => (&[I, F], F),
        _ => return None,
    };
    let exact = f.ret == ReturnType::Base(ret)
        && f.params.len() == params.len()
        && f.params
            .iter()
            .zip(params)
            .all(|(p, t)| p.mode == Mode::Value && !p.is_array && p.ty == *t);
    if exact {
        return None;
    }
    let c = |t: &BaseType| match t {
        D => "double",
        F => "float",
        _ => "int",
    };
    let ps: Vec<String> = params
        .iter()
        .enumerate()
        .map(|(k, t)| format!("{} p{k}", c(t)))
        .collect();
    Some(
        Diagnostic::error(
            "E0202",
            format!(
                "`{n}` is a math library function: an `extern` of it must have its C signature"
            ),
            f.name.span,
        )
        .with_note(format!(
            "declare it as `extern {} {n}({});`",
            c(&ret),
            ps.join(", ")
        )),
    )
}

/// Why a function may not be called `name`: a built-in (`len`, a math
/// function, which derivative code also calls: a definition would take its
/// place), a C library function compiled code needs, or a prefix of adc's
/// own symbols. An `extern` of a math function's own name declares that
/// very function, and stays allowed.
pub(crate) fn reserved_name(name: &Ident, has_body: bool) -> Option<Diagnostic> {
    let n = name.name.as_str();
    let math = adc_ir::MathFunc::ALL
        .iter()
        .filter(|m| m.in_source())
        .any(|m| {
            n == m.name()
                || n == m.libm_symbol(ScalarType::F64)
                || n == m.libm_symbol(ScalarType::F32)
        });
    if RESERVED.contains(&n) || (math && has_body) {
        return Some(Diagnostic::error(
            "E0202",
            format!("`{n}` is a built-in and cannot be redefined"),
            name.span,
        ));
    }
    if C_RUNTIME.contains(&n) || n.starts_with("__adc") || n.starts_with("adc_rt_") {
        return Some(
            Diagnostic::error(
                "E0204",
                format!("`{n}` is a name compiled code uses for itself"),
                name.span,
            )
            .with_note("adc's generated code calls the C library's function of this name (or uses the prefix for its own symbols); choose another name"),
        );
    }
    None
}

/// Whether `name` is a built-in function: `len`, `print`, `no_diff`,
/// `min`, `max` or a math function.
pub(crate) fn is_builtin(name: &str) -> bool {
    matches!(name, "len" | "print" | "no_diff" | "min" | "max")
        || adc_ir::MathFunc::from_source_name(name).is_some()
}
