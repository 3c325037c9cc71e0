//! Reading a `[jacobian(NAME, ...)]` attribute: its activities and
//! options, checked against the function they are on.

use super::{is_float, rev::has_float_result, sparse_rows, sparse_rows::Force, width};
use crate::ast::*;
use crate::diag::Diagnostic;
use adc_ir::Span;

fn err(message: String, span: Span) -> Diagnostic {
    Diagnostic::error("E0309", message, span)
}

#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum By {
    Columns,
    Rows,
    Sparse(Force),
}

/// The generated name, whether each parameter is `Dual` (a float one not
/// made `Const`), the mode asked for and the chunk width given.
pub(super) type Request = (String, Vec<bool>, Option<By>, Option<u32>);

/// What [`read_options`] reads: activities, mode, `reverse`'s span, width.
type Options = (Vec<bool>, Option<By>, Span, Option<(u32, Span)>);

/// The activities and options after the name in `a` (`args`): the
/// activities (empty when none are given), the mode, where `reverse` was
/// given (for its diagnostics) and the width with its span.
fn read_options(
    f: &FuncDecl,
    a: &Attr,
    args: &[AttrArg],
    items: &[Item],
) -> Result<Options, Diagnostic> {
    let mut acts = Vec::new();
    let mut by = None;
    let mut reverse_at = a.span;
    let mut width = None;
    for arg in args {
        if let AttrArg::Named(id, value, span) = arg {
            if id.name != "width" {
                return Err(err(
                    format!(
                        "unknown option `{}` of `jacobian` (its option is `width`)",
                        id.name
                    ),
                    id.span,
                ));
            }
            if width.is_some() {
                return Err(Diagnostic::error("E0308", "`width` is given twice", *span));
            }
            width = Some((width::given(value, *span, items)?, *span));
            continue;
        }
        let AttrArg::Ident(id) = arg else {
            return Err(err("expected an activity or `forward`".into(), a.span));
        };
        match id.name.as_str() {
            "Const" | "Dual" if acts.len() < f.params.len() => acts.push(id.name == "Dual"),
            "forward" if by.is_none() => by = Some(By::Columns),
            "forward" if by == Some(By::Sparse(Force::Auto)) => {
                by = Some(By::Sparse(Force::Columns))
            }
            "sparse" if by.is_none() => by = Some(By::Sparse(Force::Auto)),
            "sparse" if by == Some(By::Columns) => by = Some(By::Sparse(Force::Columns)),
            "sparse" if by == Some(By::Rows) => by = Some(By::Sparse(Force::Rows)),
            sparse_rows::COLORS_OPTION if by == Some(By::Sparse(Force::Columns)) => {
                by = Some(By::Sparse(Force::Colors))
            }
            "reverse" if by == Some(By::Sparse(Force::Auto)) => {
                reverse_at = id.span;
                by = Some(By::Sparse(Force::Rows))
            }
            "reverse" if by.is_none() => {
                reverse_at = id.span;
                by = Some(By::Rows)
            }
            "forward" | "reverse" | "sparse" => {
                return Err(err(
                    "give `forward`, `reverse` and `sparse` at most once each, and not both `forward` and `reverse` (with `sparse`, they force columns or rows)".into(),
                    id.span,
                ))
            }
            other => {
                return Err(err(
                    format!("`{other}` is not an activity (`Const`, `Dual`, one per parameter) nor an option (`forward`, `reverse`, `sparse`, `width = W`) of `jacobian`"),
                    id.span,
                ))
            }
        }
    }
    Ok((acts, by, reverse_at, width))
}

/// The attribute `a` on `f` read (`items`: the program, for a width given
/// as a `const int`).
pub(super) fn request(f: &FuncDecl, a: &Attr, items: &[Item]) -> Result<Request, Diagnostic> {
    let args = a.args.clone().unwrap_or_default();
    let Some(AttrArg::Ident(name)) = args.first() else {
        return Err(err(
            "`jacobian` needs the generated function's name first".into(),
            a.span,
        ));
    };
    if let Some(d) = crate::lower::reserved_function_name(&name.name, true) {
        return Err(err(d, name.span));
    }
    let (acts, by, reverse_at, width) = read_options(f, a, &args[1..], items)?;
    let dual = duals(f, acts, a.span, "E0309")?;
    if let (Some(by @ (By::Rows | By::Sparse(_))), Some((_, span))) = (by, width) {
        let what = if by == By::Rows { "reverse" } else { "sparse" };
        return Err(err(
            format!("`width` sets the chunk of columns of a dense Jacobian; with `{what}` it is not supported yet"),
            span,
        ));
    }
    if matches!(f.ret, ReturnType::Tuple(_)) {
        return Err(err(
            format!(
                "`jacobian` on `{}`, which returns a tuple, is not supported yet",
                f.name.name
            ),
            a.span,
        ));
    }
    if by == Some(By::Rows) && !has_float_result(f) && f.body.is_none() {
        return Err(err(
            format!("`jacobian(..., reverse)` of a function without a `float` or `double` result needs its body (its rows go through a copy returning `double`); `{}` has none", f.name.name),
            reverse_at,
        ));
    }
    if by == Some(By::Sparse(Force::Rows)) && !sparse_rows::rows_possible(f) {
        return Err(err(
            if f.body.is_none() {
                format!("`jacobian(..., sparse, reverse)` needs a function with a body (its rows go through a reverse derivative); `{}` has none", f.name.name)
            } else {
                format!("`jacobian(..., sparse, reverse)` needs a function with a `double` result or none (its rows go through a reverse derivative); `{}` returns another type", f.name.name)
            },
            reverse_at,
        ));
    }
    let sparse = matches!(by, Some(By::Sparse(_)));
    if by == Some(By::Sparse(Force::Rows)) && has_single_float(f, &dual) {
        return Err(err(
            format!("`jacobian(..., sparse, reverse)` of `{}`, which has `float` inputs or outputs, is not supported yet: its columns are (`sparse` or `sparse, forward`)", f.name.name),
            reverse_at,
        ));
    }
    if sparse && !has_float_output(f, &dual) {
        return Err(err(
            format!(
                "a sparse Jacobian of `{}`, which has no floating output (a float result, or an `out` or `inout` float parameter not made `Const`)",
                f.name.name
            ),
            a.span,
        ));
    }
    Ok((name.name.clone(), dual, by, width.map(|w| w.0)))
}

/// Whether `f` has a row: a float result, or an `out`/`inout` float
/// parameter that is `Dual`.
fn has_float_output(f: &FuncDecl, dual: &[bool]) -> bool {
    matches!(f.ret, ReturnType::Base(t) if is_float(t))
        || f.params
            .iter()
            .zip(dual)
            .any(|(p, d)| *d && p.mode != Mode::Value)
}

/// Whether each parameter of `f` is `Dual` (a float one not made `Const`)
/// from the activities given, every one when none are; another count than
/// `f`'s parameters is error `code` at `span`.
pub(crate) fn duals(
    f: &FuncDecl,
    acts: Vec<bool>,
    span: Span,
    code: &'static str,
) -> Result<Vec<bool>, Diagnostic> {
    if !acts.is_empty() && acts.len() != f.params.len() {
        return Err(Diagnostic::error(
            code,
            format!(
                "`{}` has {} parameters: give an activity for each, or none",
                f.name.name,
                f.params.len()
            ),
            span,
        ));
    }
    let given = |i: usize| acts.get(i).copied().unwrap_or(true);
    Ok(f.params
        .iter()
        .enumerate()
        .map(|(i, p)| given(i) && is_float(p.ty))
        .collect())
}

/// Whether `f` has a `float` (single precision) result or `Dual`
/// parameter: its sparse Jacobian goes by columns, without the element
/// path (their generated code is written for `double`).
pub(crate) fn has_single_float(f: &FuncDecl, dual: &[bool]) -> bool {
    let single = |t: BaseType| t == BaseType::Float;
    matches!(f.ret, ReturnType::Base(t) if single(t))
        || f.params.iter().zip(dual).any(|(p, d)| *d && single(p.ty))
}
