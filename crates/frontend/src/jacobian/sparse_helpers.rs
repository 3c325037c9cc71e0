//! The loop helpers of `[jacobian(NAME, sparse)]` ([`super::sparse`]), as
//! `.ad` text.

use crate::ast::BaseType;

/// The loops of `NAME__fill`, each in its own function: `[checkpoint]`
/// keeps them out of line (`inline` leaves such functions; nothing
/// differentiates them), so each loop nest gets the registers to itself.
///
/// - `NAME__rows`: the rows from the sets (`heads`, `arena`); returns the
///   number of entries, of which it writes to `cols` those it has room
///   for (the caller then fails with `jacobian needs N entries`).
/// - `NAME__lazy`: appends the set `h` holding union nodes to `dst` from
///   `q`, increasing (as far as `dst` goes), and returns where it ends: a depth-first walk that
///   marks the columns met (`seen[c] == stamp`, one stamp per row) and the
///   nodes visited (`arena[g] == -1 - stamp`, so a node shared by two
///   paths is walked once), then a scan of the columns between the least
///   and the greatest met. The walk costs the set's nodes and leaves, the
///   scan its span of columns.
/// - `NAME__band`: when the widest span of columns in a row, `K`, needs
///   no more runs of `CHUNK` colors than the longest row (whose columns
///   all need colors of their own), column `c` gets color `c mod K` (two
///   columns of one row are less than `K` apart), and returns the number
///   of colors; otherwise 0. Linear in the rows and columns.
/// - `NAME__cyclic`: those colors, `c mod K` (`K` given: a sparse
///   Hessian's band pattern knows it from its table), and their number.
/// - `NAME__colcolor`: the columns' colors, by `NAME__band`, else by
///   `NAME__color`, and their number.
/// - `NAME__color`: otherwise, the columns' rows, `crow[cp[c] .. cp[c + 1]]`
///   (counts, then prefix sums make `cp[c + 1]` where column c's rows start, and filling
///   `crow` moves it to where they end), then `NAME__greedy`.
/// - `NAME__greedy`: greedy distance-2 coloring of the items `j` (the
///   columns; the rows, given the transposed pattern) in natural order,
///   item `j`'s neighbours `oi[op[j] .. op[j + 1]]` and a neighbour's
///   items `ii[ip[g] .. ip[g + 1]]`, increasing; returns the number of
///   colors. Only the items before `j` are colored when `j` is, so each
///   neighbour's items are scanned up to `j` (which it holds, so the scan
///   needs no other bound). `forbid[k] == j + 1` marks color `k` taken for
///   `j`, so the fresh zeros need no setting.
/// - `NAME__seed`: lane `color(c) - c0` of each column `c` of a parameter
///   (`m` columns from `at`) is 1, for the `w` lanes of the run.
/// - `NAME__scatter`: entry `q` of row `r` (`m` rows from `at`) is lane
///   `color(cols[q]) - c0` of the row's tangent `t`; when one run covers
///   all the colors every lane is there.
/// - `NAME__pick`: entry `q` is lane `lane[q] - c0` of row `from[q]`,
///   when that row is one of the `m` from `at`.
///
/// With `single` (a `float` `F`), the three lane helpers come twice, the
/// second time for `float` tangents (`NAME__seedf`, `NAME__scatterf`,
/// `NAME__pickf`: [`lane_suffix`]).
pub(super) fn helpers(name: &str, w: u32, single: bool) -> String {
    let mut s = loops(name, w);
    s += &lanes(name, "", "double");
    if single {
        s += &lanes(name, "f", "float");
    }
    s
}

/// The suffix of the lane helpers for tangents of type `t`.
pub(super) fn lane_suffix(t: BaseType) -> &'static str {
    if t == BaseType::Float {
        "f"
    } else {
        ""
    }
}

/// `NAME__seed`, `NAME__pick` and `NAME__scatter` for tangents of type
/// `ty`, named with `sfx` after them.
fn lanes(name: &str, sfx: &str, ty: &str) -> String {
    format!(
        "[checkpoint]
static void {name}__seed{sfx}(inout {ty}[] t, int at, int m, int c0, int w, int[] color) {{
    for (int i = 0; i < m; i++) {{
        int k = color[at + i] - c0;
        if (k >= 0 && k < w) {{ t[k * m + i] = 1.0; }}
    }}
}}
[checkpoint]
static void {name}__pick{sfx}({ty}[] t, int at, int m, int c0, int w, int[] lane, int[] from, out double[] vals) {{
    for (int q = 0; q < len(lane); q++) {{
        int k = lane[q] - c0;
        int i = from[q] - at;
        if (k >= 0 && k < w && i >= 0 && i < m) {{ vals[q] = t[k * m + i]; }}
    }}
}}
[checkpoint]
static void {name}__scatter{sfx}({ty}[] t, int at, int m, int c0, int w, int ncolors, int[] rows, int[] cols, int[] color, out double[] vals) {{
    if (ncolors <= w) {{
        for (int i = 0; i < m; i++) {{
            for (int q = rows[at + i]; q < rows[at + i + 1]; q++) {{
                vals[q] = t[color[cols[q]] * m + i];
            }}
        }}
    }} else {{
        for (int i = 0; i < m; i++) {{
            for (int q = rows[at + i]; q < rows[at + i + 1]; q++) {{
                int k = color[cols[q]] - c0;
                if (k >= 0 && k < w) {{ vals[q] = t[k * m + i]; }}
            }}
        }}
    }}
}}
"
    )
}

fn loops(name: &str, w: u32) -> String {
    let len_check = crate::lower::SPARSE_LEN;
    format!(
        "[checkpoint]
static int {name}__rows(int[] heads, inout int[] arena, out int[] rows, out int[] cols, inout int[] seen, inout int[] stack) {{
    int nr = len(heads);
    {len_check}(nr + 1, rows);
    int q = 0;
    for (int r = 0; r < nr; r++) {{
        rows[r] = q;
        int at = heads[r];
        if (at < 0) {{
            if (q < len(cols)) {{ cols[q] = -1 - at; }}
            q++;
        }} else if (at > 0) {{
            int m = arena[at];
            if (m > 0) {{
                for (int k = 1; k <= m; k++) {{
                    if (q < len(cols)) {{ cols[q] = arena[at + k]; }}
                    q++;
                }}
            }} else {{
                q = {name}__lazy(at, r + 1, arena, seen, stack, cols, q);
            }}
        }}
    }}
    rows[nr] = q;
    return q;
}}
[checkpoint]
static int {name}__lazy(int h, int stamp, inout int[] arena, inout int[] seen, inout int[] stack, inout int[] dst, int q) {{
    int lo = len(seen);
    int hi = -1;
    stack[0] = h;
    int sp = 1;
    while (sp > 0) {{
        sp--;
        int g = stack[sp];
        if (g < 0) {{
            int c = -1 - g;
            if (seen[c] != stamp) {{
                seen[c] = stamp;
                if (c < lo) {{ lo = c; }}
                if (c > hi) {{ hi = c; }}
            }}
        }} else if (g > 0) {{
            int n = arena[g];
            if (n > 0) {{
                for (int k = 1; k <= n; k++) {{
                    int c = arena[g + k];
                    if (seen[c] != stamp) {{
                        seen[c] = stamp;
                        if (c < lo) {{ lo = c; }}
                        if (c > hi) {{ hi = c; }}
                    }}
                }}
            }} else if (n != -1 - stamp) {{
                arena[g] = -1 - stamp;
                stack[sp] = arena[g + 1];
                stack[sp + 1] = arena[g + 2];
                sp += 2;
            }}
        }}
    }}
    for (int c = lo; c <= hi; c++) {{
        if (seen[c] == stamp) {{
            if (q < len(dst)) {{ dst[q] = c; }}
            q++;
        }}
    }}
    return q;
}}
[checkpoint]
static int {name}__band(int nr, int[] rows, int[] cols, out int[] color) {{
    int span = 1;
    int most = 1;
    for (int r = 0; r < nr; r++) {{
        int lo = rows[r];
        int hi = rows[r + 1];
        if (hi > lo) {{
            int s = cols[hi - 1] - cols[lo] + 1;
            if (s > span) {{ span = s; }}
            if (hi - lo > most) {{ most = hi - lo; }}
        }}
    }}
    if ((span + {w} - 1) / {w} > (most + {w} - 1) / {w}) {{ return 0; }}
    return {name}__cyclic(span, color);
}}
[checkpoint]
static int {name}__cyclic(int span, out int[] color) {{
    int k = 0;
    for (int c = 0; c < len(color); c++) {{
        color[c] = k;
        k++;
        if (k == span) {{ k = 0; }}
    }}
    if (span > len(color)) {{ return len(color); }}
    return span;
}}
[checkpoint]
static int {name}__colcolor(int nr, int[] rows, int[] cols, out int[] color) {{
    int k = {name}__band(nr, rows, cols, color);
    if (k == 0) {{ k = {name}__color(nr, rows, cols, color); }}
    return k;
}}
[checkpoint]
static int {name}__color(int nr, int[] rows, int[] cols, out int[] color) {{
    int nc = len(color);
    int cp[nc + 2];
    for (int p = 0; p < rows[nr]; p++) {{ cp[cols[p] + 2] += 1; }}
    for (int c = 2; c < nc + 2; c++) {{ cp[c] += cp[c - 1]; }}
    int crow[rows[nr]];
    for (int r = 0; r < nr; r++) {{
        for (int p = rows[r]; p < rows[r + 1]; p++) {{
            int c = cols[p] + 1;
            int at = cp[c];
            crow[at] = r;
            cp[c] = at + 1;
        }}
    }}
    return {name}__greedy(cp, crow, rows, cols, color);
}}
[checkpoint]
static int {name}__greedy(int[] op, int[] oi, int[] ip, int[] ii, out int[] color) {{
    int n = len(color);
    int forbid[n + 1];
    int ncolors = 0;
    for (int j = 0; j < n; j++) {{
        for (int p = op[j]; p < op[j + 1]; p++) {{
            int o = ip[oi[p]];
            int c = ii[o];
            while (c < j) {{
                forbid[color[c]] = j + 1;
                o++;
                c = ii[o];
            }}
        }}
        int k = 0;
        while (forbid[k] == j + 1) {{ k++; }}
        color[j] = k;
        if (k >= ncolors) {{ ncolors = k + 1; }}
    }}
    return ncolors;
}}
"
    )
}
