//! The rows of a sparse Jacobian (docs/jacobians.md#sparse-jacobians):
//! a distance-2 coloring of the rows (two rows that share a column get
//! different colors) and the compressed evaluation by a reverse
//! vector-mode derivative `NAME__reverse` of width [`CHUNK`], run once
//! per [`CHUNK`] row colors, each lane seeded with the sum of one color's
//! rows: column `c`'s gradient in the lane of row `r`'s color is the
//! entry `(r, c)`, since no other row of that color reaches column `c`.
//!
//! `NAME__choose` colors the columns or the rows, whichever takes less
//! time by [`FORWARD_COST`] and [`REVERSE_COST`] per run, computing a
//! coloring only when its lower bound (the longest row's entries for
//! the columns, the longest column's for the rows) could win.
//! A function without a result gets its reverse derivative through a
//! copy, `NAME__rf`, that returns `0.0` (reverse vector mode needs a
//! float result; its seed is zero).

use super::layout::save_restore;
use super::layout::{len, param_decls, sparse_names, Layout};
use super::sparse::{chunks, CHUNK};
use crate::ast::*;
use std::fmt::Write;

/// The relative time of one run of the width-4 forward derivative and
/// one of the width-4 reverse derivative (a primal run with its tape,
/// then the sweep back), measured by `benches/sparse.sh rows` on the
/// tridiagonal `bratu` at 10^5, where either takes one run: see
/// docs/performance.md#sparse-jacobians.
pub const FORWARD_COST: u32 = 2;
pub const REVERSE_COST: u32 = 3;

/// Which way `NAME__fill` computes a sparse Jacobian: the options
/// `forward` and `reverse` after `sparse` force one. `Colors` (the
/// internal option `__adc_colors` after `sparse, forward`, which only a
/// sparse Hessian with its own pattern writes): by columns, with no
/// sweep, `NAME` or `NAME_nnz`, only the compressed evaluation and the
/// coloring helpers, which the Hessian calls.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Force {
    Auto,
    Columns,
    Rows,
    Colors,
}

/// The internal option asking for [`Force::Colors`].
pub const COLORS_OPTION: &str = "__adc_colors";

/// Whether `f` can have its sparse Jacobian by rows: it has a body and
/// a `double` result or none (`NAME__rf` stands for it then).
pub(crate) fn rows_possible(f: &FuncDecl) -> bool {
    f.body.is_some() && matches!(f.ret, ReturnType::Void | ReturnType::Base(BaseType::Double))
}

/// The name of the function the reverse derivative is taken of: `F`
/// itself when it returns a `double`, else its copy `NAME__rf`.
pub(crate) fn reversed(f: &FuncDecl, name: &str) -> Option<String> {
    (f.ret == ReturnType::Void).then(|| format!("{name}__rf"))
}

/// `NAME__rf`: `F` returning `0.0` (every `return;` and the end; a
/// `return e;` of a function with an `int` or `bool` result becomes
/// `{ e; return 0.0; }`), with `attr` (its reverse derivative) on it;
/// `static`, so it is no entry.
pub(crate) fn void_copy(f: &FuncDecl, name: &str, attr: Attr) -> Item {
    let span = f.span;
    let zero = || Expr {
        kind: ExprKind::Float("0.0".into()),
        span,
    };
    fn walk(stmts: &mut [Stmt], zero: &dyn Fn() -> Expr) {
        for s in stmts {
            match s {
                Stmt::Return(e, _) if e.is_none() => *e = Some(zero()),
                Stmt::Return(e, at) => {
                    let value = e.take().map(Stmt::Expr);
                    *s = Stmt::Block(
                        value
                            .into_iter()
                            .chain([Stmt::Return(Some(zero()), *at)])
                            .collect(),
                    );
                }
                Stmt::If {
                    then_branch,
                    else_branch,
                    ..
                } => {
                    walk(then_branch, zero);
                    if let Some(b) = else_branch {
                        walk(b, zero);
                    }
                }
                Stmt::While { body, .. } | Stmt::For { body, .. } | Stmt::Block(body) => {
                    walk(body, zero)
                }
                Stmt::Attributed { stmt, .. } => walk(std::slice::from_mut(&mut **stmt), zero),
                _ => (),
            }
        }
    }
    let mut body = f.body.clone().unwrap_or_default();
    walk(&mut body, &zero);
    body.push(Stmt::Return(Some(zero()), span));
    Item::Func(FuncDecl {
        attrs: vec![attr],
        ret: ReturnType::Base(BaseType::Double),
        name: Ident {
            name: format!("{name}__rf"),
            span: f.name.span,
        },
        params: f.params.clone(),
        body: Some(body),
        is_static: true,
        span,
    })
}

/// Statements of `NAME__fill` choosing (or, `Force::Rows`, taking) the
/// rows: `NAME__choose` colors one side; by rows, `NAME__byrows` does
/// the rest and its result is returned.
pub(crate) fn fill_statements(f: &FuncDecl, name: &str, force: Force) -> String {
    let mode = if force == Force::Rows { 2 } else { 0 };
    let mut s = String::new();
    let [vals, cols, rows] = sparse_names(f);
    let _ = writeln!(s, "    int adc_s_rcolor[len(adc_s_h)];");
    let _ = writeln!(s, "    int adc_s_ncolors = {name}__choose(len(adc_s_h), {rows}, {cols}, adc_s_color, adc_s_rcolor, {mode});");
    let mut args: Vec<&str> = f.params.iter().map(|p| p.name.name.as_str()).collect();
    args.extend([&vals, &rows, &cols].map(String::as_str));
    args.extend(["adc_s_rcolor", "-1 - adc_s_ncolors"]);
    let call = format!("{name}__byrows({})", args.join(", "));
    let run = if f.ret == ReturnType::Void {
        format!("{call}; return;")
    } else {
        format!("return {call};")
    };
    if force == Force::Rows {
        let _ = writeln!(s, "    {run}");
    } else {
        let _ = writeln!(s, "    if (adc_s_ncolors < 0) {{ {run} }}");
    }
    s
}

/// `NAME__byrows`: `F`'s parameters, then the rows (`vals`, `rows`,
/// `cols`), the rows' colors and their number; runs `NAME__reverse`
/// once per [`CHUNK`] colors from `F`'s inputs (so the last run leaves
/// `F`'s writes) and returns `F`'s result.
pub(crate) fn byrows(f: &FuncDecl, name: &str, dual: &[bool], l: &Layout) -> String {
    let w = CHUNK;
    let float_ret = f.ret == ReturnType::Base(BaseType::Double);
    let mut s = String::new();
    let [vals, cols, rows] = sparse_names(f);
    let mut ps = param_decls(f);
    ps.extend([
        format!("out double[] {vals}"),
        format!("int[] {rows}"),
        format!("int[] {cols}"),
        "int[] adc_s_rc".into(),
        "int adc_s_k".into(),
    ]);
    let ret = if float_ret { "double" } else { "void" };
    let _ = writeln!(s, "static {ret} {name}__byrows({}) {{", ps.join(", "));
    let _ = writeln!(s, "    int adc_s_nc = {};", l.ncols);
    let (save, restore) = save_restore(f);
    s += &save;
    for (p, &d) in f.params.iter().zip(dual) {
        if d {
            let _ = writeln!(s, "    double adc_s_d_{}[{w} * {}];", p.name.name, len(p));
        }
    }
    let _ = writeln!(s, "    double adc_s_seed[{w}];");
    let _ = writeln!(s, "    double adc_s_g[{w} * adc_s_nc];");
    if float_ret {
        let _ = writeln!(s, "    double adc_s_ret = 0.0;");
    }
    let mut args = chunks(
        &mut s,
        f,
        dual,
        ("adc_s_k", CHUNK, &restore),
        "adc_s_d_",
        &mut |s, k, p| {
            // Every lane of every shadow is set: the seeds of this run's rows,
            // zeros elsewhere (input shadows add up gradients).
            let at = l.row_at[k].as_deref().unwrap_or("-1");
            let _ = writeln!(
                s,
                "        {name}__rseed(adc_s_d_{}, {at}, {}, adc_s_c0, adc_s_rc);",
                p.name.name,
                len(p)
            );
        },
    );
    let first = if float_ret { "0" } else { "-1" };
    let _ = writeln!(
        s,
        "        {name}__rseed(adc_s_seed, {first}, 1, adc_s_c0, adc_s_rc);"
    );
    args.push("adc_s_seed".into());
    let set = if float_ret { "adc_s_ret = " } else { "" };
    let _ = writeln!(s, "        {set}{name}__reverse({});", args.join(", "));
    for (k, p) in f.params.iter().enumerate() {
        let Some(at) = &l.col_at[k] else { continue };
        let n = &p.name.name;
        let _ = writeln!(
            s,
            "        {name}__put(adc_s_d_{n}, {at}, {}, adc_s_g);",
            len(p)
        );
    }
    let _ = writeln!(
        s,
        "        {name}__gather(adc_s_g, adc_s_c0, {rows}, {cols}, adc_s_rc, {vals});"
    );
    let _ = writeln!(s, "    }}");
    if float_ret {
        let _ = writeln!(s, "    return adc_s_ret;");
    }
    let _ = writeln!(s, "}}");
    s
}

/// The helpers of the rows, `[checkpoint]` as those of `sparse::helpers`:
///
/// - `NAME__choose`: the columns' colors to `color` and their number,
///   or the rows' colors to `rcolor` and `-1 -` their number; `mode` 2
///   forces the rows. Without `mode`, when the columns' bound takes no
///   more than one reverse run (the least the rows can take), the
///   columns are colored first, and kept with no count of the columns
///   when they take no more either. Then the bounds: the
///   columns need as many colors as the longest row has entries, the
///   rows as the longest column; the side whose bound is cheaper is
///   colored, and the other only if its bound beats that coloring's
///   cost. A greedy coloring costs the sum of the squares of the other
///   side's lengths, at most the entries times the longest; so the
///   coloring left unused costs no more than the one used would have
///   cost in runs of the derivative.
/// - `NAME__rowcolor`: the rows' colors, the columns' (`NAME__band`,
///   else `NAME__greedy`) of the transposed pattern (`tp`, `trow`: each
///   column's rows, increasing); returns their number.
/// - `NAME__runs`: the runs `k` colors take (one at least).
/// - `NAME__rseed`: lane `k` of each of the `m` rows from `at` (none
///   when `at < 0`) is 1 when the row has color `c0 + k`, else 0.
/// - `NAME__put`: lane `k` of each of the `m` columns from `at` to
///   `g[k * nc + column]`.
/// - `NAME__gather`: entry `q` of row `r` is lane `rcolor(r) - c0` of its
///   column's gradient in `g`.
pub(crate) fn helpers(name: &str) -> String {
    let (w, fc, rc) = (CHUNK, FORWARD_COST, REVERSE_COST);
    format!(
        "[checkpoint]
static int {name}__choose(int nr, int[] rows, int[] cols, out int[] color, out int[] rcolor, int mode) {{
    if (mode == 2) {{ return -1 - {name}__rowcolor(nr, rows, cols, rcolor, len(color)); }}
    int nc = len(color);
    int wide = 0;
    for (int r = 0; r < nr; r++) {{
        if (rows[r + 1] - rows[r] > wide) {{ wide = rows[r + 1] - rows[r]; }}
    }}
    int kc = -1;
    if ({fc} * {name}__runs(wide) <= {rc}) {{
        kc = {name}__colcolor(nr, rows, cols, color);
        if ({fc} * {name}__runs(kc) <= {rc}) {{ return kc; }}
    }}
    int count[nc];
    for (int p = 0; p < rows[nr]; p++) {{ count[cols[p]] += 1; }}
    int tall = 0;
    for (int c = 0; c < nc; c++) {{
        if (count[c] > tall) {{ tall = count[c]; }}
    }}
    int lc = {fc} * {name}__runs(wide);
    int lr = {rc} * {name}__runs(tall);
    if (lc <= lr) {{
        if (kc < 0) {{
            kc = {name}__colcolor(nr, rows, cols, color);
        }}
        if ({fc} * {name}__runs(kc) <= lr) {{ return kc; }}
    }}
    int kr = {name}__rowcolor(nr, rows, cols, rcolor, nc);
    if (kc < 0) {{
        if ({rc} * {name}__runs(kr) < lc) {{ return -1 - kr; }}
        kc = {name}__colcolor(nr, rows, cols, color);
    }}
    if ({rc} * {name}__runs(kr) < {fc} * {name}__runs(kc)) {{ return -1 - kr; }}
    return kc;
}}
[checkpoint]
static int {name}__rowcolor(int nr, int[] rows, int[] cols, out int[] rcolor, int nc) {{
    int tp[nc + 1];
    int trow[rows[nr]];
    for (int p = 0; p < rows[nr]; p++) {{ tp[cols[p] + 1] += 1; }}
    for (int c = 0; c < nc; c++) {{ tp[c + 1] += tp[c]; }}
    int at[nc + 1];
    for (int c = 0; c <= nc; c++) {{ at[c] = tp[c]; }}
    for (int r = 0; r < nr; r++) {{
        for (int p = rows[r]; p < rows[r + 1]; p++) {{
            int c = cols[p];
            trow[at[c]] = r;
            at[c] += 1;
        }}
    }}
    int k = {name}__band(nc, tp, trow, rcolor);
    if (k == 0) {{ k = {name}__greedy(rows, cols, tp, trow, rcolor); }}
    return k;
}}
static int {name}__runs(int k) {{
    if (k <= {w}) {{ return 1; }}
    return (k + {w} - 1) / {w};
}}
[checkpoint]
static void {name}__rseed(out double[] t, int at, int m, int c0, int[] rcolor) {{
    for (int k = 0; k < {w}; k++) {{
        for (int i = 0; i < m; i++) {{
            if (at >= 0 && rcolor[at + i] - c0 == k) {{ t[k * m + i] = 1.0; }} else {{ t[k * m + i] = 0.0; }}
        }}
    }}
}}
[checkpoint]
static void {name}__put(double[] d, int at, int m, out double[] g) {{
    int nc = len(g) / {w};
    for (int k = 0; k < {w}; k++) {{
        for (int i = 0; i < m; i++) {{ g[k * nc + at + i] = d[k * m + i]; }}
    }}
}}
[checkpoint]
static void {name}__gather(double[] g, int c0, int[] rows, int[] cols, int[] rcolor, out double[] vals) {{
    int nc = len(g) / {w};
    for (int r = 0; r < len(rcolor); r++) {{
        int k = rcolor[r] - c0;
        if (k >= 0 && k < {w}) {{
            for (int q = rows[r]; q < rows[r + 1]; q++) {{ vals[q] = g[k * nc + cols[q]]; }}
        }}
    }}
}}
"
    )
}

/// The generated names of the rows' machinery.
pub(crate) fn names(name: &str) -> Vec<String> {
    [
        "byrows", "reverse", "choose", "rowcolor", "runs", "rseed", "put", "gather",
    ]
    .iter()
    .map(|h| format!("{name}__{h}"))
    .collect()
}
