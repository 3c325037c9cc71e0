//! A sparse Hessian's band pattern (docs/jacobians.md#sparse-hessians):
//! the pattern without a sweep when the pass `ad::band` proves `F`'s shape
//! at compile time (a fixed set of interacting offset pairs per block,
//! each block run for consecutive values of one index base). Written
//! here, as `.ad`:
//!
//! - `NAME__hband(F's parameters, inout int[] info)`: an empty stub that
//!   `ad::band` fills (a copy of `F` recording each block's bases), or
//!   leaves empty (`info[0]` stays -1: the sweep runs);
//! - `NAME__hbsize(info, n)`: -1 when the pattern does not serve (no
//!   static pattern, a block run out of order, a row outside `0..n`),
//!   else room enough for its entries;
//! - `NAME__hbrows(info, n, what, p, c, tg, kc, c0, v)`: with `what` 0,
//!   the lower triangle's entries; 3, both triangles'; 1, the same, and
//!   the rows of both triangles (each row's columns increasing, no
//!   duplicate) into `p`/`c`; 2, the lower triangle's rows into `p`/`c`
//!   (`NAME`'s `rows` and `cols`, long enough), returning the widest span
//!   of a row's columns in both triangles (1 for none: `NAME__gj__band`'s
//!   `K`); 4, that span alone; 6, as 2 (the rows only when `c0` is 0), and
//!   into `v` the values of the entries whose column `c` has its color
//!   `c mod kc` in the run from `c0`: lane `c mod kc - c0` of the row's
//!   element of the tangents `tg` (`len(tg) / n` lanes of `n`); 7, 1 when
//!   a segment of 12 rows or more has the offsets `-b..=b` (`b` 1 to 3)
//!   and `2 b + 1` is the widest span, else 0: its rows hold `P^b` (the
//!   `b`th power of a path of 12 columns, induced), whose star colorings
//!   take `2 b + 1` colors at least (found by exhaustive search), so no
//!   star coloring takes fewer colors than the band coloring. The rows
//!   split at the ends of each pair's range into segments, each with one
//!   sorted list of column offsets;
//! - `NAME__hbput`: one segment's rows, then its entries in blocks of
//!   rows, offset by offset in each (a stride of the segment's offsets),
//!   the color of an entry's column counted along the rows, not divided;
//!   the columns and the values in one loop when one run holds every
//!   color. The loops over one offset's rows of a block are functions of
//!   their own, out of line (`[checkpoint]`), whose few values stay in
//!   registers (inside `NAME__hbput`'s nest Cranelift kept them on the
//!   stack, seven loads and five stores a row):
//! - `NAME__hbrun(c, v, t, q, k, col, end, i, step, wrap)`: one run of
//!   every color, the columns `col..end` and their values into `c`/`v`
//!   from `q` on, every `k`th; the value's index `i` in the tangents goes
//!   `step` (`n + 1`: next row, next lane) a row, less `wrap` (`span n`)
//!   once past the last lane (a select, no branch);
//! - `NAME__hblane(v, t, q, step, i, end, span)`: one lane's values, the
//!   tangents' `i..end` every `span`th into `v` from `q` every `step`th.
//!
//! [`eval`] writes the band coloring's evaluation.

use crate::ast::*;
use crate::jacobian::layout::{param_decls, sparse_names};
use adc_ir::ad::{BAND_INFO_LEN, BAND_STUB_SUFFIX};

/// The suffixes of the functions generated here (after `NAME`).
pub(super) const GENERATED: [&str; 8] = [
    BAND_STUB_SUFFIX,
    "__hbsize",
    "__hbrows",
    "__hbput",
    "__hbrun",
    "__hblane",
    "__hbeval",
    "__hbseed",
];

/// The statements of `NAME_nnz` (`fast` `None`) and `NAME`: the band
/// pattern's table, then
///
/// - for `NAME_nnz`, `_adc_hs_lower` its lower entries and `body`;
/// - for `NAME`, the lengths of `vals`, `cols` and `rows` checked
///   (`hessian needs N entries`) and `adc_hb_span` the widest span of a
///   row's columns; `fast` when the band coloring (`c mod adc_hb_span`)
///   takes one run of `chunk` colors, or when no star coloring can take
///   fewer colors (`NAME__hbrows`' `what` 7; no star coloring then, no
///   full pattern: `fast` writes the lower triangle), else the lower triangle
///   into `rows`/`cols`, both triangles' rows into `adc_hs_p`/`adc_hs_c`
///   for the colorings and `body`;
///
/// or `fallback` when the table does not serve.
pub(super) fn sweep(
    f: &FuncDecl,
    name: &str,
    fast: Option<(&str, u32)>,
    body: &str,
    fallback: &str,
) -> String {
    let args: Vec<&str> = f.params.iter().map(|p| p.name.name.as_str()).collect();
    let sep = if args.is_empty() { "" } else { ", " };
    let args = args.join(", ");
    let table = match fast {
        None => format!(
            "        int adc_hs_p[0];
        int adc_hs_c[0];
        int _adc_hs_lower = {name}__hbrows(adc_hb_info, adc_hs_n, 0, adc_hs_p, adc_hs_c, adc_hb_t, 0, 0, adc_hb_v);
{body}"
        ),
        Some((fast, chunk)) => {
            let len = crate::lower::SPARSE_HESSIAN_LEN;
            let [vals, cols, rows] = sparse_names(f);
            format!(
                "        int adc_hb_low = {name}__hbrows(adc_hb_info, adc_hs_n, 0, {rows}, {cols}, adc_hb_t, 0, 0, adc_hb_v);
        {len}(adc_hb_low, {vals});
        {len}(adc_hb_low, {cols});
        {len}(adc_hs_n + 1, {rows});
        int adc_hb_span = {name}__hbrows(adc_hb_info, adc_hs_n, 4, {rows}, {cols}, adc_hb_t, 0, 0, adc_hb_v);
        if (adc_hb_span <= {chunk} || {name}__hbrows(adc_hb_info, adc_hs_n, 7, {rows}, {cols}, adc_hb_t, 0, 0, adc_hb_v) > 0) {{
{fast}        }} else {{
            {name}__hbrows(adc_hb_info, adc_hs_n, 2, {rows}, {cols}, adc_hb_t, 0, 0, adc_hb_v);
            int adc_hs_p[__adc_uninit(adc_hs_n + 1)];
            int adc_hs_c[__adc_uninit(adc_hb_m)];
            {name}__hbrows(adc_hb_info, adc_hs_n, 1, adc_hs_p, adc_hs_c, adc_hb_t, 0, 0, adc_hb_v);
{body}        }}
"
            )
        }
    };
    format!(
        "    int adc_hb_info[{BAND_INFO_LEN}];
    adc_hb_info[0] = -1;
    {name}{BAND_STUB_SUFFIX}({args}{sep}adc_hb_info);
    int adc_hb_m = {name}__hbsize(adc_hb_info, adc_hs_n);
    if (adc_hb_m >= 0) {{
        double adc_hb_t[0];
        double adc_hb_v[0];
{table}    }} else {{
{fallback}    }}
"
    )
}

/// The stub and the two helpers of the module doc.
pub(super) fn helpers(f: &FuncDecl, name: &str) -> String {
    let mut ps = param_decls(f);
    ps.push("inout int[] adc_hb_info".into());
    format!(
        "[checkpoint]
static void {name}{BAND_STUB_SUFFIX}({}) {{ }}
[checkpoint]
static int {name}__hbsize(int[] info, int n) {{
    int nu = info[0];
    if (nu < 0) {{ return -1; }}
    int m = 0;
    for (int k = 0; k < info[1]; k++) {{
        int at = 2 + 3 * nu + 3 * k;
        int s = 2 + 3 * info[at + 2];
        if (info[s + 2] == 2) {{ return -1; }}
        if (info[s + 2] == 1) {{
            int lo = info[s] + info[at + 1];
            int hi = info[s + 1] + info[at + 1];
            int d = info[at];
            if (lo < 0 || hi > n || lo + d < 0 || hi + d > n) {{ return -1; }}
            m += hi - lo;
        }}
    }}
    return m;
}}
[checkpoint]
static int {name}__hbrows(int[] info, int n, int what, inout int[] p, inout int[] c, double[] tg, int kc, int c0, inout double[] v) {{
    int nu = info[0];
    int t = info[1];
    int at0 = 2 + 3 * nu;
    int bp[2 * t + 2];
    bp[0] = 0;
    bp[1] = n;
    int nb = 2;
    for (int k = 0; k < t; k++) {{
        int at = at0 + 3 * k;
        int s = 2 + 3 * info[at + 2];
        if (info[s + 2] == 1) {{
            bp[nb] = info[s] + info[at + 1];
            bp[nb + 1] = info[s + 1] + info[at + 1];
            nb += 2;
        }}
    }}
    for (int k = 1; k < nb; k++) {{
        int v = bp[k];
        int j = k - 1;
        while (j >= 0 && bp[j] > v) {{
            bp[j + 1] = bp[j];
            j--;
        }}
        bp[j + 1] = v;
    }}
    int ds[t + 1];
    int w = 0;
    int lower = 0;
    int both = 0;
    int span = 1;
    int band = 0;
    for (int g = 0; g + 1 < nb; g++) {{
        int a = bp[g];
        int e = bp[g + 1];
        if (a < e) {{
            int m = 0;
            int low = 0;
            for (int k = 0; k < t; k++) {{
                int at = at0 + 3 * k;
                int s = 2 + 3 * info[at + 2];
                int c1 = info[at + 1];
                int d = info[at];
                if (info[s + 2] == 1 && info[s] + c1 <= a && a < info[s + 1] + c1) {{
                    if (m == 0 || ds[m - 1] != d) {{
                        ds[m] = d;
                        m++;
                        if (d <= 0) {{ low++; }}
                    }}
                }}
            }}
            lower += (e - a) * low;
            both += (e - a) * m;
            if (m > 0 && ds[m - 1] - ds[0] + 1 > span) {{ span = ds[m - 1] - ds[0] + 1; }}
            // A full band of half-width 1 to 3 over 12 rows or more.
            if (e - a >= 12 && m >= 3 && m <= 7 && ds[0] == -ds[m - 1] && ds[m - 1] - ds[0] + 1 == m && m > band) {{ band = m; }}
            // The lower triangle's offsets come first (`d <= 0`, increasing).
            int k = what == 1 ? m : low;
            if (what == 1 || what == 2 || what == 6) {{
                {name}__hbput(a, e, w, ds, k, what != 6 || c0 == 0, p, c, tg, n, kc, c0, v);
                w += (e - a) * k;
            }}
        }}
    }}
    if (what == 1 || what == 2 || what == 6) {{ p[n] = w; }}
    if (what == 0) {{ return lower; }}
    if (what == 7) {{ return band == span ? 1 : 0; }}
    return what == 1 || what == 3 ? both : span;
}}
[checkpoint]
static void {name}__hbput(int a, int e, int w, int[] ds, int k, bool pattern, inout int[] p, inout int[] c, double[] t, int n, int span, int c0, inout double[] v) {{
    if (pattern) {{
        int q = w;
        for (int r = a; r < e; r++) {{
            p[r] = q;
            q += k;
        }}
    }}
    int lanes = n > 0 ? len(t) / n : 0;
    // Blocks of rows: the entries of each stay in the cache over its
    // offsets. Offset `d`'s entry of row `r` has the color
    // `(r + d) mod span`: lane `l` holds the rows `r` with
    // `r + d = c0 + l (mod span)`, every `span`-th.
    for (int b = a; b < e; b += 256) {{
        int f = e - b < 256 ? e : b + 256;
        for (int j = 0; j < k; j++) {{
            int d = ds[j];
            int q0 = w + (b - a) * k + j;
            if (pattern && c0 == 0 && span > 0 && lanes >= span) {{
                // One run holds every color: the columns and the values
                // in one pass, the entry's lane (its column's color)
                // counted along the rows.
                int i = (((b + d) % span + span) % span) * n + b;
                {name}__hbrun(c, v, t, q0, k, b + d, f + d, i, n + 1, span * n);
                continue;
            }}
            if (pattern) {{
                int q = q0;
                for (int r = b; r < f; r++) {{
                    c[q] = r + d;
                    q += k;
                }}
            }}
            for (int l = 0; l < lanes && c0 + l < span; l++) {{
                int r = b + ((c0 + l - b - d) % span + span) % span;
                int q = q0 + (r - b) * k;
                {name}__hblane(v, t, q, span * k, l * n + r, l * n + f, span);
            }}
        }}
    }}
}}
[checkpoint]
static void {name}__hbrun(inout int[] c, inout double[] v, double[] t, int q, int k, int col, int end, int i, int step, int wrap) {{
    for (; col < end; col++) {{
        c[q] = col;
        v[q] = t[i];
        q += k;
        i += step;
        i = i >= wrap ? i - wrap : i;
    }}
}}
[checkpoint]
static void {name}__hblane(inout double[] v, double[] t, int q, int step, int i, int end, int span) {{
    for (; i < end; i += span) {{
        v[q] = t[i];
        q += step;
    }}
}}
",
        ps.join(", ")
    )
}

/// `NAME__hbeval` and `NAME__hbseed`, when `F`'s one column is a
/// `double` array (`super::direct_column`, as the band pattern needs;
/// `None` otherwise): the band coloring's compressed evaluation without
/// colors, scratch rows or a scatter through them.
///
/// - `NAME__hbeval(NAME__gw's parameters, info, k, vals, cols, rows)`:
///   the colors `c mod k` in runs of 3, 4 or 5 lanes, the fewest runs,
///   then the narrowest (as `NAME__gj__compressed3`, `NAME__gj__compressed`
///   and `NAME__gj__compressed5`), 3 when the tangents' array would
///   exceed [`MAPPED_MAX`]; one scratch array (uninitialised) for the
///   gradient's tangents, the gradient and the seeds, in that order (the
///   seeds apart when that exceeds [`MAPPED_MAX`]; the gradient, which
///   nothing reads, is left unwritten by `dead-outputs`); per run, the seeds, `NAME__gj__columns3`
///   (`NAME__gj__columns`, `NAME__gj__columns5`), then `NAME__hbrows`
///   (`what` 6) writes the lower triangle's rows (the first run) and the
///   values of the run's colors.
/// - `NAME__hbseed(s, n, k, c0)`: the `len(s) / n` lanes of seeds of the
///   run of colors from `c0`: lane `l` is 1 at the columns `c0 + l + j k`
///   and 0 elsewhere: the first run writes every element (one pass, no
///   zeros from the allocator first), the later ones move the ones.
pub(super) fn eval(f: &FuncDecl, name: &str, dual: &[bool]) -> Option<String> {
    use crate::jacobian::sparse::{by_width, CHUNK, HESSIAN_WIDTHS, NARROW};
    let col = super::direct_column(f, dual)?;
    let (mut decls, _) = super::gw_params(f);
    let [vals, cols, rows] = sparse_names(f);
    decls.extend([
        "int[] adc_hb_info".to_string(),
        "int adc_hb_k".into(),
        format!("inout double[] {vals}"),
        format!("inout int[] {cols}"),
        format!("inout int[] {rows}"),
    ]);
    let gj = format!("{name}__gj");
    // The runs with the seeds in `seeds`.
    let runs = |seeds: &str| {
        let mut args = Vec::new();
        for (p, &d) in f.params.iter().zip(dual) {
            if p.mode == Mode::Out && !p.is_array {
                continue;
            }
            args.push(p.name.name.clone());
            if super::is_col(p, d) {
                args.push(seeds.to_string());
            }
        }
        // The tangents first, then the gradient (then the seeds): ranges
        // that meet at `adc_hb_e` and `adc_hb_e + adc_hb_n`, apart by
        // construction, as `dead-outputs` needs to see that the gradient,
        // which nothing reads, need not be written.
        args.push("adc_hb_work[adc_hb_e .. adc_hb_e + adc_hb_n]".into());
        args.push("adc_hb_work[0 .. adc_hb_e]".into());
        let args = args.join(", ");
        let columns: Vec<String> = HESSIAN_WIDTHS
            .iter()
            .map(|&w| {
                let sfx = if w == CHUNK {
                    String::new()
                } else {
                    w.to_string()
                };
                format!("if (adc_hb_w == {w}) {{ {gj}__columns{sfx}({args}); }}")
            })
            .collect();
        format!(
            "for (int adc_hb_c0 = 0; adc_hb_c0 < adc_hb_k || adc_hb_c0 == 0; adc_hb_c0 += adc_hb_w) {{
            {name}__hbseed({seeds}, adc_hb_n, adc_hb_k, adc_hb_c0);
            {}
            {name}__hbrows(adc_hb_info, adc_hb_n, 6, {rows}, {cols}, adc_hb_work[0 .. adc_hb_e], adc_hb_k, adc_hb_c0, {vals});
        }}",
            columns.join("\n            else ")
        )
    };
    let width = by_width("adc_hb_k", |w| format!("adc_hb_w = {w};"));
    Some(
        format!(
            "static void {name}__hbeval({}) {{
    int adc_hb_n = len({col});
    int adc_hb_w = 0;
    {width}
    // Arrays of at most {MAPPED_MAX} doubles (32 MiB): glibc's malloc maps
    // larger ones afresh at every call (their pages faulted in again).
    if ((adc_hb_w + 1) * adc_hb_n > {MAPPED_MAX}) {{ adc_hb_w = {NARROW}; }}
    int adc_hb_e = adc_hb_w * adc_hb_n;
    if (2 * adc_hb_e + adc_hb_n <= {MAPPED_MAX}) {{
        double adc_hb_work[__adc_uninit(2 * adc_hb_e + adc_hb_n)];
        {}
    }} else {{
        double adc_hb_work[__adc_uninit(adc_hb_e + adc_hb_n)];
        double adc_hb_seed[__adc_uninit(adc_hb_e)];
        {}
    }}
}}
",
            decls.join(", "),
            runs("adc_hb_work[adc_hb_e + adc_hb_n .. 2 * adc_hb_e + adc_hb_n]"),
            runs("adc_hb_seed"),
        ) + &seed_source(name),
    )
}

/// The doubles in the largest array glibc's malloc reuses between calls
/// (`DEFAULT_MMAP_THRESHOLD_MAX`, 32 MiB; larger ones are mapped afresh).
const MAPPED_MAX: u32 = 4 << 20;

/// `NAME__hbseed` (of [`eval`]).
fn seed_source(name: &str) -> String {
    format!(
        "[checkpoint]
static void {name}__hbseed(inout double[] s, int n, int k, int c0) {{
    int lanes = n > 0 ? len(s) / n : 0;
    for (int l = 0; l < lanes; l++) {{
        int at = l * n;
        if (c0 == 0) {{
            // Every element, in blocks (the array comes uninitialised):
            // zeros, then the block's ones while it is in the cache.
            for (int b = at; b < at + n; b += 512) {{
                int e = at + n - b < 512 ? at + n : b + 512;
                for (int i = b; i < e; i++) {{ s[i] = 0.0; }}
                if (l < k) {{
                    for (int i = b + ((l - (b - at)) % k + k) % k; i < e; i += k) {{ s[i] = 1.0; }}
                }}
            }}
        }} else {{
            for (int i = c0 - lanes + l; i < n; i += k) {{ s[at + i] = 0.0; }}
            if (c0 + l < k) {{
                for (int i = c0 + l; i < n; i += k) {{ s[at + i] = 1.0; }}
            }}
        }}
    }}
}}
"
    )
}
