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
//! - `NAME__hcount(arena, q)`: each row's entries counted over the
//!   records (both ways, duplicates included: symmetric) into `q[c + 2]`,
//!   then prefix sums, so `q[c + 1]` is where row `c` starts; returns the
//!   total. It turns the list around (oldest record first).
//! - `NAME__hfill(arena, q, raw)`: the rows' entries into `raw`, in no
//!   order, each moving `q[c + 1]` to where row `c` ends (so `q[c]` is
//!   where it starts). Flat sets and singletons are read in place; a set
//!   with union nodes is listed by `NAME__helems` (by `NAME__gj__lazy`,
//!   with a fresh stamp from `arena[3]`, which the sweep no longer needs).
//! - `NAME__hsort(q, raw, p)`: each row sorted in place by insertion, its
//!   duplicates dropped, the rows packed to `p`/`raw`; returns the lower
//!   triangle's entries; or, when a row is longer than [`SHORT`], -1,
//!   having changed nothing.
//! - `NAME__htrans(q, raw, p, c)`: otherwise, the transpose of `raw` by
//!   rows `r` in increasing order, so each row's columns increase, at
//!   `q`'s offsets (the transpose of a symmetric pattern has its row
//!   lengths), a duplicate dropped as it meets its copy at its row's end;
//!   then the rows packed to `p`/`raw` (through `c`); returns the lower
//!   triangle's entries.

use crate::ast::*;
use crate::jacobian::layout::{layout, param_decls};
use std::fmt::Write;

/// The suffixes of the functions generated here (after `NAME`).
pub(super) const GENERATED: [&str; 7] = [
    "__hp", "__hdeps", "__helems", "__hcount", "__hfill", "__hsort", "__htrans",
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

/// `[autodiff_forward(NAME__hp, ..., Const, __adc_sets = 3)]` for `f`:
/// the sweep with interactions, `Dual` where the Hessian is, its result
/// `Const` (the result's set serves nothing).
pub(super) fn forward_attr(a: &Attr, name: &str, dual: &[bool]) -> Attr {
    let option = (crate::lower::SETS_OPTION, 3);
    let hp = format!("{name}__hp");
    crate::jacobian::autodiff_forward(a, &hp, dual, Some("Const"), option)
}

/// The statements of `NAME` and `NAME_nnz` that run the sweep (again,
/// with twice the room asked for, until its sets fit; `restore` puts
/// `F`'s `inout` arguments back before each run, and after the last, for
/// what follows) and then `body`, with
/// the pattern of both triangles in `adc_hs_p`/`adc_hs_c` (each row's
/// columns increasing; `adc_hs_c` may be longer), `_adc_hs_lower` entries
/// in the lower one, and `adc_hs_n` columns.
pub(super) fn sweep(f: &FuncDecl, name: &str, restore: &str, body: &str) -> String {
    let args: Vec<&str> = f.params.iter().map(|p| p.name.name.as_str()).collect();
    let sep = if args.is_empty() { "" } else { ", " };
    let args = args.join(", ");
    format!(
        "    int adc_hs_cap = 64 + 8 * adc_hs_n;
    bool adc_hs_done = false;
    while (!adc_hs_done) {{
{restore}        int adc_s_arena[__adc_uninit(adc_hs_cap)];
        if ({name}__hdeps({args}{sep}adc_s_arena)) {{
            adc_hs_done = true;
{restore}            int adc_hs_q[adc_hs_n + 2];
            int adc_hs_m = {name}__hcount(adc_s_arena, adc_hs_q);
            int adc_hs_c[__adc_uninit(adc_hs_m)];
            {name}__hfill(adc_s_arena, adc_hs_q, adc_hs_c);
            int adc_hs_p[__adc_uninit(adc_hs_n + 1)];
            int _adc_hs_lower = {name}__hsort(adc_hs_q, adc_hs_c, adc_hs_p);
            if (_adc_hs_lower < 0) {{
                int adc_hs_t[__adc_uninit(adc_hs_m)];
                _adc_hs_lower = {name}__htrans(adc_hs_q, adc_hs_c, adc_hs_p, adc_hs_t);
            }}
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
    let mut args = crate::jacobian::sparse::seeds(&mut s, f, dual, &l);
    args.push("adc_s_arena".into());
    let _ = writeln!(s, "    {name}__hp({});", args.join(", "));
    let _ = writeln!(s, "    return adc_s_arena[1] == 0;");
    let _ = writeln!(s, "}}");
    s += &loops(name, gj);
    s
}

/// The flattening scratch of `NAME__hcount` and `NAME__hfill` (sized
/// for union nodes only when the arena holds some), and the list's head.
const SCRATCH: &str = "    int n = len(q) - 2;
    int big = arena[2] > 0 ? n : 0;
    int seen[big];
    int stack[2 * arena[2] + 2];
    int ba[__adc_uninit(big + 32)];
    int bb[__adc_uninit(big + 32)];
    int r = arena[4];
";

/// The statements of a record `(a, b)` in `NAME__hcount` and
/// `NAME__hfill`: `na` and `nb` its sets' sizes; `each(x, y, m)` the
/// statements adding the `ny` columns of set `y` to the rows of the `nx`
/// columns of set `x` (both flat, or singletons: column `x[k]` is
/// `elem(x, k)`); union nodes go through `NAME__helems` into `ba`/`bb`.
/// `next` steps `r` to the next record.
fn record(name: &str, next: &str, each: &dyn Fn(&str, &str, &str) -> String) -> String {
    let flat = |x: &str, y: &str, n: &str| {
        each(
            &format!("({x} < 0 ? -1 - {x} : arena[{x} + 1 + K])"),
            &format!("({y} < 0 ? -1 - {y} : arena[{y} + 1 + J])"),
            n,
        )
    };
    let listed = |x: &str, y: &str, n: &str| each(&format!("{x}[K]"), &format!("{y}[J]"), n);
    format!(
        "        int a = arena[r + 1];
        int b = arena[r + 2];
        int na = a < 0 ? 1 : arena[a];
        int nb = b < 0 ? 1 : arena[b];
        if (na > 0 && nb > 0) {{
{}            if (a != b) {{
{}            }}
        }} else {{
            na = {name}__helems(a, arena, seen, stack, ba);
            nb = {name}__helems(b, arena, seen, stack, bb);
{}            if (a != b) {{
{}            }}
        }}
        {next}
",
        flat("a", "b", "nb"),
        flat("b", "a", "na"),
        listed("ba", "bb", "nb"),
        listed("bb", "ba", "na"),
    )
}

fn loops(name: &str, gj: &str) -> String {
    // Row x[K] gets m entries more.
    // The list runs from the newest record back: turned around on the
    // way, so that the fill meets the records in the order the sweep
    // made them (a banded pattern's rows then come out nearly sorted).
    let reverse = "int next = arena[r];
        arena[r] = back;
        back = r;
        r = next;";
    let count = record(name, reverse, &|x, _, m| {
        format!(
            "            for (int k = 0; k < n{x0}; k++) {{ q[{x} + 2] += {m}; }}\n",
            x0 = if m == "nb" { "a" } else { "b" },
            x = x.replace('K', "k"),
        )
    });
    // Row x[K] gets the columns y[J].
    let fill = record(name, "r = arena[r];", &|x, y, m| {
        format!(
            "            for (int k = 0; k < n{x0}; k++) {{
                int c = {x} + 1;
                int w = q[c];
                for (int j = 0; j < {m}; j++) {{ raw[w + j] = {y}; }}
                q[c] = w + {m};
            }}\n",
            x0 = if m == "nb" { "a" } else { "b" },
            x = x.replace('K', "k"),
            y = y.replace('J', "j"),
        )
    });
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
    int back = 0;
    while (r > 0) {{
{count}    }}
    arena[4] = back;
    for (int c = 2; c <= n; c++) {{ q[c] += q[c - 1]; }}
    return q[n] + q[n + 1];
}}
[checkpoint]
static void {name}__hfill(inout int[] arena, inout int[] q, inout int[] raw) {{
{SCRATCH}    while (r > 0) {{
{fill}    }}
}}
[checkpoint]
static int {name}__hsort(int[] q, inout int[] raw, inout int[] p) {{
    int n = len(p) - 1;
    for (int r = 0; r < n; r++) {{
        if (q[r + 1] - q[r] > {SHORT}) {{ return -1; }}
    }}
    int w = 0;
    int lower = 0;
    for (int r = 0; r < n; r++) {{
        int lo = q[r];
        int hi = q[r + 1];
        for (int k = lo + 1; k < hi; k++) {{
            int v = raw[k];
            int j = k - 1;
            while (j >= lo && raw[j] > v) {{
                raw[j + 1] = raw[j];
                j--;
            }}
            raw[j + 1] = v;
        }}
        p[r] = w;
        int last = -1;
        for (int k = lo; k < hi; k++) {{
            int v = raw[k];
            if (v != last) {{
                raw[w] = v;
                w++;
                last = v;
                if (v <= r) {{ lower++; }}
            }}
        }}
    }}
    p[n] = w;
    return lower;
}}
[checkpoint]
static int {name}__htrans(int[] q, inout int[] raw, inout int[] p, inout int[] c) {{
    int n = len(p) - 1;
    int at[__adc_uninit(n)];
    for (int d = 0; d < n; d++) {{ at[d] = q[d]; }}
    for (int r = 0; r < n; r++) {{
        for (int k = q[r]; k < q[r + 1]; k++) {{
            int d = raw[k];
            int w = at[d];
            if (w == q[d] || c[w - 1] != r) {{
                c[w] = r;
                at[d] = w + 1;
            }}
        }}
    }}
    int w = 0;
    int lower = 0;
    for (int d = 0; d < n; d++) {{
        p[d] = w;
        for (int k = q[d]; k < at[d]; k++) {{
            int e = c[k];
            c[w] = e;
            w++;
            if (e <= d) {{ lower++; }}
        }}
    }}
    p[n] = w;
    for (int k = 0; k < w; k++) {{ raw[k] = c[k]; }}
    return lower;
}}
"
    )
}

/// The longest row `NAME__hsort` sorts in place (by insertion); a longer
/// one sends the pattern through `NAME__htrans`.
const SHORT: u32 = 16;
