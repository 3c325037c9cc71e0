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
//! The check of the plan (`NAME__esame`), its making (`NAME__eplan`) and
//! the gather of a row's entries (`NAME__egather`) are `[checkpoint]` helpers, out of line: each small
//! loop gets the registers to itself instead of sharing them with the
//! element loop's many arrays (Cranelift kept their counters in stack
//! slots there).

use std::collections::BTreeSet;
use std::fmt::Write;

/// The reads one run of the sweep may record (`ad::masks::MAX_READS`).
const MAX_READS: usize = 52;

/// The plan's arrays, before an element loop of `w` sites; `bases` are
/// the first columns of the input arrays (`Dual`, not `out`), in order,
/// which the sweep reads after its reads (`ad::masks`: it computes their
/// seeds instead of loading them).
pub(super) fn declare(s: &mut String, w: usize, bases: &[String]) {
    let r = MAX_READS;
    let _ = writeln!(s, "            int adc_e_m[{}];", r + 4 + bases.len());
    for (j, at) in bases.iter().enumerate() {
        let _ = writeln!(s, "            adc_e_m[{}] = {at};", r + 4 + j);
    }
    // The plan's masks, and its number of reads last (-1: no plan yet).
    let _ = writeln!(s, "            int adc_e_pm[{}];", w + 1);
    let _ = writeln!(s, "            adc_e_pm[{w}] = -1;");
    let _ = writeln!(s, "            int adc_e_mk[{w}];");
    let _ = writeln!(s, "            int adc_e_perm[{r}];");
    let _ = writeln!(s, "            int adc_e_pk[{r}];");
    // Site `j`'s reads: `adc_e_pl[adc_e_pl[j] .. adc_e_pl[j + 1]]`.
    let _ = writeln!(s, "            int adc_e_pl[{}];", w + 1 + w * r);
}

/// Runs the sweep `call` and, when it recorded few enough reads, sets
/// `adc_e_fast` and checks or makes the plan; `masks[j]` is site `j`'s
/// bit set (-1 for a site whose row is out of range).
pub(super) fn sweep(s: &mut String, name: &str, call: &str, masks: &[String]) {
    let r = MAX_READS;
    s.push_str("                adc_e_m[0] = 0;\n");
    s.push_str("                adc_e_m[2] = 1;\n");
    let _ = writeln!(s, "                {call};");
    let _ = writeln!(s, "                if (adc_e_m[0] <= {r}) {{");
    s.push_str("                    adc_e_fast = true;\n");
    for (j, m) in masks.iter().enumerate() {
        let _ = writeln!(s, "                    adc_e_mk[{j}] = {m};");
    }
    let _ = writeln!(s, "                    if (!{name}__esame(adc_e_m, adc_e_mk, adc_e_pm, adc_e_pk)) {{ {name}__eplan(adc_e_m, adc_e_mk, adc_e_pm, adc_e_perm, adc_e_pk, adc_e_pl); }}");
    s.push_str("                }\n");
}

/// Site `j`'s entries from the plan, when `adc_e_fast` (the first arm of
/// a chain of `if`s, `w` sites): `shadows` are this loop's shadows of the
/// input arrays, in order (their first columns are in `adc_e_m`).
pub(super) fn columns(s: &mut String, name: &str, j: usize, w: usize, shadows: &[String]) {
    let mut args = String::new();
    for d in shadows {
        let _ = write!(args, "{d}, ");
    }
    let _ = writeln!(
        s,
        "                    if (adc_e_fast) {{ adc_e_q = {name}__egather{n}({j}, {w}, adc_e_m, adc_e_pl, {args}vals, cols, adc_e_q); }}",
        n = shadows.len()
    );
}

/// `NAME__esame`, which checks the plan against this iteration's reads,
/// `NAME__eplan`, which makes it again when it does not hold, and
/// `NAME__egatherN` for each `N` of `inputs`, which moves a row's entries
/// from the shadows of `N` input arrays (in order: their columns increase
/// with them; those an element loop's body reads) into
/// `vals` and `cols` (entries past the shorter of the two are counted, not
/// written: a row that fits in both takes loops without that test) and
/// zeroes them there.
pub(super) fn helpers(name: &str, inputs: &BTreeSet<usize>) -> String {
    let r = MAX_READS;
    let mut s = format!(
        "[checkpoint]
static bool {name}__esame(int[] m, int[] mk, int[] pm, int[] pk) {{
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
    return true;
}}
[checkpoint]
static void {name}__eplan(int[] m, int[] mk, inout int[] pm, inout int[] perm, inout int[] pk, inout int[] pl) {{
    int w = len(mk);
    int n = m[0];
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
    int pw[{r}];
    pw[0] = 1;
    for (int i = 1; i < {r}; i++) {{ pw[i] = 2 * pw[i - 1]; }}
    int at = w + 1;
    for (int j = 0; j < w; j++) {{
        pm[j] = mk[j];
        pl[j] = at;
        if (mk[j] > 0) {{
            int last = -1;
            for (int i = 0; i < n; i++) {{
                int k = perm[i];
                if ((mk[j] / pw[k]) % 2 == 1 && m[3 + k] != last) {{
                    pl[at] = 3 + k;
                    at++;
                    last = m[3 + k];
                }}
            }}
        }}
    }}
    pl[w] = at;
}}
"
    );
    for &inputs in inputs {
        s += &gather(name, inputs);
    }
    s
}

/// `NAME__egatherN`, `N` being `inputs` (see [`helpers`]).
fn gather(name: &str, inputs: usize) -> String {
    if inputs == 0 {
        // A body that reads no input: no reads, rows of no entries.
        return format!(
            "[checkpoint]
static int {name}__egather0(int _j, int _w, int[] _m, int[] _pl, out double[] _vals, out int[] _cols, int q) {{
    return q;
}}
"
        );
    }
    let mut s = format!(
        "[checkpoint]
static int {name}__egather{inputs}(int j, int w, int[] m, int[] pl, "
    );
    for i in 0..inputs {
        let _ = write!(s, "inout double[] d{i}, ");
    }
    s += "out double[] vals, out int[] cols, int q) {
    int room = len(vals) < len(cols) ? len(vals) : len(cols);
    int t = pl[j];
    int e = pl[j + 1];
    bool fits = q + (e - t) <= room;
";
    for i in 0..inputs {
        // Every recorded column is some input's (the sweep records reads
        // of inputs): the last input's loop, when the row fits, needs no
        // test of its end.
        let stop = if i + 1 < inputs {
            format!("if (c >= hi{i}) {{ break; }} ")
        } else {
            String::new()
        };
        let _ = write!(
            s,
            "    int n{i} = len(d{i}) / w;
    int at{i} = m[{b}];
    int o{i} = j * n{i} - at{i};
    int hi{i} = at{i} + n{i};
    if (fits) {{
        while (t < e) {{
            int c = m[pl[t]];
            {stop}vals[q] = d{i}[o{i} + c];
            cols[q] = c;
            d{i}[o{i} + c] = 0.0;
            q++;
            t++;
        }}
    }}
    while (t < e) {{
        int c = m[pl[t]];
        if (c >= hi{i}) {{ break; }}
        if (q < room) {{ vals[q] = d{i}[o{i} + c]; cols[q] = c; }} else if (q < len(cols)) {{ cols[q] = c; }}
        d{i}[o{i} + c] = 0.0;
        q++;
        t++;
    }}
",
            b = MAX_READS + 4 + i
        );
    }
    s += "    return q;
}
";
    s
}
