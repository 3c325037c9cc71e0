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
//! - `NAME__hbrows(info, n, what, p, c)`: with `what` 0, the lower
//!   triangle's entries; 3, both triangles'; 1, the same, and the rows of
//!   both triangles (each row's columns increasing, no duplicate) into
//!   `p`/`c`; 2, the lower triangle's rows into `p`/`c` (`NAME`'s `rows`
//!   and `cols`, long enough), returning the widest span of a row's
//!   columns in both triangles (1 for none: `NAME__gj__band`'s `K`). The
//!   rows split at the ends of each pair's range into segments, each with
//!   one sorted list of column offsets, written row by row.

use crate::ast::*;
use crate::jacobian::layout::param_decls;
use adc_ir::ad::{BAND_INFO_LEN, BAND_STUB_SUFFIX};

/// The suffixes of the functions generated here (after `NAME`).
pub(super) const GENERATED: [&str; 3] = [BAND_STUB_SUFFIX, "__hbsize", "__hbrows"];

/// The statements of `NAME_nnz` (`fast` `None`) and `NAME`: the band
/// pattern's table, then
///
/// - for `NAME_nnz`, `_adc_hs_lower` its lower entries and `body`;
/// - for `NAME`, the lower triangle straight into `rows`/`cols` (`vals`,
///   `cols` or `rows` too short: `hessian needs N entries`) and
///   `adc_hb_span` the widest span of a row's columns; `fast` when the
///   band coloring (`c mod adc_hb_span`) takes one run of `chunk` colors
///   (no star coloring then, no full pattern), else both triangles' rows
///   into `adc_hs_p`/`adc_hs_c` for the colorings and `body`;
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
        int _adc_hs_lower = {name}__hbrows(adc_hb_info, adc_hs_n, 0, adc_hs_p, adc_hs_c);
{body}"
        ),
        Some((fast, chunk)) => {
            let len = crate::lower::SPARSE_HESSIAN_LEN;
            format!(
                "        int adc_hb_low = {name}__hbrows(adc_hb_info, adc_hs_n, 0, rows, cols);
        {len}(adc_hb_low, vals);
        {len}(adc_hb_low, cols);
        {len}(adc_hs_n + 1, rows);
        int adc_hb_span = {name}__hbrows(adc_hb_info, adc_hs_n, 2, rows, cols);
        if (adc_hb_span <= {chunk}) {{
{fast}        }} else {{
            int adc_hs_p[__adc_uninit(adc_hs_n + 1)];
            int adc_hs_c[__adc_uninit(adc_hb_m)];
            {name}__hbrows(adc_hb_info, adc_hs_n, 1, adc_hs_p, adc_hs_c);
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
        "static void {name}{BAND_STUB_SUFFIX}({}) {{ }}
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
static int {name}__hbrows(int[] info, int n, int what, inout int[] p, inout int[] c) {{
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
    int full = 0;
    int span = 1;
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
            full += (e - a) * m;
            if (m > 0 && ds[m - 1] - ds[0] + 1 > span) {{ span = ds[m - 1] - ds[0] + 1; }}
            // The lower triangle's offsets come first (`d <= 0`, increasing).
            int k = what == 2 ? low : m;
            if (what == 1 || what == 2) {{
                for (int r = a; r < e; r++) {{
                    p[r] = w;
                    for (int j = 0; j < k; j++) {{ c[w + j] = r + ds[j]; }}
                    w += k;
                }}
            }}
        }}
    }}
    if (what == 1 || what == 2) {{ p[n] = w; }}
    if (what == 0) {{ return lower; }}
    return what == 2 ? span : full;
}}
",
        ps.join(", ")
    )
}
