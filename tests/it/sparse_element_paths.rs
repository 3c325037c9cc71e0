//! Static element patterns with paths (docs/jacobians.md#static-patterns):
//! branches on integer conditions whose arms read different elements
//! (the boundary rows of a stencil), and `double`s declared before the
//! loop that depend on no input. The pattern has the rows of each path;
//! the gather picks the path per iteration. Every case against the dense
//! Jacobian (`check`: values, every nonzero listed, the count equal to
//! `S_nnz`'s dependency sweep) and the coloring (the same entries, the
//! values to rounding: the reverse run adds `-2 x[i]`'s and `h2 exp`'s
//! adjoints in another order than the forward run).

use crate::sparse_element_static::is_static;
use crate::sparse_elements::{same_as_coloring_within, takes_elements};
use crate::sparse_jacobian::{check, pattern};
use crate::support::{arr, jit};
use adc::{ArgValue, ArrayValue, Constant};

/// The discretised Bratu problem as users write it: the boundary rows
/// read one neighbour, through branches on the loop variable, and the
/// mesh width is a `double` before the loop.
const BRATU: &str = "
[jacobian(J)]
[jacobian(S, sparse)]
void f(double[] x, out double[] y) {
    int n = len(x);
    double h2 = 1.0 / ((n + 1.0) * (n + 1.0));
    for (int i = 0; i < n; i++) {
        double l = 0.0;
        double r = 0.0;
        if (i > 0) l = x[i - 1];
        if (i < n - 1) r = x[i + 1];
        y[i] = l - 2.0 * x[i] + r + h2 * exp(x[i]);
    }
}";

#[test]
fn boundary_branches_and_a_double_before_the_loop_take_a_static_pattern() {
    assert!(is_static(BRATU, 2));
    let j = jit(BRATU);
    for n in [1usize, 2, 3, 7] {
        let x: Vec<f64> = (0..n).map(|k| 0.4 - 0.15 * k as f64).collect();
        let args = [arr(&x), arr(&vec![0.0; n])];
        let csr = check(&j, "f", &args, n, n);
        same_as_coloring_within(&j, "f", &args, (n, n), 1e-15);
        let rows = pattern(&csr);
        let want: Vec<Vec<i64>> = (0..n as i64)
            .map(|i| {
                (i - 1..=i + 1)
                    .filter(|&c| c >= 0 && c < n as i64)
                    .collect()
            })
            .collect();
        assert_eq!(rows, want, "n = {n}");
    }
}

/// Conditions of every kind the pattern follows: `%`, `&&`, `!`, an
/// element of an integer input, a `bool` parameter, a `bool` before the
/// loop, a ternary, nested branches, and a callee's branch on its own
/// integer parameter (the caller's base); a `double` before the loop
/// with a cast and math.
const PATHS: &str = "
static double edge(double[] v, int o, int lo) {
    double s = v[o];
    if (o > lo) { s = v[o - 1] * s; }
    return s;
}
[jacobian(J)]
[jacobian(S, sparse)]
void f(double[] x, double[] u, int[] ix, bool wide, out double[] y) {
    int n = len(y) / 2;
    bool odd = n % 2 == 1;
    double w = sqrt(double(len(x))) * 0.5;
    for (int i = 0; i < n; i++) {
        double t = x[2 * i + 1];
        if (i % 2 == 0 && i > 0) { t = t * x[2 * i]; }
        if (!(ix[i] == 0)) {
            if (wide) { t = t + x[2 * i + 2]; } else { t = t - u[i]; }
        }
        double s = odd ? u[i + 1] : sin(t);
        y[2 * i] = t * s * w + edge(x, 2 * i + 1, 2);
        y[2 * i + 1] = i < n - 1 ? u[i] * t : 2.0;
    }
}";

#[test]
fn integer_conditions_of_every_kind_pick_the_path() {
    assert!(is_static(PATHS, 3));
    let j = jit(PATHS);
    for (n, wide) in [(3usize, true), (3, false), (4, true), (4, false), (1, true)] {
        let x: Vec<f64> = (0..2 * n + 1).map(|k| 0.6 - 0.1 * k as f64).collect();
        let u: Vec<f64> = (0..n + 1).map(|k| -0.3 + 0.2 * k as f64).collect();
        let ix: Vec<i64> = (0..n as i64).map(|k| k % 3).collect();
        let args = [
            arr(&x),
            arr(&u),
            ArgValue::Array(ArrayValue::I64(ix)),
            ArgValue::Scalar(Constant::Bool(wide)),
            arr(&vec![0.0; 2 * n]),
        ];
        let (nr, nc) = (2 * n, 3 * n + 2);
        check(&j, "f", &args, nr, nc);
        same_as_coloring_within(&j, "f", &args, (nr, nc), 1e-15);
    }
}

#[test]
fn a_float_condition_whose_arms_read_differently_still_sweeps() {
    let src = "
[jacobian(J)]
[jacobian(S, sparse)]
void f(double[] x, out double[] y) {
    for (int i = 1; i < len(y); i++) {
        double t = x[i];
        if (i > 1) {
            if (x[i] > 0.0) { t = x[i - 1]; }
        }
        y[i] = t;
    }
}";
    assert!(!is_static(src, 0));
    let j = jit(src);
    let args = [arr(&[1.0, -2.0, 3.0, 4.0]), arr(&[0.0; 4])];
    let csr = check(&j, "f", &args, 4, 4);
    assert_eq!(pattern(&csr), vec![vec![], vec![1], vec![1], vec![2]]);
}

#[test]
fn a_double_before_the_loop_that_depends_on_an_input_has_no_element_path() {
    let src = "
[jacobian(J)]
[jacobian(S, sparse)]
void f(double[] x, out double[] y) {
    double c = x[0] * 0.5;
    for (int i = 0; i < len(y); i++) { y[i] = c * x[i]; }
}";
    assert!(!takes_elements(src));
    let j = jit(src);
    let args = [arr(&[1.0, -2.0, 3.0]), arr(&[0.0; 3])];
    let csr = check(&j, "f", &args, 3, 3);
    assert_eq!(pattern(&csr), vec![vec![0], vec![0, 1], vec![0, 2]]);
}

/// The gather of a static loop with two paths, in the lowered IR of
/// `S__elems` from the reverse run of an iteration on: a branch on
/// `0 + 1 * i > 0` (the condition as the pattern wrote it) to the other
/// rows' two entries (`x[i - 1]`, `x[i]`) or the first row's one, with no
/// sweep.
#[test]
fn the_gather_branches_on_the_paths_condition() {
    let src = "
[jacobian(S, sparse)]
void f(double[] x, out double[] y) {
    for (int i = 0; i < len(x); i++) {
        double l = 1.0;
        if (i > 0) l = x[i - 1];
        y[i] = l * x[i];
    }
}";
    let _in = crate::support::snapshots_in("tests/it/snapshots").bind_to_scope();
    let m = adc::driver::frontend("t.ad", src, &adc::CompileOptions::default())
        .unwrap_or_else(|f| panic!("does not compile:\n{f}"));
    assert!(m.find("S__e0m").is_none(), "the loop sweeps");
    let module = m.to_string();
    let start = module
        .find("static @S__elems(")
        .expect("S has an element path");
    let text = &module[start..];
    let text = &text[..text.find("\n}\n").expect("the function's end") + 3];
    let run = text.find("call @S__e0b").expect("the reverse run");
    let from = text[..run].rfind('\n').expect("a line before the call");
    insta::assert_snapshot!("element_paths__gather", &text[from + 1..]);
}

fn ints(v: &[i64]) -> ArgValue {
    ArgValue::Array(ArrayValue::I64(v.to_vec()))
}

/// An input read on one path only, at a base with an element of an integer
/// array (or a division): the element loop computes each base at every
/// iteration, so such a base would fail where the program does not
/// (`nbr[i + 1]` at the last `i`, `i / k` at `k = 0`); those loops sweep.
/// Found by review.
#[test]
fn a_base_read_on_one_path_only_is_not_computed_on_the_others() {
    let src = "
[jacobian(J)]
[jacobian(S, sparse)]
void f(double[] x, double[] u, int[] nbr, out double[] y) {
    int n = len(y);
    for (int i = 0; i < n; i++) {
        double t = x[i];
        if (i + 1 < n) { t = t + u[nbr[i + 1]]; }
        y[i] = t * t;
    }
}";
    assert!(!is_static(src, 1));
    let j = jit(src);
    let args = [
        arr(&[1.0, 2.0, 3.0]),
        arr(&[5.0, 6.0, 7.0]),
        ints(&[2, 0, 1]),
        arr(&[0.0; 3]),
    ];
    check(&j, "f", &args, 3, 6);
    let src = "
[jacobian(J)]
[jacobian(S, sparse)]
void f(double[] x, double[] u, int k, out double[] y) {
    for (int i = 0; i < len(y); i++) {
        double t = x[i];
        if (k > 0) { t = t * u[i / k]; }
        y[i] = t;
    }
}";
    assert!(!is_static(src, 0));
    let j = jit(src);
    for k in [0, 2] {
        let args = [
            arr(&[1.0, 2.0, 3.0]),
            arr(&[5.0, 6.0]),
            ArgValue::Scalar(Constant::I64(k)),
            arr(&[0.0; 3]),
        ];
        check(&j, "f", &args, 3, 5);
    }
    // A base that cannot fail (the loop variable) is computed anyway.
    assert!(is_static(BRATU, 2));
}

/// A branch in the right operand of `&&` runs only when the left one
/// holds: the pattern does not follow it (the gather would evaluate it
/// first, reading `ix[-1]`). Found by review.
#[test]
fn a_branch_in_the_right_operand_of_and_is_not_hoisted() {
    let src = "
[jacobian(J)]
[jacobian(S, sparse)]
void f(double[] x, int[] ix, out double[] y) {
    for (int i = 0; i < len(y); i++) {
        double t = x[i];
        if (i > 0 && (ix[i - 1] > 0 ? true : false)) { t = t * x[i - 1]; }
        y[i] = t;
    }
}";
    assert!(!is_static(src, 0));
    let j = jit(src);
    let args = [
        arr(&[1.0, 2.0, 3.0, 4.0]),
        ints(&[1, 0, 1, 1]),
        arr(&[0.0; 4]),
    ];
    let csr = check(&j, "f", &args, 4, 4);
    assert_eq!(
        pattern(&csr),
        vec![vec![0], vec![0, 1], vec![2], vec![2, 3]]
    );
}

/// Conditions and integers that name another twice at each step of an
/// inner loop double in length at each step: past a bound they are not
/// followed (the compiler ran out of memory). Found by review.
#[test]
fn conditions_that_double_at_each_step_stay_bounded() {
    let src = "
[jacobian(J)]
[jacobian(S, sparse)]
void f(double[] x, int[] ix, out double[] y) {
    for (int i = 0; i < len(y); i++) {
        bool odd = false;
        int p = ix[i];
        for (int k = 0; k < 40; k++) {
            bool b = ix[i + k] > 0;
            odd = (odd && !b) || (!odd && b);
            p = p * p;
        }
        double t = x[i];
        if (odd) { t = t * x[i + 1]; }
        if (p > 0) { t = t + x[i + 2]; }
        y[i] = t;
    }
}";
    assert!(!is_static(src, 0));
    let j = jit(src);
    let ix: Vec<i64> = (0..43).map(|k| (k * 7 % 3 == 0) as i64).collect();
    let x: Vec<f64> = (0..5).map(|k| 0.5 + k as f64).collect();
    let args = [arr(&x), ints(&ix), arr(&[0.0; 3])];
    check(&j, "f", &args, 3, 5);
}

/// A declaration before the loop named as one of `NAME`'s own parameters
/// (`vals`, `cols`, `rows`), which the element code would shadow: no
/// element path. Found by review.
#[test]
fn a_declaration_named_cols_takes_the_coloring() {
    let src = "
[jacobian(J)]
[jacobian(S, sparse)]
void f(double[] x, out double[] y) {
    double cols = 2.0;
    int rows = len(y);
    for (int i = 0; i < rows; i++) { y[i] = cols * x[i] * x[i]; }
}";
    assert!(!takes_elements(src));
    let j = jit(src);
    let args = [arr(&[1.0, 2.0, 3.0]), arr(&[0.0; 3])];
    let csr = check(&j, "f", &args, 3, 3);
    assert_eq!(pattern(&csr), vec![vec![0], vec![1], vec![2]]);
}

/// A write under a branch whose row reads an integer array (or divides):
/// `S` evaluates every site's row at every iteration, so such a loop takes
/// no element path (it read `bnode[2]` past the table, and divided by
/// `k = 0`, where `F` does not). Found by trying boundary tables.
#[test]
fn a_guarded_write_whose_row_could_fail_takes_the_coloring() {
    let src = "
[jacobian(J)]
[jacobian(S, sparse)]
void f(double[] x, int[] bnode, out double[] y) {
    for (int i = 0; i < len(x); i++) {
        if (i < len(bnode)) { y[bnode[i]] = x[bnode[i]] - 1.0; }
    }
}";
    assert!(!takes_elements(src));
    let j = jit(src);
    let args = [arr(&[1.0, 2.0, 3.0]), ints(&[0, 2]), arr(&[0.0; 3])];
    let csr = check(&j, "f", &args, 3, 3);
    assert_eq!(pattern(&csr), vec![vec![0], vec![], vec![2]]);
    let src = "
[jacobian(J)]
[jacobian(S, sparse)]
void f(double[] x, int k, out double[] y) {
    for (int i = 0; i < len(x); i++) {
        if (k != 0) { y[i / k] = x[i] * x[i]; }
    }
}";
    assert!(!takes_elements(src));
    let j = jit(src);
    for k in [0, 1] {
        let args = [
            arr(&[1.0, 2.0, 3.0]),
            ArgValue::Scalar(Constant::I64(k)),
            arr(&[0.0; 3]),
        ];
        check(&j, "f", &args, 3, 3);
    }
    // Unguarded, such a row is the function's own: the element path.
    assert!(takes_elements(
        "
[jacobian(S, sparse)]
void f(double[] x, int[] rp, out double[] y) {
    for (int i = 0; i < len(x); i++) { y[rp[i]] = x[i] * x[i]; }
}"
    ));
}
