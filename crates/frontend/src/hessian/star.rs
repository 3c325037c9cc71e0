//! Star coloring of a sparse Hessian's pattern (docs/jacobians.md#sparse-hessians),
//! as `.ad` text: Gebremedhin, Tarafdar, Manne and Pothen, "New acyclic
//! and star coloring algorithms with application to computing Hessians",
//! SIAM J. Sci. Comput. 29(3), 2007, and the greedy star coloring of
//! Gebremedhin, Manne and Pothen, "What color is your Jacobian?", SIAM
//! Review 47(4), 2005 (its Algorithm 4.1's simple form).
//!
//! A star coloring of the adjacency graph of a symmetric pattern (the
//! columns, two of them adjacent when an off-diagonal entry joins them)
//! gives adjacent columns different colors and every path on four columns
//! at least three colors: each two-colored part is a star. Then every
//! entry `(r, c)` can be read off the compressed Hessian `B` (row `r` of
//! `B` in color `k` sums the entries `(r, j)` with `color(j) = k`): either
//! `c` is the only column of its color in row `r`, and `(r, c)` is
//! `B[r][color(c)]`, or `r` is the only column of its color in row `c`,
//! and `(r, c) = (c, r)` is `B[c][color(r)]`. An arrowhead (one dense
//! row and column and the diagonal) takes two star colors where a
//! distance-2 coloring of its columns takes one per column.
//!
//! - `NAME__star(p, c, k, color)`: the star coloring of the pattern
//!   `c`/`p` (compressed rows, both triangles), greedy, the columns taken
//!   by decreasing row length (`order`, by counting: an arrowhead's dense
//!   column first wherever it is, so that its others share one color).
//!   For the `t`th column `v`, a color is forbidden (`forbid[color] == t + 1`)
//!   when a neighbor `w` has it, when an uncolored neighbor `w` has a
//!   neighbor `x` with it (distance 2), and when a colored neighbor `w`
//!   has a neighbor `x` with it that has another neighbor `y` of `w`'s
//!   color (the path `v w x y` would be two-colored). Colors are `1..`
//!   during the walk (0: not yet colored) and `0..` when returned.
//!   Returns the number of colors, or 0 when the star coloring is not
//!   used: when `k`, the distance-2 coloring's colors, fit in one run of
//!   `w`; as soon as its colors need as many runs as `k` (a band of
//!   half-width 2, five colors either way, gives up at its sixth
//!   column); when the walk exceeds `8 (R - 1) (nnz + n) + 1024` steps
//!   (`R` the runs of `k`, of which it could save `R - 1`, each reading
//!   `nnz + n` values at least); and when the pattern is not symmetric
//!   (its transpose, built by counting, differs).
//! - `NAME__sources(p, c, cols, rows, color, lane, from)`: for entry `q`
//!   of the lower triangle `cols`/`rows`, in row `r` and column `j`, the
//!   lane and row of `B` holding it: `(color(j), r)` when `j == r` or row
//!   `r` holds one column of `j`'s color, else `(color(r), j)`. Colors
//!   per row are counted with stamps (`seen[k] == r + 1`).

use std::fmt::Write;

/// The `.ad` text of `NAME__star` and `NAME__sources`; `w` colors per run.
pub(super) fn source(name: &str, w: u32) -> String {
    let mut s = String::new();
    let _ = write!(
        s,
        "[checkpoint]
static int {name}__star(int[] p, int[] c, int k, out int[] color) {{
    int n = len(p) - 1;
    if ((k + {w} - 1) / {w} <= 1) {{ return 0; }}
    int m = p[n];
    int at[n + 2];
    for (int v = 0; v < n; v++) {{ at[n - (p[v + 1] - p[v])] += 1; }}
    for (int j = 1; j <= n; j++) {{ at[j] += at[j - 1]; }}
    int order[n];
    for (int v = n - 1; v >= 0; v--) {{
        int j = n - (p[v + 1] - p[v]);
        at[j] -= 1;
        order[at[j]] = v;
    }}
    int forbid[n + 2];
    int budget = 8 * ((k + {w} - 1) / {w} - 1) * (m + n) + 1024;
    int work = 0;
    int ns = 0;
    for (int t = 0; t < n; t++) {{
        int v = order[t];
        for (int a = p[v]; a < p[v + 1]; a++) {{
            int wv = c[a];
            int cw = color[wv];
            if (wv != v && cw > 0) {{ forbid[cw] = t + 1; }}
            if (wv != v) {{
                for (int b = p[wv]; b < p[wv + 1]; b++) {{
                    int x = c[b];
                    int cx = color[x];
                    work++;
                    if (x != wv && cx > 0 && forbid[cx] != t + 1) {{
                        if (cw == 0) {{ forbid[cx] = t + 1; }}
                        else {{
                            int d = p[x];
                            while (d < p[x + 1]) {{
                                int y = c[d];
                                work++;
                                if (y != wv && y != x && color[y] == cw) {{
                                    forbid[cx] = t + 1;
                                    d = p[x + 1];
                                }} else {{
                                    d++;
                                }}
                            }}
                        }}
                    }}
                }}
            }}
        }}
        if (work > budget) {{ return 0; }}
        int col = 1;
        while (forbid[col] == t + 1) {{ col++; }}
        color[v] = col;
        if (col > ns) {{ ns = col; }}
        if (ns > {w} * ((k + {w} - 1) / {w} - 1)) {{ return 0; }}
    }}
    int tp[n + 2];
    for (int q = 0; q < m; q++) {{ tp[c[q] + 2] += 1; }}
    for (int j = 2; j < n + 2; j++) {{ tp[j] += tp[j - 1]; }}
    int tc[m];
    for (int r = 0; r < n; r++) {{
        for (int q = p[r]; q < p[r + 1]; q++) {{
            int j = c[q] + 1;
            tc[tp[j]] = r;
            tp[j] += 1;
        }}
    }}
    for (int j = 0; j <= n; j++) {{
        if (tp[j] != p[j]) {{ return 0; }}
    }}
    for (int q = 0; q < m; q++) {{
        if (tc[q] != c[q]) {{ return 0; }}
    }}
    for (int v = 0; v < n; v++) {{ color[v] -= 1; }}
    return ns;
}}
[checkpoint]
static void {name}__sources(int[] p, int[] c, int[] cols, int[] rows, int[] color, out int[] lane, out int[] from) {{
    int n = len(p) - 1;
    int seen[n + 1];
    int count[n + 1];
    for (int r = 0; r < n; r++) {{
        for (int q = p[r]; q < p[r + 1]; q++) {{
            int k = color[c[q]];
            if (seen[k] != r + 1) {{
                seen[k] = r + 1;
                count[k] = 0;
            }}
            count[k] += 1;
        }}
        for (int q = rows[r]; q < rows[r + 1]; q++) {{
            int j = cols[q];
            if (j == r || count[color[j]] == 1) {{
                lane[q] = color[j];
                from[q] = r;
            }} else {{
                lane[q] = color[r];
                from[q] = j;
            }}
        }}
    }}
}}
"
    );
    s
}
