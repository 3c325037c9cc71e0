//! `adc tape`: what each reverse derivative stores, by source location and
//! loop, as text and `--json`.

use crate::common::{adc, scratch, stderr, stdout};

#[test]
fn tape_reports_each_reverse_derivative_as_json() {
    let p = scratch(
        "tape.ad",
        "[autodiff_reverse(df, Active, Const, Active)]
double f(double x, int n) {
    double s = x;
    for (int i = 0; i < n; i++) s = sin(s) * x;
    return s;
}",
    );
    let o = adc(&["tape", p.to_str().unwrap(), "--json"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).expect("one JSON object");
    let df = &v["derivatives"][0];
    assert_eq!(df["function"], "df");
    // The loop on line 4 stores values every iteration.
    let looped: Vec<&serde_json::Value> = df["entries"]
        .as_array()
        .expect("entries")
        .iter()
        .filter(|e| e["loops"] == serde_json::json!([4]))
        .collect();
    assert!(!looped.is_empty(), "{v}");
    assert_eq!(df["loops"][0]["line"], 4);
    let sum: u64 = looped
        .iter()
        .map(|e| e["bytes"].as_u64().expect("bytes"))
        .sum();
    assert_eq!(df["loops"][0]["bytes_per_iteration"].as_u64(), Some(sum));
    let text = adc(&["tape", p.to_str().unwrap()]);
    assert_eq!(text.status.code(), Some(0));
    assert!(stdout(&text).starts_with("df: "), "{}", stdout(&text));
}

/// Every entry has a `file:line:col`, also the pushes passes make without
/// a source location (edge indices of a checkpointed loop's segments under
/// reverse over reverse were `file:?`; an independent tester's finding).
#[test]
fn tape_entries_all_have_locations() {
    let p = scratch(
        "tape_rr.ad",
        "[autodiff_reverse(dg, Duplicated, Active, ActiveOnly)]
double g(double[] x, double p) {
    int n = len(x);
    double t[n];
    for (int i = 0; i < n; i++) t[i] = x[i] * p;
    double s = 0.0;
    [checkpoint(2)]
    for (int k = 0; k < 5; k++) {
        for (int i = 1; i < n; i++) {
            if (t[i - 1] > 0.0) t[i] = t[i] * 0.9 + 0.1 * sin(t[i - 1]);
            else t[i] = t[i] * t[i - 1] * 0.5;
        }
        s = s * 0.5 + t[n - 1] * t[0];
    }
    return s + max(t[0], t[1]);
}
[autodiff_reverse(dh, Duplicated, Active)]
double h(double[] x) { double gr[len(x)]; return dg(x, gr, 0.7, 1.0) + gr[0]; }",
    );
    let o = adc(&["tape", p.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let out = stdout(&o);
    assert!(out.contains("tape_rr.ad:"), "{out}");
    assert!(!out.contains(":?"), "{out}");
}

/// A vector reverse derivative (`width = W`) runs the primal once for its
/// W lanes, so it tapes what the width-1 derivative tapes: the same
/// entries and the same bytes per iteration, not W times as many.
#[test]
fn tape_of_a_vector_reverse_derivative_is_the_width_1_tape() {
    let p = scratch(
        "tape_width.ad",
        "[autodiff_reverse(d1, Duplicated, Const, Active)]
[autodiff_reverse(d4, Duplicated, Const, Active, width = 4)]
double f(double[] x, double k) {
    double s = 0.0;
    for (int i = 0; i < len(x); i++) s = s + sin(x[i] * k) * s + x[i];
    return s;
}",
    );
    let o = adc(&["tape", p.to_str().unwrap(), "--json"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).expect("one JSON object");
    let derivatives = v["derivatives"].as_array().expect("derivatives");
    let of = |name: &str| {
        derivatives
            .iter()
            .find(|d| d["function"] == name)
            .unwrap_or_else(|| panic!("no `{name}` in {v}"))
    };
    let (d1, d4) = (of("d1"), of("d4"));
    assert_eq!(d4["loops"][0]["line"], 5, "{v}");
    let per_iteration = |d: &serde_json::Value| d["loops"][0]["bytes_per_iteration"].as_u64();
    assert!(per_iteration(d1).is_some_and(|b| b > 0), "{v}");
    assert_eq!(per_iteration(d4), per_iteration(d1), "{v}");
    assert_eq!(
        d4["entries"].as_array().map(Vec::len),
        d1["entries"].as_array().map(Vec::len),
        "{v}"
    );
}
