//! The pattern of a sparse Hessian from `F`'s own code
//! (docs/jacobians.md#sparse-hessians): `NAME__hp`, `F`'s dependency
//! sweep with interactions (`ad::sets` on a forward derivative whose spec
//! has `interactions`, asked for with `__adc_sets = 3`), run by
//! `NAME__hdeps` with one singleton set per column. The sweep carries
//! each value's index set and records, at each nonlinear operation, a
//! pair of sets whose columns interact (Walther 2008: index domains and
//! nonlinear interaction domains). Row `c` of the Hessian's pattern is
//! the union, over the records `(a, b)` with `c` in `a`, of `b`, and over
//! those with `c` in `b`, of `a`: symmetric by construction.
//!
//! The helpers, each a loop nest out of line (`[checkpoint]`):
//!
//! - `NAME__helems(h, arena, seen, stack, buf)`: set `h`'s columns into
//!   `buf`, their number returned (union nodes by `NAME__gj__lazy`, with a
//!   fresh stamp from `arena[3]`, which the sweep no longer needs).
//! - `NAME__hcount(arena, q)`: each row's entries counted over the
//!   records, duplicates included, into `q[c + 1]`, then prefix sums
//!   (`q[c]` where row `c` starts); returns the total.
//! - `NAME__hfill(arena, q, raw)`: the rows' entries into `raw` at `q`,
//!   then each row's duplicates dropped in place (`q` moved with them);
//!   returns the number of entries left.
//! - `NAME__htrans(q, raw, p, c)`: the transpose of the pattern by
//!   counting, which is the pattern itself (it is symmetric) with each
//!   row's columns increasing: the compressed rows `p`/`c` the coloring
//!   and `NAME__lower` take.

use crate::ast::*;
use crate::jacobian::layout::{layout, param_decls};
use std::fmt::Write;

/// The suffixes of the functions generated here (after `NAME`).
pub(super) const GENERATED: [&str; 7] = [
    "__hp", "__hdeps", "__helems", "__hcount", "__hfill", "__htrans", "__hlower",
];

/// Whether the sweep from `F`'s code serves for the program `items`:
/// no function has a custom derivative (the Hessian's values would come
/// from it, not from the code the sweep reads) and none is `extern`.
/// Otherwise the Hessian keeps the sweep through the reverse derivative.
pub(super) fn applies(items: &[Item]) -> bool {
    items.iter().all(|item| match item {
        Item::Func(f) => {
            f.body.is_some()
                && !f.attrs.iter().any(|a| {
                    matches!(
                        a.name.name.as_str(),
                        "reverse_derivative" | "forward_derivative"
                    )
                })
        }
        _ => true,
    })
}

fn ident(s: &str, span: adc_ir::Span) -> AttrArg {
    AttrArg::Ident(Ident {
        name: s.into(),
        span,
    })
}

/// `[autodiff_forward(NAME__hp, ..., Const, __adc_sets = 3)]` for `f`:
/// the sweep with interactions, `Dual` where the Hessian is, its result
/// `Const` (the result's set serves nothing).
pub(super) fn forward_attr(a: &Attr, name: &str, dual: &[bool]) -> Attr {
    let mut args = vec![ident(&format!("{name}__hp"), a.span)];
    for d in dual {
        args.push(ident(if *d { "Dual" } else { "Const" }, a.span));
    }
    args.push(ident("Const", a.span));
    args.push(AttrArg::Named(
        Ident {
            name: crate::lower::SETS_OPTION.into(),
            span: a.span,
        },
        Box::new(AttrArg::Int(3, a.span)),
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

/// The statements of `NAME` and `NAME_nnz` that run the sweep (again,
/// with twice the room asked for, until its sets fit; `restore` puts
/// `F`'s `inout` arguments back before each run, and after the last, for
/// what follows) and then `body`, with
/// the rows of both triangles in `adc_hs_q`/`adc_hs_raw` (`adc_hs_nz`
/// entries, each row's columns in no order) and `adc_hs_n` columns.
pub(super) fn sweep(f: &FuncDecl, name: &str, restore: &str, body: &str) -> String {
    let args: Vec<&str> = f.params.iter().map(|p| p.name.name.as_str()).collect();
    let sep = if args.is_empty() { "" } else { ", " };
    let args = args.join(", ");
    format!(
        "    int adc_hs_cap = 64 + 8 * adc_hs_n;
    bool adc_hs_done = false;
    while (!adc_hs_done) {{
{restore}        int adc_s_arena[adc_hs_cap];
        if ({name}__hdeps({args}{sep}adc_s_arena)) {{
            adc_hs_done = true;
{restore}            int adc_hs_q[adc_hs_n + 1];
            int adc_hs_m = {name}__hcount(adc_s_arena, adc_hs_q);
            int adc_hs_raw[adc_hs_m];
            int adc_hs_nz = {name}__hfill(adc_s_arena, adc_hs_q, adc_hs_raw);
{body}        }} else {{
            adc_hs_cap = 2 * (adc_s_arena[0] > adc_hs_cap ? adc_s_arena[0] : adc_hs_cap);
        }}
    }}
"
    )
}

/// `NAME__hdeps` and the helpers of the module doc; `gj` names the
/// Jacobian of the gradient, whose `__lazy` flattens union nodes.
pub(super) fn helpers(f: &FuncDecl, name: &str, gj: &str, dual: &[bool]) -> String {
    let l = layout(f, dual, false);
    let mut s = String::new();
    let mut ps = param_decls(f);
    ps.push("inout int[] adc_s_arena".into());
    let _ = writeln!(s, "static bool {name}__hdeps({}) {{", ps.join(", "));
    // The header of `ad::sets` (the next free offset, the overflow flag,
    // the union nodes, the last union made) and the list of records.
    let _ = writeln!(s, "    adc_s_arena[0] = 5;");
    for k in 1..5 {
        let _ = writeln!(s, "    adc_s_arena[{k}] = 0;");
    }
    let mut args = Vec::new();
    for (k, (p, &d)) in f.params.iter().zip(dual).enumerate() {
        let n = &p.name.name;
        args.push(n.clone());
        if !d {
            continue;
        }
        let t = format!("adc_hs_t_{n}");
        args.push(t.clone());
        if p.is_array {
            let _ = writeln!(s, "    double {t}[len({n})];");
            if let Some(at) = &l.col_at[k] {
                let _ = writeln!(s, "    for (int adc_s_i = 0; adc_s_i < len({n}); adc_s_i++) {t}[adc_s_i] = double(-1 - ({at} + adc_s_i));");
            }
        } else {
            let seed = match &l.col_at[k] {
                Some(at) => format!("double(-1 - {at})"),
                None => "0.0".into(),
            };
            let _ = writeln!(s, "    double {t} = {seed};");
        }
    }
    args.push("adc_s_arena".into());
    let _ = writeln!(s, "    {name}__hp({});", args.join(", "));
    let _ = writeln!(s, "    return adc_s_arena[1] == 0;");
    let _ = writeln!(s, "}}");
    s += &loops(name, gj);
    s
}

/// The flattening scratch of `NAME__hcount` and `NAME__hfill`.
const SCRATCH: &str = "    int n = len(q) - 1;
    int big = arena[2] > 0 ? n : 0;
    int seen[big];
    int stack[2 * arena[2] + 2];
    int ba[big + 32];
    int bb[big + 32];
    int r = arena[4];
";

fn loops(name: &str, gj: &str) -> String {
    format!(
        "[checkpoint]
static int {name}__helems(int h, inout int[] arena, inout int[] seen, inout int[] stack, inout int[] buf) {{
    if (h < 0) {{
        buf[0] = -1 - h;
        return 1;
    }}
    int m = arena[h];
    if (m > 0) {{
        for (int k = 0; k < m; k++) {{ buf[k] = arena[h + 1 + k]; }}
        return m;
    }}
    arena[3] += 1;
    return {gj}__lazy(h, arena[3], arena, seen, stack, buf, 0);
}}
[checkpoint]
static int {name}__hcount(inout int[] arena, inout int[] q) {{
{SCRATCH}    arena[3] = 0;
    while (r > 0) {{
        int a = arena[r + 1];
        int b = arena[r + 2];
        int na = {name}__helems(a, arena, seen, stack, ba);
        if (a == b) {{
            for (int k = 0; k < na; k++) {{ q[ba[k] + 1] += na; }}
        }} else {{
            int nb = {name}__helems(b, arena, seen, stack, bb);
            for (int k = 0; k < na; k++) {{ q[ba[k] + 1] += nb; }}
            for (int k = 0; k < nb; k++) {{ q[bb[k] + 1] += na; }}
        }}
        r = arena[r];
    }}
    for (int c = 0; c < n; c++) {{ q[c + 1] += q[c]; }}
    return q[n];
}}
[checkpoint]
static int {name}__hfill(inout int[] arena, inout int[] q, inout int[] raw) {{
{SCRATCH}    int at[n];
    for (int c = 0; c < n; c++) {{ at[c] = q[c]; }}
    while (r > 0) {{
        int a = arena[r + 1];
        int b = arena[r + 2];
        int na = {name}__helems(a, arena, seen, stack, ba);
        int nb = na;
        if (a == b) {{
            for (int k = 0; k < na; k++) {{ bb[k] = ba[k]; }}
        }} else {{
            nb = {name}__helems(b, arena, seen, stack, bb);
            for (int k = 0; k < nb; k++) {{
                int c = bb[k];
                for (int j = 0; j < na; j++) {{ raw[at[c]] = ba[j]; at[c]++; }}
            }}
        }}
        for (int k = 0; k < na; k++) {{
            int c = ba[k];
            for (int j = 0; j < nb; j++) {{ raw[at[c]] = bb[j]; at[c]++; }}
        }}
        r = arena[r];
    }}
    int mark[n];
    int w = 0;
    int s = 0;
    for (int c = 0; c < n; c++) {{
        int e = q[c + 1];
        q[c] = w;
        for (int k = s; k < e; k++) {{
            int d = raw[k];
            if (mark[d] != c + 1) {{
                mark[d] = c + 1;
                raw[w] = d;
                w++;
            }}
        }}
        s = e;
    }}
    q[n] = w;
    return w;
}}
[checkpoint]
static void {name}__htrans(int[] q, int[] raw, inout int[] p, inout int[] c) {{
    int n = len(q) - 1;
    for (int k = 0; k < q[n]; k++) {{ p[raw[k] + 1] += 1; }}
    for (int r = 0; r < n; r++) {{ p[r + 1] += p[r]; }}
    int at[n];
    for (int r = 0; r < n; r++) {{ at[r] = p[r]; }}
    for (int r = 0; r < n; r++) {{
        for (int k = q[r]; k < q[r + 1]; k++) {{
            int d = raw[k];
            c[at[d]] = r;
            at[d]++;
        }}
    }}
}}
[checkpoint]
static int {name}__hlower(int[] q, int[] raw) {{
    int m = 0;
    for (int r = 0; r + 1 < len(q); r++) {{
        for (int k = q[r]; k < q[r + 1]; k++) {{
            if (raw[k] <= r) {{ m++; }}
        }}
    }}
    return m;
}}
"
    )
}
