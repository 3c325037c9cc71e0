//! The rows' columns of one element from the sweep of bit sets
//! (`NAME__eKm`, `ad::masks`), the code `elements_source` places in each
//! element loop. Locals start with `adc_e_`.
//!
//! Per iteration the sweep records the column of each read of an input
//! (`adc_e_m[3 + k]` for read `k`, `adc_e_m[0]` reads) and leaves in each
//! row's tangent the bit set of the reads it depends on. A *plan* turns
//! these into each row's columns, increasing: the reads ordered by their
//! columns (`adc_e_perm`, with `adc_e_peq[i]` when read `perm[i]` has the
//! column of `perm[i - 1]`), and for each site the reads whose columns
//! make its row (`adc_e_pl[adc_e_ps[j] .. adc_e_ps[j + 1]]`, one read per
//! column). The plan of the last iteration is used again when its number
//! of reads and its rows' bit sets are this iteration's and this
//! iteration's columns are in the same order, with the same ties: then it
//! names this iteration's columns, in increasing order. Otherwise it is
//! made again (a sort of the reads). An element of the same shape as the
//! last one (GradBench's bundle adjustment: every observation) costs one
//! comparison per read. More than `ad::masks::MAX_READS` reads take the
//! index-set sweep instead (`adc_e_fast` false).

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
    let _ = writeln!(s, "            int adc_e_pn = -1;");
    let _ = writeln!(s, "            int adc_e_pm[{w}];");
    let _ = writeln!(s, "            int adc_e_perm[{r}];");
    let _ = writeln!(s, "            int adc_e_peq[{r}];");
    let _ = writeln!(s, "            int adc_e_ps[{}];", w + 1);
    let _ = writeln!(s, "            int adc_e_pl[{}];", w * r);
    let _ = writeln!(s, "            int adc_e_pw[{r}];");
    let _ = writeln!(s, "            adc_e_pw[0] = 1;");
    let _ = writeln!(s, "            for (int adc_e_i = 1; adc_e_i < {r}; adc_e_i++) {{ adc_e_pw[adc_e_i] = 2 * adc_e_pw[adc_e_i - 1]; }}");
}

/// Runs the sweep `call` and, when it recorded few enough reads, sets
/// `adc_e_fast` and checks or makes the plan; `masks[j]` is site `j`'s
/// bit set (-1 for a site whose row is out of range).
pub(super) fn sweep(s: &mut String, call: &str, masks: &[String]) {
    let r = MAX_READS;
    s.push_str("                adc_e_m[0] = 0;\n");
    s.push_str("                adc_e_m[2] = 1;\n");
    let _ = writeln!(s, "                {call};");
    let _ = writeln!(s, "                if (adc_e_m[0] <= {r}) {{");
    s.push_str("                    adc_e_fast = true;\n");
    s.push_str("                    int adc_e_n = adc_e_m[0];\n");
    let mut same = "adc_e_pn == adc_e_n".to_string();
    for (j, m) in masks.iter().enumerate() {
        let _ = writeln!(s, "                    int adc_e_mk{j} = {m};");
        let _ = write!(same, " && adc_e_pm[{j}] == adc_e_mk{j}");
    }
    let _ = writeln!(s, "                    bool adc_e_same = {same};");
    s.push_str(
        "                    for (int adc_e_i = 1; adc_e_same && adc_e_i < adc_e_n; adc_e_i++) {
                        int adc_e_x = adc_e_m[3 + adc_e_perm[adc_e_i - 1]];
                        int adc_e_y = adc_e_m[3 + adc_e_perm[adc_e_i]];
                        if (adc_e_peq[adc_e_i] == 1 ? adc_e_x != adc_e_y : adc_e_x >= adc_e_y) { adc_e_same = false; }
                    }
                    if (!adc_e_same) {
                        adc_e_pn = adc_e_n;
                        for (int adc_e_i = 0; adc_e_i < adc_e_n; adc_e_i++) {
                            int adc_e_c = adc_e_m[3 + adc_e_i];
                            int adc_e_t = adc_e_i;
                            while (adc_e_t > 0 && adc_e_m[3 + adc_e_perm[adc_e_t - 1]] > adc_e_c) {
                                adc_e_perm[adc_e_t] = adc_e_perm[adc_e_t - 1];
                                adc_e_t--;
                            }
                            adc_e_perm[adc_e_t] = adc_e_i;
                        }
                        for (int adc_e_i = 0; adc_e_i < adc_e_n; adc_e_i++) {
                            adc_e_peq[adc_e_i] = 0;
                            if (adc_e_i > 0 && adc_e_m[3 + adc_e_perm[adc_e_i]] == adc_e_m[3 + adc_e_perm[adc_e_i - 1]]) { adc_e_peq[adc_e_i] = 1; }
                        }
                        int adc_e_at = 0;
",
    );
    for j in 0..masks.len() {
        let _ = writeln!(s, "                        adc_e_pm[{j}] = adc_e_mk{j};");
        let _ = writeln!(s, "                        adc_e_ps[{j}] = adc_e_at;");
        let _ = writeln!(s, "                        if (adc_e_mk{j} > 0) {{");
        s.push_str("                            int adc_e_last = -1;\n");
        s.push_str(
            "                            for (int adc_e_i = 0; adc_e_i < adc_e_n; adc_e_i++) {\n",
        );
        s.push_str("                                int adc_e_k = adc_e_perm[adc_e_i];\n");
        let _ = writeln!(s, "                                if ((adc_e_mk{j} / adc_e_pw[adc_e_k]) % 2 == 1 && adc_e_m[3 + adc_e_k] != adc_e_last) {{");
        s.push_str("                                    adc_e_pl[adc_e_at] = adc_e_k;\n");
        s.push_str("                                    adc_e_at++;\n");
        s.push_str("                                    adc_e_last = adc_e_m[3 + adc_e_k];\n");
        s.push_str("                                }\n");
        s.push_str("                            }\n");
        s.push_str("                        }\n");
    }
    let _ = writeln!(
        s,
        "                        adc_e_ps[{}] = adc_e_at;",
        masks.len()
    );
    s.push_str("                    }\n");
    s.push_str("                }\n");
}

/// Site `j`'s columns into `cols` from the plan, when `adc_e_fast` (the
/// first arm of a chain of `if`s).
pub(super) fn columns(s: &mut String, j: usize) {
    let _ = writeln!(
        s,
        "                    if (adc_e_fast) {{ for (int adc_e_t = adc_e_ps[{j}]; adc_e_t < adc_e_ps[{}]; adc_e_t++) {{ if (adc_e_q < len(cols)) {{ cols[adc_e_q] = adc_e_m[3 + adc_e_pl[adc_e_t]]; }} adc_e_q++; }} }}",
        j + 1
    );
}
