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
//! - `NAME__hbrows(info, n, write, p, c)`: the rows of both triangles
//!   (each row's columns increasing, no duplicate) into `p`/`c` when
//!   `write`; returns the lower triangle's entries. The rows split at the
//!   ends of each pair's range into segments, each with one sorted list
//!   of column offsets, written row by row.

use crate::ast::*;
use crate::jacobian::layout::param_decls;
use adc_ir::ad::{BAND_INFO_LEN, BAND_STUB_SUFFIX};

/// The suffixes of the functions generated here (after `NAME`).
pub(super) const GENERATED: [&str; 3] = [BAND_STUB_SUFFIX, "__hbsize", "__hbrows"];

/// The statements of `NAME` and `NAME_nnz`: the band pattern into
/// `adc_hs_p`/`adc_hs_c` (only counted unless `rows`) with
/// `_adc_hs_lower` lower entries, then `body`; else `fallback`.
pub(super) fn sweep(f: &FuncDecl, name: &str, rows: bool, body: &str, fallback: &str) -> String {
    let args: Vec<&str> = f.params.iter().map(|p| p.name.name.as_str()).collect();
    let sep = if args.is_empty() { "" } else { ", " };
    let args = args.join(", ");
    let (np, write) = if rows {
        ("adc_hs_n + 1", "true")
    } else {
        ("0", "false")
    };
    format!(
        "    int adc_hb_info[{BAND_INFO_LEN}];
    adc_hb_info[0] = -1;
    {name}{BAND_STUB_SUFFIX}({args}{sep}adc_hb_info);
    int adc_hb_m = {name}__hbsize(adc_hb_info, adc_hs_n);
    if (adc_hb_m >= 0) {{
        int adc_hs_p[__adc_uninit({np})];
        int adc_hs_c[__adc_uninit({write} ? adc_hb_m : 0)];
        int _adc_hs_lower = {name}__hbrows(adc_hb_info, adc_hs_n, {write}, adc_hs_p, adc_hs_c);
{body}    }} else {{
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
static int {name}__hbrows(int[] info, int n, bool write, inout int[] p, inout int[] c) {{
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
            if (write) {{
                for (int r = a; r < e; r++) {{
                    p[r] = w;
                    for (int j = 0; j < m; j++) {{ c[w + j] = r + ds[j]; }}
                    w += m;
                }}
            }}
        }}
    }}
    if (write) {{ p[n] = w; }}
    return lower;
}}
",
        ps.join(", ")
    )
}
