//! The rows' columns of one element from the sweep of bit sets
//! (`NAME__eKm`, `ad::masks`), the code `elements_source` places in each
//! element loop, and its two helpers. Locals start with `adc_e_`.
//!
//! Per iteration the sweep records the column of each read of an input
//! (`adc_e_m[3 + k]` for read `k`, `adc_e_m[0]` reads) and leaves in each
//! row's tangent the bit set of the reads it depends on. A *plan* turns
//! these into each row's columns, increasing: the reads ordered by their
//! columns (`adc_e_pk[i]` is `3 + k` for the `i`th read `k`, where its
//! column is in `adc_e_m`, negated when it ties with the read before), and
//! for each site the reads whose columns make its row
//! (`adc_e_pl[adc_e_pl[j] .. adc_e_pl[j + 1]]`, one `3 + k` per column).
//! The plan of the last iteration is used again when its number
//! of reads and its rows' bit sets are this iteration's and this
//! iteration's columns are in the same order, with the same ties: then it
//! names this iteration's columns, in increasing order. Otherwise it is
//! made again (a sort of the reads). An element of the same shape as the
//! last one (GradBench's bundle adjustment: every observation) costs one
//! comparison per read (the sign of `adc_e_pk[i]` says which: one array
//! read per read). More than `ad::masks::MAX_READS` reads take the
//! index-set sweep instead (`adc_e_fast` false).
//!
//! The shadows of an element loop's input arrays are views of one array
//! (`adc_e_dd`: input `i`'s lanes from `adc_e_ib[i] + at_i`, `at_i` its
//! first column, lane `j` from there `j * adc_e_ib[N + i]` on), so a
//! column `c` of lane `j` is `adc_e_dd[c + offset]` whatever its input:
//! the plan stores each entry's offset (`adc_e_po`, beside its read in
//! `adc_e_pl`), and the check also compares where each input's columns
//! start in the sorted reads (`adc_e_pb`), so that each read's input, and
//! so its offset, is the plan's. The gather of an element's rows is one
//! counted loop per row over one array.
//!
//! The check of the plan (`NAME__esame`), its making (`NAME__eplan`) and
//! the gather of an element's rows (`NAME__egather`) are `[checkpoint]` helpers, out of line: each small
//! loop gets the registers to itself instead of sharing them with the
//! element loop's many arrays (Cranelift kept their counters in stack
//! slots there).

use std::fmt::Write;

/// The reads one run of the sweep may record (`ad::masks::MAX_READS`).
const MAX_READS: usize = 52;

/// The plan's arrays, before an element loop of `w` sites; `bases` are
/// the first columns of the input arrays (`Dual`, not `out`), in order,
/// which the sweep reads after its reads (`ad::masks`: it computes their
/// seeds instead of loading them); `at[i]` is where input `i`'s shadow
/// starts in `adc_e_dd` and `lens[i]` its length.
pub(super) fn declare(s: &mut String, w: usize, bases: &[String], at: &[String], lens: &[String]) {
    let r = MAX_READS;
    let n = bases.len();
    let _ = writeln!(s, "            int adc_e_m[{}];", r + 4 + n);
    for (j, at) in bases.iter().enumerate() {
        let _ = writeln!(s, "            adc_e_m[{}] = {at};", r + 4 + j);
    }
    // The plan's masks, and its number of reads last (-1: no plan yet).
    let _ = writeln!(s, "            int adc_e_pm[{}];", w + 1);
    let _ = writeln!(s, "            adc_e_pm[{w}] = -1;");
    let _ = writeln!(s, "            int adc_e_mk[{w}];");
    let _ = writeln!(s, "            int adc_e_perm[{r}];");
    let _ = writeln!(s, "            int adc_e_pk[{r}];");
    // Site `j`'s reads: `adc_e_pl[adc_e_pl[j] .. adc_e_pl[j + 1]]`, their
    // offsets in `adc_e_dd` at the same places of `adc_e_po`.
    let _ = writeln!(s, "            int adc_e_pl[{}];", w + 1 + w * r);
    let _ = writeln!(s, "            int adc_e_po[{}];", w + 1 + w * r);
    // Where each input's columns start in the sorted reads, but the first.
    let _ = writeln!(s, "            int adc_e_pb[{}];", n.max(1));
    let _ = writeln!(s, "            int adc_e_ib[{}];", (2 * n).max(1));
    for (i, ((b, a), l)) in bases.iter().zip(at).zip(lens).enumerate() {
        let _ = writeln!(s, "            adc_e_ib[{i}] = {a} - ({b});");
        let _ = writeln!(s, "            adc_e_ib[{}] = {l};", n + i);
    }
    // The sites' rows (-1: out of range), and the next row of `rows` last.
    let _ = writeln!(s, "            int adc_e_g[{}];", w + 1);
}

/// Runs the sweep `call` and, when it recorded few enough reads, sets
/// `adc_e_fast` and checks or makes the plan; `masks[j]` is site `j`'s
/// bit set (-1 for a site whose row is out of range).
pub(super) fn sweep(s: &mut String, name: &str, call: &str, masks: &[String]) {
    let r = MAX_READS;
    // (The sweep starts its count, `adc_e_m[0]`, and next bit itself.)
    let _ = writeln!(s, "                {call};");
    let _ = writeln!(s, "                if (adc_e_m[0] <= {r}) {{");
    s.push_str("                    adc_e_fast = true;\n");
    for (j, m) in masks.iter().enumerate() {
        let _ = writeln!(s, "                    adc_e_mk[{j}] = {m};");
    }
    let _ = writeln!(s, "                    if (!{name}__esame(adc_e_m, adc_e_mk, adc_e_pm, adc_e_pk, adc_e_pb)) {{ {name}__eplan(adc_e_m, adc_e_mk, adc_e_pm, adc_e_perm, adc_e_pk, adc_e_pl, adc_e_po, adc_e_pb, adc_e_ib); }}");
    s.push_str("                }\n");
}

/// The element's rows from the plan, when `adc_e_fast`: `adc_e_g` holds
/// the sites' rows; `NAME__egather` fills `rows` up to each and moves its
/// entries from `adc_e_dd` to `vals` and `cols`.
pub(super) fn gather_call(s: &mut String, name: &str, w: usize) {
    let _ = writeln!(s, "                    adc_e_g[{w}] = adc_e_next;");
    let _ = writeln!(s, "                    adc_e_q = {name}__egather(adc_e_m, adc_e_pl, adc_e_po, adc_e_g, adc_e_dd, vals, cols, rows, adc_e_q);");
    let _ = writeln!(s, "                    adc_e_next = adc_e_g[{w}];");
}

/// `NAME__esame`, which checks the plan against this iteration's reads,
/// `NAME__eplan`, which makes it again when it does not hold, and
/// `NAME__egather`, which moves an element's rows from the shadows of
/// its input arrays into `vals` and `cols` (entries past the shorter of
/// the two are counted, not written: a row that fits in both takes a loop
/// without that test, indexing `pl`, `po`, `vals` and `cols` with its
/// counter alone, whose bounds `indvars` checks once) and zeroes them
/// there. `N`, the inputs, is `len(m) - MAX_READS - 4`.
pub(super) fn helpers(name: &str) -> String {
    let r = MAX_READS;
    format!(
        "[checkpoint]
static bool {name}__esame(int[] m, int[] mk, int[] pm, int[] pk, int[] pb) {{
    int w = len(mk);
    int n = m[0];
    if (pm[w] != n) {{ return false; }}
    for (int j = 0; j < w; j++) {{
        if (pm[j] != mk[j]) {{ return false; }}
    }}
    if (n == 0) {{ return true; }}
    int x = m[pk[0]];
    for (int i = 1; i < n; i++) {{
        int k = pk[i];
        if (k > 0) {{
            int y = m[k];
            if (y <= x) {{ return false; }}
            x = y;
        }} else if (m[-k] != x) {{ return false; }}
    }}
    // Each input's columns start where the plan's did in the sorted reads
    // (an element may read another input in the same order).
    int ni = len(m) - {r} - 4;
    for (int i = 1; i < ni; i++) {{
        int b = pb[i];
        int lo = m[{r} + 4 + i];
        if (b > 0) {{
            int k = pk[b - 1];
            if (m[k > 0 ? k : -k] >= lo) {{ return false; }}
        }}
        if (b < n) {{
            int k = pk[b];
            if (m[k > 0 ? k : -k] < lo) {{ return false; }}
        }}
    }}
    return true;
}}
[checkpoint]
static void {name}__eplan(int[] m, int[] mk, inout int[] pm, inout int[] perm, inout int[] pk, inout int[] pl, inout int[] po, inout int[] pb, int[] ib) {{
    int w = len(mk);
    int n = m[0];
    int ni = len(m) - {r} - 4;
    pm[w] = n;
    for (int i = 0; i < n; i++) {{
        int c = m[3 + i];
        int t = i;
        while (t > 0 && m[3 + perm[t - 1]] > c) {{
            perm[t] = perm[t - 1];
            t--;
        }}
        perm[t] = i;
    }}
    for (int i = 0; i < n; i++) {{
        pk[i] = 3 + perm[i];
        if (i > 0 && m[3 + perm[i]] == m[3 + perm[i - 1]]) {{ pk[i] = -3 - perm[i]; }}
    }}
    // Input `i`'s columns, from `m[{r} + 4 + i]` up, start at `pb[i]`.
    int b = 0;
    for (int i = 1; i < ni; i++) {{
        while (b < n && m[3 + perm[b]] < m[{r} + 4 + i]) {{ b++; }}
        pb[i] = b;
    }}
    int pw[{r}];
    pw[0] = 1;
    for (int i = 1; i < {r}; i++) {{ pw[i] = 2 * pw[i - 1]; }}
    int at = w + 1;
    for (int j = 0; j < w; j++) {{
        pm[j] = mk[j];
        pl[j] = at;
        if (mk[j] > 0) {{
            int last = -1;
            int h = 0;
            for (int i = 0; i < n; i++) {{
                int k = perm[i];
                int c = m[3 + k];
                if ((mk[j] / pw[k]) % 2 == 1 && c != last) {{
                    while (h + 1 < ni && c >= m[{r} + 5 + h]) {{ h++; }}
                    pl[at] = 3 + k;
                    po[at] = ib[h] + j * ib[ni + h];
                    at++;
                    last = c;
                }}
            }}
        }}
    }}
    pl[w] = at;
}}
[checkpoint]
static int {name}__egather(int[] m, int[] pl, int[] po, inout int[] g, inout double[] d, out double[] vals, out int[] cols, out int[] rows, int q) {{
    int w = len(g) - 1;
    int room = len(vals) < len(cols) ? len(vals) : len(cols);
    int next = g[w];
    for (int j = 0; j < w; j++) {{
        int r = g[j];
        if (r >= 0) {{
            while (next <= r) {{ rows[next] = q; next++; }}
            int t = pl[j];
            int e = pl[j + 1];
            int s = q - t;
            if (s + e <= room) {{
                for (int u = t; u < e; u++) {{
                    int c = m[pl[u]];
                    int x = po[u] + c;
                    vals[s + u] = d[x];
                    cols[s + u] = c;
                    d[x] = 0.0;
                }}
            }} else {{
                for (int u = t; u < e; u++) {{
                    int c = m[pl[u]];
                    int x = po[u] + c;
                    int p = s + u;
                    if (p < room) {{ vals[p] = d[x]; cols[p] = c; }} else if (p < len(cols)) {{ cols[p] = c; }}
                    d[x] = 0.0;
                }}
            }}
            q = s + e;
        }}
    }}
    g[w] = next;
    return q;
}}
"
    )
}
