//! `[hessian(NAME, ..., sparse)]` (docs/jacobians.md#sparse-hessians):
//! the sparse Jacobian of the gradient. [`super`] generates the
//! gradient wrapper `NAME__gw` as for a dense Hessian and puts
//! `[jacobian(NAME__gj, ..., sparse)]` on it ([`crate::jacobian`]'s sparse
//! expansion: coloring and compressed forward evaluation; with
//! `__adc_colors` no more). This module writes the two functions the user
//! calls, running the sweep for the pattern once:
//!
//! - the pattern: [`super::interact`]'s sweep of `F`'s own code with
//!   interactions, when it applies; otherwise the dependency sweep of
//!   `NAME__gw` (the Jacobian expansion's sweep loop and row counting,
//!   and `NAME__gj__deps`, through the reverse derivative);
//! - `NAME_nnz`: the sweep, counting the entries `(r, c)` with `c <= r`;
//! - `NAME`: the sweep, both triangles' pattern into scratch rows, the
//!   lower triangle's entries to `cols` and `rows`, the coloring and the
//!   compressed evaluation (`NAME__gj__compressed`) into `vals`; with a
//!   band pattern and its band coloring, the band evaluation
//!   (`super::band::eval`) instead.
//!
//! Both then call `F` for its result and writes (`F`'s `inout` arguments
//! restored first: the sweep of `F` writes them; `NAME__gw` writes none
//! of its arguments). All locals start with `adc_hs_` (or `adc_s_`,
//! the sweep's).

use crate::ast::*;
use crate::jacobian::layout::{param_decls as params, sparse_names};
use crate::jacobian::{sparse, type_name};
use std::fmt::Write;

/// The `.ad` text of `NAME_nnz` and `NAME`; `ncols` counts the columns.
/// With `interact` (`super::interact::applies`), the pattern comes from
/// the sweep of `F`'s own code ([`super::interact`]), otherwise from the
/// dependency sweep of `NAME__gw` (`dual`: the `Dual` parameters).
pub(super) fn source(
    f: &FuncDecl,
    name: &str,
    ncols: &str,
    dual: &[bool],
    interact: bool,
) -> String {
    let ReturnType::Base(rt) = f.ret else {
        unreachable!("`hessian::request` refuses results other than float ones")
    };
    let stat = if f.is_static { "static " } else { "" };
    let ps = params(f);
    let (_, gw) = super::gw_params(f);
    let gw_args: String = gw.iter().map(|a| format!("{a}, ")).collect();
    let all: Vec<&str> = f.params.iter().map(|p| p.name.name.as_str()).collect();
    let call_f = format!("{}({})", f.name.name, all.join(", "));
    let gj = format!("{name}__gj");
    // `NAME__gw` writes none of its arguments: nothing to save and restore.
    let sweep = |body: &str| {
        let args = format!("{gw_args}adc_hs_g");
        sparse::sweep(&gj, &args, "adc_hs_n", "adc_hs_n", ("", ""), body)
    };
    // The columns' count, and the gradient (which `NAME__gw` writes
    // element by element before reading it) unless `F`'s own sweep
    // (`interact`) makes the pattern.
    let head_of = |interact: bool| {
        let g = if interact {
            ""
        } else {
            "    double adc_hs_g[__adc_uninit(adc_hs_n)];\n"
        };
        format!("    int adc_hs_n = {ncols};\n{g}")
    };
    let [vals, cols, rows] = sparse_names(f);
    let (save, restore) = if interact {
        crate::jacobian::layout::save_restore(f)
    } else {
        Default::default()
    };
    let mut s = String::new();
    // NAME_nnz: the sweep, counting the lower triangle.
    let _ = writeln!(s, "{stat}int {name}_nnz({}) {{", ps.join(", "));
    // The sweep of `F` needs no gradient.
    s += &head_of(interact);
    s += "    int adc_s_nnz = 0;\n";
    if interact {
        let body = "            adc_s_nnz = _adc_hs_lower;\n";
        let fallback = save.clone() + &super::interact::sweep(f, name, &restore, body) + &restore;
        s += &super::band::sweep(f, name, None, body, &fallback);
    } else {
        s += &sweep(&sparse::count(&gj, "adc_hs_n", true, None));
    }
    let _ = writeln!(s, "    {call_f};");
    let _ = writeln!(s, "    return adc_s_nnz;");
    let _ = writeln!(s, "}}");
    // NAME: the sweep, both triangles' pattern into scratch rows (counted
    // first, with stamps of their own), the lower one into `cols` and
    // `rows`, then the coloring and compressed evaluation into `vals`.
    // With the pattern from `F`'s sweep, the gradient is made where the
    // compressed evaluation runs: the band evaluation needs none (an array
    // of `n` less per call, which can keep glibc from trimming the heap).
    let g = "            double adc_hs_g[__adc_uninit(adc_hs_n)];\n";
    let mut decl = ps.clone();
    decl.extend([
        format!("out double[] {vals}"),
        format!("out int[] {cols}"),
        format!("out int[] {rows}"),
    ]);
    let _ = writeln!(s, "{stat}{} {name}({}) {{", type_name(rt), decl.join(", "));
    s += &head_of(interact);
    let mut body = String::new();
    if !interact {
        body += "            int adc_s_nnz = 0;\n";
        body += &sparse::count(&gj, "adc_hs_n", false, Some("adc_s_nr"));
        let _ = write!(
            body,
            "            int adc_hs_c[adc_s_nnz];
            int adc_hs_p[adc_hs_n + 1];
            {gj}__rows(adc_s_heads, adc_s_arena, adc_hs_p, adc_hs_c, adc_s_seen, adc_s_stack);
"
        );
    }
    // The star coloring only when the distance-2 colors need more than
    // one run of the widest evaluation (`NAME__star` gives up otherwise):
    // its colors start at 0.
    let w = if interact {
        sparse::WIDE
    } else {
        sparse::CHUNK
    };
    // The sweep from `F` knows the lower triangle's entries.
    let known = if interact { "_adc_hs_lower" } else { "-1" };
    let to_lower = format!(
        "            {name}__lower(adc_hs_p, adc_hs_c, {known}, {vals}, {cols}, {rows});\n"
    );
    // The compressed evaluation of `NARROW`, `CHUNK` or `WIDE` lanes
    // (which `__adc_colors`, the pattern from `F`'s sweep, makes): the
    // fewest runs, then the narrowest; `k` colors, `lane`/`from` given.
    let call = |color: &str, k: &str| {
        let args = format!(
            "{gw_args}adc_hs_g, {vals}, {cols}, {rows}, {color}, {k}, adc_hs_lane, adc_hs_from"
        );
        if interact {
            sparse::by_width(k, |w| {
                let sfx = if w == sparse::CHUNK {
                    String::new()
                } else {
                    w.to_string()
                };
                format!("{gj}__compressed{sfx}({args});")
            })
        } else {
            format!("{gj}__compressed({args});")
        }
    };
    let run = |color: &str, k: &str| {
        format!(
            "                int adc_hs_lane[0];
                int adc_hs_from[0];
                {}
",
            call(color, k)
        )
    };
    // The band pattern's evaluation when `F`'s one column is a `double`
    // array (the band pattern needs it): the band coloring without colors.
    let eval = if interact {
        super::band::eval(f, name, dual)
    } else {
        None
    };
    let hbeval =
        |k: &str| format!("{name}__hbeval({gw_args}adc_hb_info, {k}, {vals}, {cols}, {rows});");
    // The last run: with the band pattern's evaluation, that of a band
    // coloring (`adc_hs_cyc`) goes to it.
    let last = |band: bool| match (&eval, band) {
        (Some(_), true) => format!(
            "                if (adc_hs_cyc) {{ {} }}
                else {{
{}                }}
",
            hbeval("adc_hs_k"),
            run("adc_hs_color", "adc_hs_k")
        ),
        _ => run("adc_hs_color", "adc_hs_k"),
    };
    let colors = |band: bool| {
        format!(
            "            int adc_hs_color[__adc_uninit(adc_hs_n)];
            int adc_hs_k = {gj}__band(adc_hs_n, adc_hs_p, adc_hs_c, adc_hs_color);
            bool adc_hs_cyc = adc_hs_k > 0;
            if (adc_hs_k == 0) {{ adc_hs_k = {gj}__color(adc_hs_n, adc_hs_p, adc_hs_c, adc_hs_color); }}
            int adc_hs_s = 0;
            if ((adc_hs_k + {w} - 1) / {w} > 1) {{
                int adc_hs_star[adc_hs_n];
                adc_hs_s = {name}__star(adc_hs_p, adc_hs_c, adc_hs_k, adc_hs_star);
                if (adc_hs_s > 0) {{
                    int adc_hs_lane[__adc_uninit({rows}[adc_hs_n])];
                    int adc_hs_from[__adc_uninit({rows}[adc_hs_n])];
                    {name}__sources(adc_hs_p, adc_hs_c, {cols}, {rows}, adc_hs_star, adc_hs_lane, adc_hs_from);
                    {}
                }}
            }}
            if (adc_hs_s == 0) {{
{}            }}
",
            call("adc_hs_star", "adc_hs_s"),
            last(band)
        )
    };
    if interact {
        // The band pattern writes the lower triangle itself; its band
        // coloring, when one run, needs no full pattern.
        let fast = match &eval {
            Some(_) => format!("            {}\n", hbeval("adc_hb_span")),
            None => format!(
                "{g}            {name}__hbrows(adc_hb_info, adc_hs_n, 2, {rows}, {cols}, adc_hb_t, 0, 0, adc_hb_v);
            int adc_hs_color[__adc_uninit(adc_hs_n)];
            int adc_hs_k = {gj}__cyclic(adc_hb_span, adc_hs_color);
{}",
                run("adc_hs_color", "adc_hs_k")
            ),
        };
        let swept = g.to_string() + &to_lower + &colors(false);
        let fallback = save.clone() + &super::interact::sweep(f, name, &restore, &swept) + &restore;
        let body = g.to_string() + &colors(true);
        s += &super::band::sweep(f, name, Some((&fast, w)), &body, &fallback);
    } else {
        s += &sweep(&(body + &to_lower + &colors(false)));
    }
    let _ = writeln!(s, "    return {call_f};");
    let _ = writeln!(s, "}}");
    s += &lower(name);
    if interact {
        s += &super::interact::helpers(f, name, &gj, dual);
        s += &super::band::helpers(f, name);
        s += &eval.unwrap_or_default();
    }
    s += &super::star::source(name, w);
    s
}

/// `NAME__lower`: the lower triangle of the pattern `c`/`p` (compressed
/// rows, both triangles, each row's columns increasing) into `cols` and
/// `rows` (`m` its entries, or -1: counted here); `vals`, `cols` or
/// `rows` too short for it is the runtime error
/// `hessian needs N entries`. Out of line (`[checkpoint]`), as the fill's
/// loops are.
fn lower(name: &str) -> String {
    let len = crate::lower::SPARSE_HESSIAN_LEN;
    format!(
        "[checkpoint]
static void {name}__lower(int[] p, int[] c, int lower, out double[] vals, out int[] cols, out int[] rows) {{
    int n = len(p) - 1;
    int m = lower;
    if (m < 0) {{
        m = 0;
        for (int r = 0; r < n; r++) {{
            for (int k = p[r]; k < p[r + 1]; k++) {{
                if (c[k] <= r) {{ m++; }}
            }}
        }}
    }}
    {len}(m, vals);
    {len}(m, cols);
    {len}(n + 1, rows);
    int q = 0;
    for (int r = 0; r < n; r++) {{
        rows[r] = q;
        for (int k = p[r]; k < p[r + 1]; k++) {{
            if (c[k] <= r) {{
                cols[q] = c[k];
                q++;
            }}
        }}
    }}
    rows[n] = q;
}}
"
    )
}
