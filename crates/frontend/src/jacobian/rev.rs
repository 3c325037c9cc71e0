//! `[jacobian(NAME, reverse)]` and the automatic choice
//! (docs/jacobians.md#jacobians): the rows in chunks of [`CHUNK`] by a
//! vector-mode reverse derivative `NAME__rows` of `F` (a function with a
//! float result: reverse vector mode needs one). Each run seeds the
//! chunk's rows (the result's seed, the shadows of `out` and `inout`
//! arguments), starts from `F`'s inputs (`inout` arguments restored, so
//! the last run leaves `F`'s writes) and gathers each row's gradient into
//! `jac`. Without `forward` or `reverse`, `NAME` calls the forward
//! version (`NAME__fwd`) or the reverse one (`NAME__rev`) at each call:
//! reverse when the Jacobian has fewer rows than columns.

use super::layout::{layout, len, param_decls};
use super::{is_float, type_name};
use crate::ast::*;
use std::fmt::Write;

/// Rows per run of the vector-mode reverse derivative.
pub(crate) const CHUNK: u32 = 16;

/// `[autodiff_reverse(ROWS, ..., Active, width = W)]` for `f`.
pub(crate) fn reverse_attr(f: &FuncDecl, a: &Attr, rows: &str, dual: &[bool], w: u32) -> Attr {
    let id = |s: &str| {
        AttrArg::Ident(Ident {
            name: s.into(),
            span: a.span,
        })
    };
    let mut args = vec![id(rows)];
    for (p, d) in f.params.iter().zip(dual) {
        args.push(id(match (d, p.is_array || p.mode != Mode::Value) {
            (false, _) => "Const",
            (true, true) => "Duplicated",
            (true, false) => "Active",
        }));
    }
    args.push(id("Active"));
    args.push(AttrArg::Named(
        Ident {
            name: "width".into(),
            span: a.span,
        },
        Box::new(AttrArg::Int(i64::from(w), a.span)),
        a.span,
    ));
    Attr {
        name: Ident {
            name: "autodiff_reverse".into(),
            span: a.span,
        },
        args: Some(args),
        span: a.span,
    }
}

/// `f`'s parameters as declared, then `out double[] jac`.
fn params(f: &FuncDecl) -> String {
    let mut params = param_decls(f);
    params.push("out double[] jac".into());
    params.join(", ")
}

fn ret_type(f: &FuncDecl) -> BaseType {
    match f.ret {
        ReturnType::Base(t) => t,
        _ => unreachable!("reverse Jacobians are asked only of float results"),
    }
}

/// The `.ad` text of `NAME`, the dispatcher between `NAME__fwd` and
/// `NAME__rev`.
pub(crate) fn dispatch(f: &FuncDecl, name: &str, dual: &[bool]) -> String {
    let sh = layout(f, dual, true);
    let stat = if f.is_static { "static " } else { "" };
    let mut args: Vec<&str> = f.params.iter().map(|p| p.name.name.as_str()).collect();
    args.push("jac");
    let args = args.join(", ");
    let mut s = String::new();
    let rt = type_name(ret_type(f));
    let _ = writeln!(s, "{stat}{rt} {name}({}) {{", params(f));
    let _ = writeln!(
        s,
        "    if ({} < {}) return {name}__rev({args});",
        sh.nrows, sh.ncols
    );
    let _ = writeln!(s, "    return {name}__fwd({args});");
    let _ = writeln!(s, "}}");
    s
}

/// The `.ad` text of `name`, the Jacobian by rows through `rows`.
pub(crate) fn source(f: &FuncDecl, name: &str, rows: &str, dual: &[bool]) -> String {
    let w = CHUNK;
    let sh = layout(f, dual, true);
    let rt = type_name(ret_type(f));
    let stat = if f.is_static { "static " } else { "" };
    let mut s = String::new();
    let _ = writeln!(s, "{stat}{rt} {name}({}) {{", params(f));
    let _ = writeln!(s, "    int adc_j_nc = {};", sh.ncols);
    let _ = writeln!(s, "    int adc_j_nr = {};", sh.nrows);
    // A `jac` of another length: the runtime error `lencheck.jac`.
    let _ = writeln!(
        s,
        "    {}(adc_j_nr * adc_j_nc, jac);",
        crate::lower::JACOBIAN_LEN
    );
    let mut call = Vec::new();
    for (p, &d) in f.params.iter().zip(dual) {
        let (n, t) = (&p.name.name, type_name(p.ty));
        call.push(n.clone());
        if !d {
            continue;
        }
        let size = if p.is_array {
            format!("{w} * len({n})")
        } else {
            w.to_string()
        };
        let _ = writeln!(s, "    {t} adc_j_d_{n}[{size}];");
        call.push(format!("adc_j_d_{n}"));
    }
    // Every `inout` argument, restored before each run.
    let (save, restore) = super::layout::save_restore(f);
    s += &save;
    let _ = writeln!(s, "    {rt} adc_j_seed[{w}];");
    call.push("adc_j_seed".into());
    let _ = writeln!(s, "    {rt} adc_j_r = {rt}(0);");
    let _ = writeln!(
        s,
        "    for (int adc_j_r0 = 0; adc_j_r0 < adc_j_nr; adc_j_r0 += {w}) {{"
    );
    // Restore what the last run changed; seed the chunk's rows.
    s += &restore;
    for (k, (p, &d)) in f.params.iter().zip(dual).enumerate() {
        let n = &p.name.name;
        if !d {
            continue;
        }
        let m = len(p);
        let cell = format!("adc_j_d_{n}[adc_j_k * {m} + adc_j_i]");
        let seed = match &sh.row_at[k] {
            Some(at) => format!(
                "if (adc_j_r0 + adc_j_k == {at} + adc_j_i) {cell} = 1.0; else {cell} = 0.0;"
            ),
            None => format!("{cell} = 0.0;"),
        };
        let _ = writeln!(
            s,
            "        for (int adc_j_k = 0; adc_j_k < {w}; adc_j_k++) for (int adc_j_i = 0; adc_j_i < {m}; adc_j_i++) {{ {seed} }}"
        );
    }
    let _ = writeln!(s, "        for (int adc_j_k = 0; adc_j_k < {w}; adc_j_k++) {{ if (adc_j_r0 + adc_j_k == 0) adc_j_seed[adc_j_k] = {rt}(1); else adc_j_seed[adc_j_k] = {rt}(0); }}");
    let _ = writeln!(s, "        adc_j_r = {rows}({});", call.join(", "));
    // Gather: row `r0 + k` of every column.
    let _ = writeln!(
        s,
        "        for (int adc_j_k = 0; adc_j_k < {w} && adc_j_r0 + adc_j_k < adc_j_nr; adc_j_k++) {{"
    );
    let _ = writeln!(
        s,
        "            int adc_j_row = (adc_j_r0 + adc_j_k) * adc_j_nc;"
    );
    for (k, p) in f.params.iter().enumerate() {
        let Some(at) = &sh.col_at[k] else { continue };
        let (n, m) = (&p.name.name, len(p));
        let _ = writeln!(s, "            for (int adc_j_i = 0; adc_j_i < {m}; adc_j_i++) jac[adc_j_row + {at} + adc_j_i] = double(adc_j_d_{n}[adc_j_k * {m} + adc_j_i]);");
    }
    let _ = writeln!(s, "        }}");
    let _ = writeln!(s, "    }}");
    let _ = writeln!(s, "    return adc_j_r;");
    let _ = writeln!(s, "}}");
    s
}

/// Whether `f` can have its Jacobian by rows: a float result.
pub(crate) fn has_float_result(f: &FuncDecl) -> bool {
    matches!(f.ret, ReturnType::Base(t) if is_float(t))
}
