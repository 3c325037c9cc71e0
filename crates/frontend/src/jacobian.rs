//! `[jacobian(NAME, ...)]` (docs/jacobians.md#jacobians): the attribute
//! becomes ordinary source. The function `F` it stands on gets a
//! vector-mode forward derivative `NAME__columns` (of the attribute's
//! `width`, or one [`width::choose`] picks), and `NAME` is written in
//! `.ad`: it runs that derivative once per chunk of that many columns,
//! each run seeded with the chunk's
//! unit directions and started from `F`'s inputs (`inout` arguments are
//! restored before each run, so the last run leaves `F`'s writes), and
//! scatters the tangents into `jac`. The generated items are parsed like
//! the program's; their instructions point at the attribute
//! ([`point_at_attributes`]).

mod element_pattern;
mod elements;
mod elements_masks;
mod elements_source;
mod elements_static;
mod elements_text;
mod entry;
pub(crate) mod layout;
pub(crate) mod request;
mod rev;
pub(crate) mod sparse;
mod sparse_helpers;
mod sparse_rows;
pub(crate) use sparse_rows::COLORS_OPTION;
pub mod width;

use crate::ast::*;
use crate::diag::Diagnostic;
use adc_ir::Span;
pub use entry::{with_attribute, Signature};
use request::{request, By, Request};
use rev::has_float_result;
use sparse_rows::Force;
use std::fmt::Write;

/// A generated function and the attribute it came from.
pub struct Generated {
    pub name: String,
    pub span: Span,
}

/// Replaces each `[jacobian]` attribute by the items it stands for: the
/// functions to append (parsed), and the generated names with their
/// attributes' spans. Errors (E0309) go to `diags`.
pub fn expand(items: &mut [Item], diags: &mut Vec<Diagnostic>) -> (Vec<Item>, Vec<Generated>) {
    let mut out = Expansion::default();
    let all = items.to_vec();
    for item in items.iter_mut() {
        let Item::Func(f) = item else { continue };
        let attrs = std::mem::take(&mut f.attrs);
        for a in attrs {
            if a.name.name != "jacobian" {
                f.attrs.push(a);
                continue;
            }
            match request(f, &a, &all) {
                Ok((name, dual, Some(By::Sparse(force)), _)) => {
                    expand_sparse(f, &a, &all, (name, dual, force), &mut out)
                }
                Ok((name, dual, by, width)) => {
                    expand_dense(f, &a, &all, (name, dual, by, width), &mut out)
                }
                Err(d) => diags.push(d),
            }
        }
    }
    let Expansion {
        text,
        generated,
        outlined,
    } = out;
    if text.is_empty() {
        return (outlined, generated);
    }
    let (mut extra, errs) = crate::parse::parse_program(&text);
    extra.extend(outlined);
    for e in errs {
        diags.push(Diagnostic::error(
            "E0999",
            format!(
                "internal error: generated Jacobian code does not parse: {}",
                e.message
            ),
            Span::UNDEFINED,
        ));
    }
    (extra, generated)
}

/// What [`expand`] makes: the generated source, the names it defines
/// (with the attribute's span) and items made directly (outlined copies).
#[derive(Default)]
struct Expansion {
    text: String,
    generated: Vec<Generated>,
    outlined: Vec<Item>,
}

/// A sparse Jacobian `[jacobian(name, sparse)]` of `f` (`dual`: its
/// parameters' activity; `force`: the side asked for): the attributes of
/// its derivatives on `f`, its source and outlined pieces into `out`.
fn expand_sparse(
    f: &mut FuncDecl,
    a: &Attr,
    all: &[Item],
    (name, dual, force): (String, Vec<bool>, Force),
    out: &mut Expansion,
) {
    let cols = format!("{name}__columns");
    let pattern = format!("{name}__pattern");
    // `forward` or `reverse` forces a coloring: no element path.
    let forced = force != Force::Auto;
    // `float`: by columns, no element path (`request::has_single_float`).
    let single = request::has_single_float(f, &dual);
    let force = match force {
        Force::Auto if single || !sparse_rows::rows_possible(f) => Force::Columns,
        force => force,
    };
    if force != Force::Rows {
        f.attrs
            .push(forward_attr(f, a, &cols, &dual, Some(sparse::CHUNK)));
        out.generated.push(Generated {
            name: cols.clone(),
            span: a.span,
        });
    }
    if force == Force::Colors {
        // The compressed evaluations (of `NARROW` and `WIDE` lanes
        // besides `CHUNK`'s) and the helpers only.
        for w in [sparse::NARROW, sparse::WIDE] {
            let cols_w = format!("{cols}{w}");
            f.attrs.push(forward_attr(f, a, &cols_w, &dual, Some(w)));
            for g in [cols_w, format!("{name}__compressed{w}")] {
                out.generated.push(Generated {
                    name: g,
                    span: a.span,
                });
            }
        }
        for g in [
            "__compressed",
            "__band",
            "__cyclic",
            "__color",
            "__greedy",
            "__seed",
        ]
        .into_iter()
        .chain(["__scatter", "__pick", "__lazy", "__rows"])
        .chain(
            ["__seedf", "__scatterf", "__pickf"]
                .into_iter()
                .filter(|_| single),
        ) {
            out.generated.push(Generated {
                name: format!("{name}{g}"),
                span: a.span,
            });
        }
        out.text += &sparse::source(f, &name, &dual, None, force);
        return;
    }
    f.attrs.push(forward_attr(f, a, &pattern, &dual, None));
    if force != Force::Columns {
        let rev = format!("{name}__reverse");
        let attr = rev::reverse_attr(f, a, &rev, &dual, sparse::CHUNK);
        match sparse_rows::reversed(f, &name) {
            Some(copy) => {
                out.outlined.push(sparse_rows::void_copy(f, &name, attr));
                out.generated.push(Generated {
                    name: copy,
                    span: a.span,
                });
            }
            None => f.attrs.push(attr),
        }
        for g in sparse_rows::names(&name) {
            out.generated.push(Generated {
                name: g,
                span: a.span,
            });
        }
    }
    // The element path's text names `vals`, `cols` and `rows` as such: a
    // function with a parameter of one of those names (whose `NAME` then
    // has `vals_`, ...) takes the coloring.
    let renamed = layout::sparse_names(f) != ["vals", "cols", "rows"];
    let plan = if forced || renamed || single {
        None
    } else {
        elements::plan(all, f, &dual)
    };
    let colored = format!("{name}__colored");
    let entry = plan.as_ref().map(|_| colored.as_str());
    out.text += &sparse::source(f, &name, &dual, entry, force);
    if let Some(plan) = &plan {
        out.text += &elements_source::source(f, &name, &dual, plan, &colored);
        let (items, names) = elements_source::outlined(f, &name, &dual, plan, a.span);
        out.outlined.extend(items);
        let helpers = ["egather", "esame", "eplan"].map(|h| format!("{name}__{h}"));
        let helpers = helpers.into_iter().filter(|_| plan.sweeps());
        for g in names
            .into_iter()
            .chain(helpers)
            .chain([format!("{name}__elems"), colored])
        {
            out.generated.push(Generated {
                name: g,
                span: a.span,
            });
        }
    }
    for g in [
        name.clone(),
        format!("{name}_nnz"),
        format!("{name}__deps"),
        format!("{name}__fill"),
        format!("{name}__rows"),
        format!("{name}__band"),
        format!("{name}__cyclic"),
        format!("{name}__color"),
        format!("{name}__greedy"),
        format!("{name}__seed"),
        format!("{name}__scatter"),
        format!("{name}__pick"),
        format!("{name}__compressed"),
        format!("{name}__lazy"),
        pattern,
    ]
    .into_iter()
    .chain(
        ["__seedf", "__scatterf", "__pickf"]
            .iter()
            .filter(|_| single)
            .map(|g| format!("{name}{g}")),
    ) {
        out.generated.push(Generated {
            name: g,
            span: a.span,
        });
    }
}

/// A dense Jacobian of `f`: by columns (a forward vector derivative in
/// chunks of `width`, or the chosen width), by rows, or, when `by` is `None`,
/// the way the shape asks for ([`fixed_shape_choice`]) or both and a choice
/// at each call.
fn expand_dense(
    f: &mut FuncDecl,
    a: &Attr,
    all: &[Item],
    (name, dual, by, width): Request,
    out: &mut Expansion,
) {
    let mut names = vec![name.clone()];
    // Reverse mode, or both and a choice at each call.
    let by = match by {
        None if !has_float_result(f) => Some(By::Columns),
        None => fixed_shape_choice(f, &dual),
        by => by,
    };
    if by != Some(By::Columns) {
        let rows = format!("{name}__rows");
        let attr = rev::reverse_attr(f, a, &rows, &dual, rev::CHUNK);
        if has_float_result(f) {
            f.attrs.push(attr);
        } else {
            // Reverse vector mode needs a float result: a copy's.
            out.outlined.push(sparse_rows::void_copy(f, &name, attr));
            names.push(format!("{name}__rf"));
        }
        let to = if by.is_none() {
            format!("{name}__rev")
        } else {
            name.clone()
        };
        out.text += &rev::source(f, &to, &rows, &dual);
        names.extend([rows, to]);
    }
    if by != Some(By::Rows) {
        let cols = format!("{name}__columns");
        let w = width.unwrap_or_else(|| width::choose(all, f, &dual));
        f.attrs.push(forward_attr(f, a, &cols, &dual, Some(w)));
        let to = if by.is_none() {
            format!("{name}__fwd")
        } else {
            name.clone()
        };
        out.text += &source(f, &to, &cols, &dual, w);
        names.extend([cols, to]);
    }
    if by.is_none() {
        out.text += &rev::dispatch(f, &name, &dual);
    }
    names.sort();
    names.dedup();
    for name in names {
        out.generated.push(Generated { name, span: a.span });
    }
}

/// The choice `NAME` would make at each call (by rows when the Jacobian has
/// fewer rows than columns), made here when no `Dual` parameter is an array,
/// so that the shape is the same at every call and only one way is
/// generated; `None` when the shape depends on array lengths.
fn fixed_shape_choice(f: &FuncDecl, dual: &[bool]) -> Option<By> {
    let shape = layout::layout(f, dual, true);
    let constant =
        |sum: &str| -> Option<u64> { sum.split(" + ").map(|term| term.parse::<u64>().ok()).sum() };
    let (rows, cols) = (constant(&shape.nrows)?, constant(&shape.ncols)?);
    Some(if rows < cols { By::Rows } else { By::Columns })
}

/// `source` with `[jacobian(name)]` put before the function `of`, or on
/// a wrapper of it ([`with_attribute`]; the command line's `--jacobian`
/// and the library's Jacobian requests ask this way); an error names what
/// is missing.
pub fn with_request(
    source: &str,
    of: &str,
    name: &str,
    compiled: impl FnOnce() -> Option<Signature>,
) -> Result<String, String> {
    with_attribute(
        source,
        of,
        &format!("jacobian({name})"),
        "Jacobian",
        compiled,
    )
}

/// Every instruction of the generated functions points at its attribute.
pub fn point_at_attributes(module: &mut adc_ir::Module, generated: &[Generated]) {
    for g in generated {
        if let Some(id) = module.find(&g.name) {
            let f = module.func_mut(id);
            for s in f.srclocs.iter_mut() {
                *s = g.span;
            }
            f.decl_span = g.span;
        }
    }
}

pub(crate) fn is_float(t: BaseType) -> bool {
    matches!(t, BaseType::Double | BaseType::Float)
}

/// `forward` (by columns), `reverse` (by rows) or `sparse` (with
/// `forward` or `reverse`, forcing columns or rows).
/// `[autodiff_forward(COLS, ..., width = W)]` for `f`; without a width,
/// the dependency sweep (`__adc_sets`, the result `DualOnly`).
fn forward_attr(f: &FuncDecl, a: &Attr, cols: &str, dual: &[bool], width: Option<u32>) -> Attr {
    let ret = match f.ret {
        ReturnType::Void => None,
        ReturnType::Base(t) if is_float(t) && width.is_none() => Some("DualOnly"),
        ReturnType::Base(t) if is_float(t) => Some("Dual"),
        _ => Some("Const"),
    };
    let option = match width {
        Some(w) => ("width", i64::from(w)),
        None => (crate::lower::SETS_OPTION, 1),
    };
    autodiff_forward(a, cols, dual, ret, option)
}

/// `[autodiff_forward(NAME, ..., RET, OPTION = VALUE)]` at `a`'s place:
/// `Dual` where `dual` holds, else `Const`; `ret` the result's activity
/// (none for `void`).
pub(crate) fn autodiff_forward(
    a: &Attr,
    name: &str,
    dual: &[bool],
    ret: Option<&str>,
    (option, value): (&str, i64),
) -> Attr {
    let id = |s: &str| {
        AttrArg::Ident(Ident {
            name: s.into(),
            span: a.span,
        })
    };
    let mut args = vec![id(name)];
    for d in dual {
        args.push(id(if *d { "Dual" } else { "Const" }));
    }
    args.extend(ret.map(id));
    args.push(AttrArg::Named(
        Ident {
            name: option.into(),
            span: a.span,
        },
        Box::new(AttrArg::Int(value, a.span)),
        a.span,
    ));
    Attr {
        name: Ident {
            name: "autodiff_forward".into(),
            span: a.span,
        },
        args: Some(args),
        span: a.span,
    }
}

pub(crate) fn type_name(t: BaseType) -> &'static str {
    match t {
        BaseType::Double => "double",
        BaseType::Float => "float",
        BaseType::Int => "int",
        BaseType::Bool => "bool",
    }
}

/// The `.ad` text of `NAME`, which runs `cols` (of width `w`) per chunk.
fn source(f: &FuncDecl, name: &str, cols: &str, dual: &[bool], w: u32) -> String {
    let ret = match &f.ret {
        ReturnType::Void => "void".to_string(),
        ReturnType::Base(t) => type_name(*t).to_string(),
        ReturnType::Tuple(_) => unreachable!("tuples are refused by `request`"),
    };
    let float_ret = matches!(f.ret, ReturnType::Base(t) if is_float(t));
    let jac = layout::free_name(f, "jac");
    let mut params = layout::param_decls(f);
    params.push(format!("out double[] {jac}"));
    let mut s = String::new();
    let stat = if f.is_static { "static " } else { "" };
    let _ = writeln!(s, "{stat}{ret} {name}({}) {{", params.join(", "));
    // The columns and rows, each a block of `len` entries at an offset.
    let layout::Layout {
        col_at,
        row_at,
        ncols,
        nrows,
    } = layout::layout(f, dual, float_ret);
    let len = layout::len;
    let _ = writeln!(s, "    int adc_j_nc = {ncols};");
    let _ = writeln!(s, "    int adc_j_nr = {nrows};");
    // A `jac` of another length: the runtime error `lencheck.jac`.
    let _ = writeln!(
        s,
        "    {}(adc_j_nr * adc_j_nc, {jac});",
        crate::lower::JACOBIAN_LEN
    );
    let elem = |p: &ParamDecl| type_name(p.ty);
    for (p, &d) in f.params.iter().zip(dual) {
        let n = &p.name.name;
        if d {
            let size = if p.is_array {
                format!("{w} * len({n})")
            } else {
                w.to_string()
            };
            let _ = writeln!(s, "    {} adc_j_t_{n}[{size}];", elem(p));
        }
    }
    // Every `inout` argument, restored before each run.
    let (save, restore) = layout::save_restore(f);
    s += &save;
    if float_ret {
        let _ = writeln!(s, "    {ret} adc_j_tr[{w}];");
    }
    let has_ret = ret != "void";
    if has_ret {
        let zero = match f.ret {
            ReturnType::Base(BaseType::Bool) => "false",
            ReturnType::Base(BaseType::Int) => "0",
            _ => "0.0",
        };
        let _ = writeln!(s, "    {ret} adc_j_r = {zero};");
    }
    let _ = writeln!(
        s,
        "    for (int adc_j_c0 = 0; adc_j_c0 < adc_j_nc || adc_j_c0 == 0; adc_j_c0 += {w}) {{"
    );
    // Restore what the last run changed, and seed the chunk's columns.
    s += &restore;
    for (k, (p, &d)) in f.params.iter().zip(dual).enumerate() {
        let n = &p.name.name;
        if !d {
            continue;
        }
        let m = len(p);
        let _ = writeln!(
            s,
            "        for (int adc_j_k = 0; adc_j_k < {w}; adc_j_k++) {{"
        );
        let _ = writeln!(
            s,
            "            for (int adc_j_i = 0; adc_j_i < {m}; adc_j_i++) {{"
        );
        let cell = format!("adc_j_t_{n}[adc_j_k * {m} + adc_j_i]");
        match &col_at[k] {
            Some(at) => {
                let _ = writeln!(s, "                if (adc_j_c0 + adc_j_k == {at} + adc_j_i) {cell} = 1.0; else {cell} = 0.0;");
            }
            None => {
                let _ = writeln!(s, "                {cell} = 0.0;");
            }
        }
        let _ = writeln!(s, "            }}");
        let _ = writeln!(s, "        }}");
    }
    let mut args = Vec::new();
    for (p, &d) in f.params.iter().zip(dual) {
        args.push(p.name.name.clone());
        if d {
            args.push(format!("adc_j_t_{}", p.name.name));
        }
    }
    if float_ret {
        args.push("adc_j_tr".into());
    }
    let call = format!("{cols}({})", args.join(", "));
    if has_ret {
        let _ = writeln!(s, "        adc_j_r = {call};");
    } else {
        let _ = writeln!(s, "        {call};");
    }
    // Scatter: column `c0 + k` of every row.
    let _ = writeln!(
        s,
        "        for (int adc_j_k = 0; adc_j_k < {w}; adc_j_k++) {{"
    );
    let _ = writeln!(s, "            int adc_j_c = adc_j_c0 + adc_j_k;");
    let _ = writeln!(s, "            if (adc_j_c < adc_j_nc) {{");
    if float_ret {
        let _ = writeln!(
            s,
            "                {jac}[adc_j_c] = double(adc_j_tr[adc_j_k]);"
        );
    }
    for (k, p) in f.params.iter().enumerate() {
        let Some(at) = &row_at[k] else { continue };
        let (n, m) = (&p.name.name, len(p));
        let _ = writeln!(s, "                for (int adc_j_i = 0; adc_j_i < {m}; adc_j_i++) {jac}[({at} + adc_j_i) * adc_j_nc + adc_j_c] = double(adc_j_t_{n}[adc_j_k * {m} + adc_j_i]);");
    }
    let _ = writeln!(s, "            }}");
    let _ = writeln!(s, "        }}");
    let _ = writeln!(s, "    }}");
    if has_ret {
        let _ = writeln!(s, "    return adc_j_r;");
    }
    let _ = writeln!(s, "}}");
    s
}
