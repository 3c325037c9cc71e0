//! `[hessian(NAME, ...)]` (docs/jacobians.md#hessians): forward vector
//! mode over the reverse gradient, written as ordinary source. On a
//! function `F` with a float result the attribute becomes
//!
//! - `[autodiff_reverse(NAME__gradient, ...)]` on `F`, the gradient;
//! - `void NAME__gw(..., out double[] adc_h_g)`, which runs that gradient
//!   on copies of `F`'s arguments (so it writes none of them) and stores
//!   it in `adc_h_g`, one entry per column;
//! - `[jacobian(NAME__gj, ...)]` on `NAME__gw` (expanded afterwards by
//!   [`crate::jacobian`]): the Jacobian of the gradient, the Hessian;
//! - `NAME`, with `F`'s parameters and `out double[] hess`: it calls
//!   `NAME__gj` into `hess`, then `F` itself for the result and writes.
//!
//! The columns are those of `[jacobian]`: by-value float scalars,
//! read-only float arrays, `inout` float arrays and scalars, without the
//! `Const` ones. `out` parameters are no columns; `NAME__gw` takes an `out`
//! array as a read-only one (for its length) and leaves `out` scalars out.

mod band;
mod interact;
mod sparse;
mod star;

use crate::ast::*;
use crate::diag::Diagnostic;
use crate::jacobian::request::duals;
use crate::jacobian::{is_float, type_name, Generated};
use adc_ir::Span;
use std::fmt::Write;

/// Replaces each `[hessian]` attribute by the reverse derivative it needs
/// (an attribute on its function) and the items to append, which carry
/// `[jacobian]` attributes for [`crate::jacobian::expand`]. Errors (E0310)
/// go to `diags`.
pub fn expand(items: &mut [Item], diags: &mut Vec<Diagnostic>) -> (Vec<Item>, Vec<Generated>) {
    let mut text = String::new();
    let mut generated = Vec::new();
    let mut jacobians = Vec::new();
    let interact = interact::applies(items);
    for item in items.iter_mut() {
        let Item::Func(f) = item else { continue };
        let attrs = std::mem::take(&mut f.attrs);
        for a in attrs {
            if a.name.name != "hessian" {
                f.attrs.push(a);
                continue;
            }
            match request(f, &a) {
                Ok((name, dual, sparse)) => {
                    let h = Names::new(&name);
                    f.attrs.push(reverse_attr(f, &a, &h.gradient, &dual));
                    text += &gradient_source(f, &h, &dual);
                    let mut names = vec![name.clone(), h.gradient.clone(), h.gw.clone()];
                    if sparse {
                        text += &sparse::source(f, &name, &ncols(f, &dual), &dual, interact);
                        for g in ["_nnz", "__lower", "__star", "__sources"] {
                            names.push(format!("{name}{g}"));
                        }
                        if interact {
                            f.attrs.push(interact::forward_attr(&a, &name, &dual));
                            for g in interact::GENERATED.iter().chain(&band::GENERATED) {
                                names.push(format!("{name}{g}"));
                            }
                        }
                    } else {
                        text += &hessian_source(f, &h, &dual);
                    }
                    let mut attr = jacobian_attr(f, &a, &h, &dual);
                    if sparse {
                        if let Some(args) = attr.args.as_mut() {
                            // Columns: a Hessian's rows would be reverse over reverse.
                            args.push(ident("sparse", a.span));
                            args.push(ident("forward", a.span));
                            // The pattern is `interact`'s: no sweep of `NAME__gw`.
                            if interact {
                                let colors = crate::jacobian::COLORS_OPTION;
                                args.push(ident(colors, a.span));
                            }
                        }
                    }
                    jacobians.push((h.gw.clone(), attr));
                    for n in names {
                        generated.push(Generated {
                            name: n,
                            span: a.span,
                        });
                    }
                }
                Err(d) => diags.push(d),
            }
        }
    }
    if text.is_empty() {
        return (Vec::new(), generated);
    }
    let (mut extra, errs) = crate::parse::parse_program(&text);
    for e in errs {
        diags.push(Diagnostic::error(
            "E0999",
            format!(
                "internal error: generated Hessian code does not parse: {}",
                e.message
            ),
            Span::UNDEFINED,
        ));
    }
    for item in extra.iter_mut() {
        let Item::Func(g) = item else { continue };
        if let Some(i) = jacobians.iter().position(|(n, _)| *n == g.name.name) {
            g.attrs.push(jacobians.swap_remove(i).1);
        }
    }
    (extra, generated)
}

/// The names generated for `[hessian(name)]`.
struct Names {
    name: String,
    gradient: String,
    gw: String,
    gj: String,
}

impl Names {
    fn new(name: &str) -> Names {
        Names {
            name: name.into(),
            gradient: format!("{name}__gradient"),
            gw: format!("{name}__gw"),
            gj: format!("{name}__gj"),
        }
    }
}

/// `source` with `[hessian(name)]` put before the function `of` or a
/// wrapper of it (`jacobian::with_attribute`; the
/// command line's `--hessian` and the library's Hessian requests ask this
/// way); an error names what is missing.
pub fn with_request(
    source: &str,
    of: &str,
    name: &str,
    compiled: impl FnOnce() -> Option<crate::jacobian::Signature>,
) -> Result<String, String> {
    crate::jacobian::with_attribute(source, of, &format!("hessian({name})"), "Hessian", compiled)
}

fn err(message: String, span: Span) -> Diagnostic {
    Diagnostic::error("E0310", message, span)
}

/// The generated name, whether each parameter is `Dual` (a float one
/// not made `Const`), and whether the Hessian is sparse.
fn request(f: &FuncDecl, a: &Attr) -> Result<(String, Vec<bool>, bool), Diagnostic> {
    let args = a.args.clone().unwrap_or_default();
    let Some(AttrArg::Ident(name)) = args.first() else {
        return Err(err(
            "`hessian` needs the generated function's name first".into(),
            a.span,
        ));
    };
    if let Some(d) = crate::lower::reserved_function_name(&name.name, true) {
        return Err(err(d, name.span));
    }
    let mut acts = Vec::new();
    let mut args = &args[1..];
    let sparse = matches!(args.last(), Some(AttrArg::Ident(id)) if id.name == "sparse");
    if sparse {
        args = &args[..args.len() - 1];
    }
    for arg in args {
        let AttrArg::Ident(id) = arg else {
            return Err(err(
                "expected an activity (`Const` or `Dual`)".into(),
                a.span,
            ));
        };
        match id.name.as_str() {
            "Const" | "Dual" => acts.push(id.name == "Dual"),
            "sparse" => {
                return Err(err(
                    "`sparse` comes last in `hessian`, after the activities".into(),
                    id.span,
                ))
            }
            other => {
                return Err(err(
                    format!("`{other}` is not an activity of `hessian` (`Const` or `Dual`, one per parameter)"),
                    id.span,
                ))
            }
        }
    }
    let dual = duals(f, acts, a.span, "E0310")?;
    if f.body.is_none() {
        return Err(err(
            format!("`hessian` on `{}`, which has no body", f.name.name),
            a.span,
        ));
    }
    if !matches!(f.ret, ReturnType::Base(t) if is_float(t)) {
        return Err(err(
            format!(
                "`hessian` on `{}`, which does not return `float` or `double`: the Hessian is that of the result",
                f.name.name
            ),
            a.span,
        ));
    }
    Ok((name.name.clone(), dual, sparse))
}

fn ident(s: &str, span: Span) -> AttrArg {
    AttrArg::Ident(Ident {
        name: s.into(),
        span,
    })
}

/// Whether the reverse derivative gives `p` a shadow (`Duplicated`), and
/// whether it returns `p`'s gradient (`Active`).
fn shadowed(p: &ParamDecl, dual: bool) -> bool {
    dual && (p.is_array || p.mode != Mode::Value)
}

fn active(p: &ParamDecl, dual: bool) -> bool {
    dual && !p.is_array && p.mode == Mode::Value
}

/// A column of the Hessian (as of the Jacobian): a `Dual` input.
fn is_col(p: &ParamDecl, dual: bool) -> bool {
    dual && p.mode != Mode::Out
}

/// `[autodiff_reverse(GRADIENT, ..., Active)]` for `f`.
fn reverse_attr(f: &FuncDecl, a: &Attr, gradient: &str, dual: &[bool]) -> Attr {
    let mut args = vec![ident(gradient, a.span)];
    for (p, &d) in f.params.iter().zip(dual) {
        let act = if active(p, d) {
            "Active"
        } else if shadowed(p, d) {
            "Duplicated"
        } else {
            "Const"
        };
        args.push(ident(act, a.span));
    }
    // The gradient alone: no forward run of `F` for its value (nor, in
    // the Hessian's forward derivative of it, for that value's tangents).
    args.push(ident("ActiveOnly", a.span));
    Attr {
        name: Ident {
            name: "autodiff_reverse".into(),
            span: a.span,
        },
        args: Some(args),
        span: a.span,
    }
}

/// `[jacobian(GJ, ...)]` for `NAME__gw`: its columns are `f`'s, its rows
/// the gradient.
fn jacobian_attr(f: &FuncDecl, a: &Attr, h: &Names, dual: &[bool]) -> Attr {
    let mut args = vec![ident(&h.gj, a.span)];
    for (p, &d) in f.params.iter().zip(dual) {
        if p.mode == Mode::Out && !p.is_array {
            continue;
        }
        args.push(ident(if is_col(p, d) { "Dual" } else { "Const" }, a.span));
    }
    args.push(ident("Dual", a.span));
    Attr {
        name: Ident {
            name: "jacobian".into(),
            span: a.span,
        },
        args: Some(args),
        span: a.span,
    }
}

/// `NAME__gw`'s parameters (without the gradient) as declared and as
/// passed by `NAME`: `inout` and `out` arrays become read-only, `inout`
/// scalars by-value ones, `out` scalars are left out.
fn gw_params(f: &FuncDecl) -> (Vec<String>, Vec<String>) {
    let mut decls = Vec::new();
    let mut args = Vec::new();
    for p in &f.params {
        if p.mode == Mode::Out && !p.is_array {
            continue;
        }
        let arr = if p.is_array { "[]" } else { "" };
        decls.push(format!("{}{arr} {}", type_name(p.ty), p.name.name));
        args.push(p.name.name.clone());
    }
    (decls, args)
}

fn zero(t: BaseType) -> String {
    match t {
        BaseType::Bool => "false".into(),
        t => format!("{}(0)", type_name(t)),
    }
}

/// The number of columns, as an expression over `f`'s parameters.
fn ncols(f: &FuncDecl, dual: &[bool]) -> String {
    let mut n = vec!["0".to_string()];
    for (p, &d) in f.params.iter().zip(dual) {
        if is_col(p, d) {
            n.push(len(p));
        }
    }
    n.join(" + ")
}

fn len(p: &ParamDecl) -> String {
    if p.is_array {
        format!("len({})", p.name.name)
    } else {
        "1".into()
    }
}

/// The one column parameter, when the columns are a single `double`
/// array whose shadow the gradient can accumulate into `adc_h_g` itself
/// (zeroed first): no scratch shadow and no copy, in `NAME__gw` and in
/// every derivative of it (the compressed evaluation's lanes).
fn direct_column<'a>(f: &'a FuncDecl, dual: &[bool]) -> Option<&'a str> {
    let mut cols = f.params.iter().zip(dual).filter(|(p, &d)| is_col(p, d));
    let (p, &d) = cols.next()?;
    let one = cols.next().is_none() && shadowed(p, d) && p.is_array;
    (one && p.ty == BaseType::Double).then_some(p.name.name.as_str())
}

/// The `.ad` text of `NAME__gw`.
fn gradient_source(f: &FuncDecl, h: &Names, dual: &[bool]) -> String {
    let (mut decls, _) = gw_params(f);
    decls.push("out double[] adc_h_g".into());
    let stat = if f.is_static { "static " } else { "" };
    let mut s = String::new();
    let _ = writeln!(s, "{stat}void {}({}) {{", h.gw, decls.join(", "));
    let mut call = Vec::new();
    let mut results = Vec::new();
    let direct = direct_column(f, dual);
    for (p, &d) in f.params.iter().zip(dual) {
        let (n, t) = (&p.name.name, type_name(p.ty));
        // A copy of what `F` may write, so that `NAME__gw` writes nothing.
        let primal = if p.mode == Mode::Value {
            n.clone()
        } else if p.is_array {
            let _ = writeln!(s, "    {t} _adc_h_c_{n}[len({n})];");
            let _ = writeln!(
                s,
                "    for (int adc_h_i = 0; adc_h_i < len({n}); adc_h_i++) _adc_h_c_{n}[adc_h_i] = {n}[adc_h_i];"
            );
            format!("_adc_h_c_{n}")
        } else {
            let init = if p.mode == Mode::Out {
                zero(p.ty)
            } else {
                n.clone()
            };
            let _ = writeln!(s, "    {t} _adc_h_c_{n} = {init};");
            format!("_adc_h_c_{n}")
        };
        call.push(primal);
        if shadowed(p, d) && direct == Some(n.as_str()) {
            let _ = writeln!(
                s,
                "    for (int adc_h_i = 0; adc_h_i < len({n}); adc_h_i++) adc_h_g[adc_h_i] = 0.0;"
            );
            call.push("adc_h_g".into());
        } else if shadowed(p, d) {
            if p.is_array {
                let _ = writeln!(s, "    {t} _adc_h_d_{n}[len({n})];");
                let _ = writeln!(
                    s,
                    "    for (int adc_h_i = 0; adc_h_i < len({n}); adc_h_i++) _adc_h_d_{n}[adc_h_i] = {};",
                    zero(p.ty)
                );
            } else {
                let _ = writeln!(s, "    {t} _adc_h_d_{n} = {};", zero(p.ty));
            }
            call.push(format!("_adc_h_d_{n}"));
        }
        if active(p, d) {
            results.push((format!("adc_h_a_{n}"), t));
        }
    }
    let ReturnType::Base(rt) = f.ret else {
        unreachable!("`request` refuses results other than float ones")
    };
    call.push(format!("{}(1)", type_name(rt)));
    let call = format!("{}({})", h.gradient, call.join(", "));
    match results.as_slice() {
        [] => {
            let _ = writeln!(s, "    {call};");
        }
        [(r, t)] => {
            let _ = writeln!(s, "    {t} {r} = {call};");
        }
        _ => {
            let names: Vec<&str> = results.iter().map(|(r, _)| r.as_str()).collect();
            let _ = writeln!(s, "    auto [{}] = {call};", names.join(", "));
        }
    }
    // The gradient, one entry per column.
    let mut at = vec!["0".to_string()];
    for (p, &d) in f.params.iter().zip(dual) {
        if !is_col(p, d) {
            continue;
        }
        let (n, off) = (&p.name.name, at.join(" + "));
        if active(p, d) {
            let _ = writeln!(s, "    adc_h_g[{off}] = double(adc_h_a_{n});");
        } else if direct == Some(n.as_str()) {
            // The gradient already accumulated into `adc_h_g`.
        } else if p.is_array {
            let _ = writeln!(
                s,
                "    for (int adc_h_i = 0; adc_h_i < len({n}); adc_h_i++) adc_h_g[{off} + adc_h_i] = double(_adc_h_d_{n}[adc_h_i]);"
            );
        } else {
            let _ = writeln!(s, "    adc_h_g[{off}] = double(_adc_h_d_{n});");
        }
        at.push(len(p));
    }
    let _ = writeln!(s, "}}");
    s
}

/// The `.ad` text of `NAME`.
fn hessian_source(f: &FuncDecl, h: &Names, dual: &[bool]) -> String {
    let ReturnType::Base(rt) = f.ret else {
        unreachable!("`request` refuses results other than float ones")
    };
    let hess = crate::jacobian::layout::free_name(f, "hess");
    let mut params = crate::jacobian::layout::param_decls(f);
    params.push(format!("out double[] {hess}"));
    let stat = if f.is_static { "static " } else { "" };
    let mut s = String::new();
    let _ = writeln!(
        s,
        "{stat}{} {}({}) {{",
        type_name(rt),
        h.name,
        params.join(", ")
    );
    let _ = writeln!(s, "    int adc_h_n = {};", ncols(f, dual));
    // A `hess` of another length: the runtime error `lencheck.hess`.
    let _ = writeln!(
        s,
        "    {}(adc_h_n * adc_h_n, {hess});",
        crate::lower::HESSIAN_LEN
    );
    let _ = writeln!(s, "    double adc_h_g[adc_h_n];");
    let (_, mut args) = gw_params(f);
    args.push("adc_h_g".into());
    args.push(hess);
    let _ = writeln!(s, "    {}({});", h.gj, args.join(", "));
    let all: Vec<&str> = f.params.iter().map(|p| p.name.name.as_str()).collect();
    let _ = writeln!(s, "    return {}({});", f.name.name, all.join(", "));
    let _ = writeln!(s, "}}");
    s
}
