//! The scratch analysis on small functions: a temporary written whole
//! before it is read is scratch; written partly, under a branch, after a
//! read, beyond its reads, or passed on, it is not.

use super::scratch_params;
use std::collections::BTreeMap;

/// `@f(n: i64, x: arr<f64>, inout t: arr<f64>) -> f64`: `WRITE` then a loop
/// summing `t[i + READ]` for `i` in `[0, n)`.
fn shape(write: &str, read: &str) -> String {
    format!(
        "func @f(n: i64, x: arr<f64>, inout t: arr<f64>) -> f64 {{
block0(v0: i64, v1: arr<f64>, v2: arr<f64>):
    v3: i64 = const 0
    v4: i64 = const 1
    v5: f64 = const 0.0
    v20: i64 = len v1
{write}
block3():
    jump block4(v3, v5)
block4(v12: i64, v13: f64):
    v14: bool = cmp lt v12, v0
    br v14, block5(), block6()
block5():
    v30: i64 = const {read}
    v31: i64 = add v12, v30
    v15: f64 = load v2, v31
    v16: f64 = add v13, v15
    v17: i64 = add v12, v4
    jump block4(v17, v16)
block6():
    return v13
}}
"
    )
}

/// `t[0]` stored, then a loop storing `t[i]` for `i` in `[START, BOUND)`.
fn point_and_loop(start: &str, bound: &str) -> String {
    format!(
        "    v6: f64 = load v1, v3
    store v2, v3, v6
    jump block1(v{start})
block1(v7: i64):
    v8: bool = cmp lt v7, v{bound}
    br v8, block2(), block3()
block2():
    v9: f64 = load v1, v7
    store v2, v7, v9
    v10: i64 = add v7, v4
    jump block1(v10)"
    )
}

fn scratch(text: &str, lens: &[(usize, usize)]) -> Vec<bool> {
    let m = adc_ir::parse_module(text).unwrap_or_else(|e| panic!("{e}\n{text}"));
    let lens: BTreeMap<usize, usize> = lens.iter().copied().collect();
    scratch_params(&m.funcs[0], &lens)
}

#[test]
fn written_whole_before_read() {
    // t[0], then t[1..n): the loop reads t[0..n).
    assert_eq!(
        scratch(&shape(&point_and_loop("4", "0"), "0"), &[]),
        [false, false, true]
    );
    // Reading t[i - 1] reads t[-1..n-1): t[-1] is not written.
    assert_eq!(
        scratch(&shape(&point_and_loop("4", "0"), "-1"), &[]),
        [false, false, false]
    );
}

#[test]
fn written_partly() {
    // t[1..n) only: t[0] is read unwritten.
    let write = point_and_loop("4", "0").replace("    store v2, v3, v6\n", "");
    assert_eq!(scratch(&shape(&write, "0"), &[]), [false, false, false]);
    // t[0..n) read as t[1..n+1): t[n] is not written.
    assert_eq!(
        scratch(&shape(&point_and_loop("4", "0"), "1"), &[]),
        [false, false, false]
    );
}

#[test]
fn bounds_by_length() {
    // Written up to len(x), read up to n: the same only when the caller
    // passes len(x) for n.
    let write = point_and_loop("4", "20");
    assert_eq!(scratch(&shape(&write, "0"), &[]), [false, false, false]);
    assert_eq!(
        scratch(&shape(&write, "0"), &[(0, 1)]),
        [false, false, true]
    );
}

#[test]
fn written_under_a_branch() {
    // t[0] stored only when 0 < n.
    let write = point_and_loop("4", "0").replace(
        "    store v2, v3, v6\n    jump block1(v4)",
        "    v40: bool = cmp lt v3, v0
    br v40, block7(), block8()
block7():
    store v2, v3, v6
    jump block8()
block8():
    jump block1(v4)",
    );
    assert!(write.contains("block8():\n    jump block1(v4)"));
    assert_eq!(scratch(&shape(&write, "0"), &[]), [false, false, false]);
    // A store in the loop under a branch does not cover the loop's range.
    let write = "    v6: f64 = load v1, v3
    store v2, v3, v6
    jump block1(v4)
block1(v7: i64):
    v8: bool = cmp lt v7, v0
    br v8, block2(), block3()
block2():
    v9: f64 = load v1, v7
    v41: f64 = const 0.5
    v40: bool = cmp lt v9, v41
    br v40, block7(), block8()
block7():
    store v2, v7, v9
    jump block8()
block8():
    v10: i64 = add v7, v4
    jump block1(v10)";
    assert_eq!(scratch(&shape(write, "0"), &[]), [false, false, false]);
}

#[test]
fn read_before_written() {
    let write = format!("    v50: f64 = load v2, v4\n{}", point_and_loop("4", "0"));
    assert_eq!(scratch(&shape(&write, "0"), &[]), [false, false, false]);
}

#[test]
fn passed_on() {
    let text = "static @g(inout a: arr<f64>) {
block0(v0: arr<f64>):
    return
}

func @f(inout t: arr<f64>) {
block0(v0: arr<f64>):
    v1: i64 = const 0
    v2: f64 = const 1.0
    store v0, v1, v2
    call @g(v0)
    return
}
";
    let m = adc_ir::parse_module(text).expect("parses");
    let f = m.find("f").expect("f");
    assert_eq!(scratch_params(m.func(f), &BTreeMap::new()), [false]);
}
