//! Static element patterns (docs/jacobians.md#static-patterns): element
//! loops whose rows read each input at one base plus constants, on every
//! path, gather their rows with no sweep (`S__eKm` is not generated);
//! others sweep each iteration. Every case against the dense Jacobian
//! (`check`: values, every nonzero listed, the count equal to `S_nnz`'s
//! dependency sweep) and the coloring (`same_as_coloring`: the same
//! entries exactly).

use crate::sparse_elements::{same_as_coloring, takes_elements};
use crate::sparse_jacobian::{check, pattern};
use crate::support::{arr, jit};
use adc::{ArgValue, ArrayValue};

/// Whether `S`'s element loop `k` (the index of the loop among `F`'s
/// statements) takes a static pattern: its sweep is not generated.
pub(crate) fn is_static(source: &str, k: usize) -> bool {
    assert!(takes_elements(source));
    let m = adc::driver::frontend("t.ad", source, &adc::CompileOptions::default())
        .unwrap_or_else(|f| panic!("does not compile:\n{f}"));
    assert!(
        m.find(&format!("S__e{k}b")).is_some(),
        "loop {k} has no element code"
    );
    m.find(&format!("S__e{k}m")).is_none()
}

fn ints(v: &[i64]) -> ArgValue {
    ArgValue::Array(ArrayValue::I64(v.to_vec()))
}

/// Bundle adjustment's shape through callees, with a branch on a float
/// whose arms depend on different reads but whose rows read the same
/// (Rodrigues' rotation and its first-order form).
const ROTATE: &str = "
static double sq(int n, double[] v, int o) {
    double s = 0.0;
    for (int k = 0; k < n; k++) { s = s + v[o + k] * v[o + k]; }
    return s;
}
static void rot(double[] r, int ro, double[] p, out double[] q) {
    double t = sq(3, r, ro);
    if (t != 0.0) {
        double c = cos(sqrt(t));
        q[0] = p[0] * c + r[ro + 1] * p[2];
        q[1] = p[1] * c - r[ro] * p[2];
        q[2] = p[2] * c + r[ro + 2] * p[1];
    } else {
        q[0] = p[0] + r[ro + 1] * p[2];
        q[1] = p[1] - r[ro] * p[2];
        q[2] = p[2] + r[ro + 2] * p[1] + r[ro] * r[ro + 1];
    }
}
static void proj(double[] cam, int co, double[] x, int xo, out double[] e, int eo) {
    double p[3];
    double q[3];
    for (int k = 0; k < 3; k++) { p[k] = x[xo + k] - cam[co + 3 + k]; }
    rot(cam, co, p, q);
    e[eo] = q[0] / q[2] * cam[co + 6];
    e[eo + 1] = q[1] / q[2] + cam[co + 8];
}
[jacobian(J)]
[jacobian(S, sparse)]
void f(double[] cams, double[] x, int[] obs, out double[] err) {
    for (int i = 0; i < len(obs) / 2; i++) {
        int c = obs[2 * i];
        proj(cams, c * 9, x, obs[2 * i + 1] * 3, err, 2 * i);
    }
}";

#[test]
fn branches_whose_rows_read_the_same_take_a_static_pattern() {
    assert!(is_static(ROTATE, 0));
    let j = jit(ROTATE);
    let cams: Vec<f64> = (0..27).map(|k| 0.3 + 0.05 * k as f64).collect();
    let x: Vec<f64> = (0..12).map(|k| 1.0 + 0.1 * k as f64).collect();
    let mut zero = cams.clone();
    zero[9..12].fill(0.0); // camera 1: no rotation, the other arm
    for cams in [cams, zero] {
        let obs = ints(&[0, 1, 1, 3, 2, 0, 1, 2, 0, 0]);
        let args = [arr(&cams), arr(&x), obs, arr(&[0.0; 10])];
        let csr = check(&j, "f", &args, 10, 39);
        same_as_coloring(&j, "f", &args, 10, 39);
        // Row 0: camera 0's columns 0-6 (not 7, 8), point 1's 28-30.
        assert_eq!(pattern(&csr)[0], vec![0, 1, 2, 3, 4, 5, 6, 30, 31, 32]);
    }
}

#[test]
fn rows_that_read_differently_on_two_paths_sweep() {
    let src = "
[jacobian(J)]
[jacobian(S, sparse)]
void f(double[] x, out double[] y) {
    for (int i = 0; i < len(x) - 1; i++) {
        double t = x[i];
        if (x[i] > 0.0) { t = x[i + 1] * 2.0; }
        y[i] = t;
    }
}";
    assert!(!is_static(src, 0));
    let j = jit(src);
    let args = [arr(&[1.0, -2.0, 3.0, 4.0]), arr(&[0.0; 3])];
    let csr = check(&j, "f", &args, 3, 4);
    assert_eq!(pattern(&csr), vec![vec![1], vec![1], vec![3]]);
}

#[test]
fn reads_of_one_input_at_two_bases_sweep() {
    let src = "
[jacobian(J)]
[jacobian(S, sparse)]
void f(double[] x, int[] a, out double[] y) {
    for (int i = 0; i < len(y); i++) { y[i] = x[i] * x[a[i]]; }
}";
    assert!(!is_static(src, 0));
    let j = jit(src);
    let args = [arr(&[1.0, 2.0, 3.0]), ints(&[2, 2, 0]), arr(&[0.0; 3])];
    check(&j, "f", &args, 3, 3);
    same_as_coloring(&j, "f", &args, 3, 3);
}

/// Offsets on both sides of the base, a callee returning a value over an
/// inner loop, a view, a local array, integers before the loop, a second
/// input read at constant indices, rows of two `out` arrays, and rows
/// with no entry.
const SHAPES: &str = "
static double g(double[] v, int o) {
    double s = 0.0;
    for (int k = -1; k <= 1; k++) { s += v[o + k] * v[o + k]; }
    return s;
}
static double h(double[] v) { return v[0] * v[2]; }
[jacobian(J)]
[jacobian(S, sparse)]
void f(double[] x, double[] u, out double[] y, out double[] z) {
    int n = len(x);
    for (int i = 1; i < n - 1; i++) {
        double t[2];
        t[0] = g(x, i);
        t[1] = u[0] * sqrt(1.0 + x[i] * x[i]);
        y[2 * (i - 1)] = t[0] + u[1] + 0.5;
        y[2 * (i - 1) + 1] = t[1] * h(x[i - 1 .. i + 2]);
        z[i - 1] = 2.0;
    }
}";

#[test]
fn offsets_views_callees_and_local_arrays_take_a_static_pattern() {
    assert!(is_static(SHAPES, 1));
    let j = jit(SHAPES);
    let x: Vec<f64> = (0..7).map(|k| 0.5 - 0.2 * k as f64).collect();
    let args = [arr(&x), arr(&[1.5, -0.5]), arr(&[0.0; 10]), arr(&[0.0; 5])];
    // Columns: x (7), u (2); rows: y (10), z (5).
    let csr = check(&j, "f", &args, 15, 9);
    same_as_coloring(&j, "f", &args, 15, 9);
    let rows = pattern(&csr);
    assert_eq!(rows[0], vec![0, 1, 2, 8]);
    assert_eq!(rows[1], vec![0, 1, 2, 7]);
    assert_eq!(rows[9], vec![4, 5, 6, 7]);
    assert_eq!(rows[10], Vec::<i64>::new());
}

/// A base out of bounds stops `S` with the error `F` gives there, also
/// in a static loop; in bounds the entries are those of the dense
/// Jacobian, also when `vals` and `cols` are too short to hold them all.
#[test]
fn a_base_out_of_bounds_stops_as_the_function_does() {
    let src = "
[jacobian(J)]
[jacobian(S, sparse)]
void f(double[] x, int[] at, out double[] y) {
    for (int i = 0; i < len(y); i++) {
        y[i] = x[at[i] + 1] * x[at[i] - 1];
    }
}";
    assert!(is_static(src, 0));
    let j = jit(src);
    let args = |k: i64| [arr(&[1.0, 2.0, 3.0, 4.0]), ints(&[1, k]), arr(&[0.0; 2])];
    check(&j, "f", &args(2), 2, 4);
    for bad in [0, 3, -7, 1 << 40] {
        let mut a = args(bad).to_vec();
        let Err(adc::CallError::Runtime(want)) = j.call("f", &mut a) else {
            panic!("f runs at {bad}")
        };
        a = args(bad).to_vec();
        a.extend([arr(&[0.0; 4]), ints(&[0; 4]), ints(&[0; 3])]);
        match j.call("S", &mut a) {
            Err(adc::CallError::Runtime(m)) => {
                assert!(m.starts_with("index out of bounds"), "{m}");
                assert!(want.starts_with("index out of bounds"), "{want}");
            }
            other => panic!("S at {bad}: {other:?}"),
        }
    }
    // Two entries per row; room for three.
    let mut a = args(2).to_vec();
    a.extend([arr(&[0.0; 3]), ints(&[0; 3]), ints(&[0; 3])]);
    assert!(j.call("S", &mut a).is_err());
}

/// A loop body adding to a set made before the loop (the dependency
/// sweep's union, `sets`): the set must not grow in place at every
/// iteration (it did: every element of `a` then depended on the `u`s of
/// all three, a superset the static pattern did not list, so `S_nnz`
/// counted 3 entries more than `S` wrote). Found by the difftest's element
/// oracle, seed 4003966.
#[test]
fn a_set_made_before_a_loop_grows_no_set_in_it() {
    let src = "
[jacobian(J)]
[jacobian(S, sparse)]
void e(double[] x, double[] u, out double[] z) {
    for (int i = 0; i < len(z); i++) {
        double t = tanh(x[4] - u[3]);
        double a[3];
        for (int k = 0; k < 3; k++) { a[k] = pow(1.5 + cos(u[6]), t) * u[3 + k]; }
        z[i] = exp(0.5 * sin(a[2] * x[1]));
    }
}";
    assert!(is_static(src, 0));
    let j = jit(src);
    let x: Vec<f64> = (0..6).map(|k| 0.3 + 0.1 * k as f64).collect();
    let u: Vec<f64> = (0..8).map(|k| -0.4 + 0.15 * k as f64).collect();
    let args = [arr(&x), arr(&u), arr(&[0.0; 2])];
    let csr = check(&j, "e", &args, 2, 14);
    same_as_coloring(&j, "e", &args, 2, 14);
    // x[1], x[4], u[3], u[5], u[6]: not u[4].
    assert_eq!(pattern(&csr)[0], vec![1, 4, 9, 11, 12]);
}
