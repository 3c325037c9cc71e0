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

use super::layout::{free_name, layout, len, param_decls};
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

/// `f`'s parameters as declared, then `out double[] jac` (its name
/// [`free_name`]'s).
fn params(f: &FuncDecl) -> String {
    let mut params = param_decls(f);
    params.push(format!("out double[] {}", free_name(f, "jac")));
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
    let jac = free_name(f, "jac");
    let mut args: Vec<&str> = f.params.iter().map(|p| p.name.name.as_str()).collect();
    args.push(&jac);
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

/// The `.ad` text of `name`, the Jacobian by rows through `rows`: the
/// reverse derivative of `F`, or of its copy returning `0.0` (a function
/// without a float result, `sparse_rows::void_copy`), whose seed is
/// zero; an `int` or `bool` result then comes from one more run of `F`.
pub(crate) fn source(f: &FuncDecl, name: &str, rows: &str, dual: &[bool]) -> String {
    let w = CHUNK;
    let jac = free_name(f, "jac");
    let float_ret = has_float_result(f);
    let sh = layout(f, dual, float_ret);
    let (rt, seed_t) = match f.ret {
        ReturnType::Base(t) if float_ret => (type_name(t), type_name(t)),
        ReturnType::Base(t) => (type_name(t), "double"),
        _ => ("void", "double"),
    };
    let stat = if f.is_static { "static " } else { "" };
    let mut s = String::new();
    let _ = writeln!(s, "{stat}{rt} {name}({}) {{", params(f));
    let _ = writeln!(s, "    int adc_j_nc = {};", sh.ncols);
    let _ = writeln!(s, "    int adc_j_nr = {};", sh.nrows);
    // A `jac` of another length: the runtime error `lencheck.jac`.
    let _ = writeln!(
        s,
        "    {}(adc_j_nr * adc_j_nc, {jac});",
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
    let _ = writeln!(s, "    {seed_t} adc_j_seed[{w}];");
    call.push("adc_j_seed".into());
    if float_ret {
        let _ = writeln!(s, "    {rt} adc_j_r = {rt}(0);");
    }
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
    // The result's row is the first; without one, the seed is zero.
    let first = if float_ret { "0" } else { "-1" };
    let _ = writeln!(s, "        for (int adc_j_k = 0; adc_j_k < {w}; adc_j_k++) {{ if (adc_j_r0 + adc_j_k == {first}) adc_j_seed[adc_j_k] = {seed_t}(1); else adc_j_seed[adc_j_k] = {seed_t}(0); }}");
    let set = if float_ret { "adc_j_r = " } else { "" };
    let _ = writeln!(s, "        {set}{rows}({});", call.join(", "));
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
        let _ = writeln!(s, "            for (int adc_j_i = 0; adc_j_i < {m}; adc_j_i++) {jac}[adc_j_row + {at} + adc_j_i] = double(adc_j_d_{n}[adc_j_k * {m} + adc_j_i]);");
    }
    let _ = writeln!(s, "        }}");
    let _ = writeln!(s, "    }}");
    if float_ret {
        let _ = writeln!(s, "    return adc_j_r;");
    } else if rt != "void" {
        // The copy returned `0.0`: `F` again, from its inputs, for its result.
        s += &restore;
        let args: Vec<&str> = f.params.iter().map(|p| p.name.name.as_str()).collect();
        let _ = writeln!(s, "    return {}({});", f.name.name, args.join(", "));
    }
    let _ = writeln!(s, "}}");
    s
}

/// Whether `f` can have its Jacobian by rows: a float result.
pub(crate) fn has_float_result(f: &FuncDecl) -> bool {
    matches!(f.ret, ReturnType::Base(t) if is_float(t))
}
