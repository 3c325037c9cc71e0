//! Element Jacobians (docs/jacobians.md#element-jacobians) where their
//! plans are stressed: reads that tie and change order across several
//! inputs, rows whose entries change with branches, loops naming some of
//! `F`'s parameters and integers, views, inner loops that break, and
//! `vals`, `cols` and `rows` too short. Every case runs the element path
//! (`S__elems` takes it) and is checked against the dense Jacobian.

use crate::sparse_elements::{same_as_coloring, takes_elements};
use crate::sparse_jacobian::{check, int, ints};
use crate::support::{arg_floats, arr, jit};
use adc::{ArgValue, ArrayValue};

/// `check` against the dense Jacobian, then (asserting that `S__elems`
/// takes the call, not the coloring) `S` with room to spare (the same
/// entries), `rows` one short, and `vals`, `cols` or both one to `nnz`
/// short: each short array is the error `jacobian needs N entries`.
pub(crate) fn dense_and_short(
    j: &adc::JitModule,
    f: &str,
    args: &[ArgValue],
    nr: usize,
    nc: usize,
) {
    let csr = check(j, f, args, nr, nc);
    let nnz = csr.vals.len();
    let with = |nv: usize, ncl: usize| {
        let mut a = args.to_vec();
        a.push(arr(&vec![0.0; nv]));
        a.push(ArgValue::Array(ArrayValue::I64(vec![0; ncl])));
        a.push(ArgValue::Array(ArrayValue::I64(vec![0; nr + 1])));
        a
    };
    let mut spare = with(nnz + 5, nnz + 5);
    let took = j.call("S__elems", &mut spare.clone()).expect("S__elems");
    assert_eq!(
        took,
        vec![adc::Constant::Bool(true)],
        "the element path runs"
    );
    j.call("S", &mut spare).expect("room to spare");
    let k = args.len();
    assert_eq!(
        &arg_floats(&spare[k])[..nnz],
        &csr.vals[..],
        "vals with room"
    );
    assert_eq!(&ints(&spare[k + 1])[..nnz], &csr.cols[..], "cols with room");
    assert_eq!(ints(&spare[k + 2]), csr.rows, "rows with room");
    let mut rows_short = with(nnz, nnz);
    rows_short[k + 2] = ArgValue::Array(ArrayValue::I64(vec![0; nr]));
    match j.call("S", &mut rows_short) {
        Err(adc::CallError::Runtime(m)) => assert!(
            m.starts_with(&format!("jacobian needs {} entries", nr + 1)),
            "rows one short: {m}"
        ),
        other => panic!("rows one short: {other:?}"),
    }
    for short in 1..=nnz {
        for (nv, ncl) in [
            (nnz - short, nnz),
            (nnz, nnz - short),
            (nnz - short, nnz - short),
        ] {
            match j.call("S", &mut with(nv, ncl)) {
                Err(adc::CallError::Runtime(m)) => assert!(
                    m.starts_with(&format!("jacobian needs {nnz} entries")),
                    "vals {nv}, cols {ncl}: {m}"
                ),
                other => panic!("vals {nv}, cols {ncl}: {other:?}"),
            }
        }
    }
}

#[test]
fn ties_across_inputs_between_const_arrays_and_int_offsets() {
    // Params in an odd order: an int offset first, an out array before the
    // inputs, a Const double array between two Dual ones; each element
    // reads the same elements several times in changing orders.
    let src = "
[jacobian(J, Const, Dual, Const, Dual, Const, Dual, Const)]
[jacobian(S, Const, Dual, Const, Dual, Const, Dual, Const, sparse)]
void f(int o, out double[] y, double[] k, double[] a, int[] ix, double[] b, int h) {
    int n2 = len(y) / 2;
    int unused = h + 3;
    int off = o + 1;
    for (int i = 0; i < n2; i++) {
        int p = ix[3 * i];
        int q = ix[3 * i + 1];
        int r = ix[3 * i + 2];
        double u = a[p] * b[q] + a[q % len(a)] * k[r];
        double v = b[r] * a[p] + b[q] * b[r];
        y[2 * i] = u * a[(p + off) % len(a)];
        y[2 * i + 1] = v * a[p] + b[(r + off) % len(b)];
    }
}";
    assert!(takes_elements(src));
    let j = jit(src);
    let ix: Vec<i64> = vec![
        0, 1, 2, 0, 1, 2, 2, 2, 2, 1, 0, 2, 1, 0, 2, 0, 0, 0, 2, 1, 0, 0, 2, 1, 1, 1, 0,
    ];
    let p = ix.len() / 3;
    let args = [
        int(1),
        arr(&vec![0.0; 2 * p]),
        arr(&[0.4, 0.6, -0.3]),
        arr(&[0.5, -1.0, 2.0]),
        ArgValue::Array(ArrayValue::I64(ix)),
        arr(&[0.3, 0.7, -0.2]),
        int(5),
    ];
    dense_and_short(&j, "f", &args, 2 * p, 6);
}

#[test]
fn views_passed_to_a_callee_at_offsets() {
    let src = "
static void g(double[] s, double[] t, int k, out double[] e, int eo) {
    e[eo] = s[k] * t[k + 1] + s[0] * s[k];
    e[eo + 1] = t[0] * t[k] - s[k + 1];
}
[jacobian(J)]
[jacobian(S, sparse)]
void f(double[] a, double[] b, int[] ix, out double[] y) {
    for (int i = 0; i < len(y) / 2; i++) {
        int c = ix[i];
        g(b[c..], a[c..c + 3], i % 2, y, 2 * i);
    }
}";
    assert!(takes_elements(src), "views");
    let j = jit(src);
    let ix: Vec<i64> = vec![0, 1, 0, 2, 2, 1];
    let p = ix.len();
    let args = [
        arr(&[0.5, -1.0, 2.0, 0.25, 1.5]),
        arr(&[0.3, 0.7, -0.2, 0.9, 1.1]),
        ArgValue::Array(ArrayValue::I64(ix)),
        arr(&vec![0.0; 2 * p]),
    ];
    dense_and_short(&j, "f", &args, 2 * p, 10);
}

#[test]
fn rows_whose_entry_counts_change_with_the_same_reads() {
    // The same reads each element, whose masks change with branches: the
    // plan check must see the masks (entry counts 1..4 per row).
    let src = "
[jacobian(J)]
[jacobian(S, sparse)]
void f(double[] x, double[] z, int[] sel, out double[] y) {
    int m = len(sel);
    for (int i = 0; i < m; i++) {
        double a = x[i];
        double b = x[i + 1];
        double c = z[i];
        double d = z[(i + 2) % len(z)];
        double r = 1.0;
        if (sel[i] % 2 == 1) { r = r * a; }
        if (sel[i] % 3 == 2) { r = r * c * b; }
        if (sel[i] % 5 == 4) { r = r + d; }
        y[2 * i] = r;
        double e = 2.0;
        if (sel[i] > 3) { e = a * d; }
        y[2 * i + 1] = e;
    }
}";
    assert!(takes_elements(src));
    let j = jit(src);
    let sel: Vec<i64> = vec![0, 1, 1, 2, 5, 9, 9, 4, 14, 14, 3, 0, 29];
    let m = sel.len();
    let x: Vec<f64> = (0..m + 1).map(|k| 0.3 + 0.1 * k as f64).collect();
    let z: Vec<f64> = (0..m).map(|k| -0.2 + 0.15 * k as f64).collect();
    let args = [
        arr(&x),
        arr(&z),
        ArgValue::Array(ArrayValue::I64(sel)),
        arr(&vec![0.0; 2 * m]),
    ];
    dense_and_short(&j, "f", &args, 2 * m, 2 * m + 1);
    same_as_coloring(&j, "f", &args, 2 * m, 2 * m + 1);
}

#[test]
fn loops_naming_different_inputs_and_integers() {
    // Three loops: the first names c alone (and `len(a)`), the second b and
    // a in that order with an integer declared before both loops, the
    // third no input; integers declared between loops.
    let src = "
[jacobian(J)]
[jacobian(S, sparse)]
void f(double[] a, double[] b, double[] c, int s, out double[] y, out double[] z, out double[] w) {
    int n0 = len(a) - 1;
    bool flip = s > 1;
    for (int i = 0; i < len(y); i++) {
        y[i] = c[(i + s) % len(c)] * c[i % len(c)] + double(len(a));
    }
    int t = s + 2;
    for (int i = 1; i < len(z) + 1; i++) {
        double u = b[i % len(b)] * a[(t + i) % len(a)];
        if (flip) { u = u * a[n0]; }
        z[i - 1] = u + b[(i + t) % len(b)] * b[i % len(b)];
    }
    for (int i = 0; i < len(w); i++) {
        w[i] = double(i * t);
    }
}";
    assert!(takes_elements(src));
    let j = jit(src);
    for s in [0, 2, 3] {
        let args = [
            arr(&[0.5, -1.0, 2.0, 0.25]),
            arr(&[0.3, 0.7, -0.2]),
            arr(&[1.5, -0.25, 0.75, 0.3, 0.9]),
            int(s),
            arr(&[0.0; 4]),
            arr(&[0.0; 5]),
            arr(&[0.0; 2]),
        ];
        dense_and_short(&j, "f", &args, 11, 12);
        same_as_coloring(&j, "f", &args, 11, 12);
    }
}

#[test]
fn nested_inner_loops_reading_ties() {
    let src = "
[jacobian(J)]
[jacobian(S, sparse)]
void f(double[] x, double[] v, int[] ix, out double[] y) {
    for (int i = 0; i < len(y) / 3; i++) {
        double s = 0.0;
        for (int k = 0; k < 4; k++) {
            for (int l = 0; l < 2; l++) { s += x[ix[(i + k + l) % len(ix)]] * v[(k * l + i) % len(v)]; }
        }
        y[3 * i] = s;
        y[3 * i + 1] = x[ix[i]] * x[ix[i]];
        y[3 * i + 2] = v[0];
    }
}";
    assert!(takes_elements(src));
    let j = jit(src);
    let ix: Vec<i64> = vec![3, 3, 0, 1, 3, 2, 2, 0];
    let args = [
        arr(&[0.5, -1.0, 2.0, 0.25]),
        arr(&[0.3, 0.7, -0.2]),
        ArgValue::Array(ArrayValue::I64(ix)),
        arr(&[0.0; 18]),
    ];
    dense_and_short(&j, "f", &args, 18, 7);
}

#[test]
fn many_tied_reads_around_the_bit_limit_in_the_second_input() {
    // Reads of b only (a, c named by `len` alone), 50 to 56 of them with
    // many ties, so iterations go between bit sets and index sets; an
    // inner loop breaks early.
    let src = "
[jacobian(J)]
[jacobian(S, sparse)]
void f(double[] a, double[] b, double[] c, int[] ns, out double[] y) {
    for (int i = 0; i < len(ns); i++) {
        double s = 0.0;
        for (int k = 0; k < ns[i]; k++) {
            s += b[(i * k + k / 3) % len(b)] * 0.25 + double(len(a) + len(c));
            if (s > 1000.0) { break; }
        }
        double t = 0.0;
        for (int k = 0; k < 6; k++) {
            if (k > i % 4) { break; }
            t += b[(i + k) % len(b)] * b[(i + 2 * k) % len(b)];
        }
        y[2 * i] = s * t;
        y[2 * i + 1] = t + b[i % len(b)];
    }
}";
    assert!(takes_elements(src));
    let j = jit(src);
    let ns: Vec<i64> = vec![50, 51, 52, 53, 52, 1, 0, 52, 56, 52, 52];
    let m = ns.len();
    let b: Vec<f64> = (0..61).map(|k| 0.01 * k as f64 - 0.3).collect();
    let args = [
        arr(&[1.0, 2.0]),
        arr(&b),
        arr(&[3.0]),
        ArgValue::Array(ArrayValue::I64(ns)),
        arr(&vec![0.0; 2 * m]),
    ];
    dense_and_short(&j, "f", &args, 2 * m, 64);
}

#[test]
fn conditional_sites_and_a_site_never_in_range() {
    // Sites of one iteration write rows of two out arrays, some out of
    // range (not written), reading a and b tied at changing places.
    let src = "
[jacobian(J)]
[jacobian(S, sparse)]
void f(double[] a, int lo, double[] b, int[] ix, out double[] y, out double[] z) {
    for (int i = lo; i < len(ix); i++) {
        double u = a[ix[i]] * b[ix[i] % len(b)];
        double v = b[ix[i] % len(b)] * a[(ix[i] + i) % len(a)];
        y[3 * (i - lo)] = u * u;
        if (u > 100.0) { y[1000 + i] = u; }
        y[3 * (i - lo) + 1] = v;
        if (i % 3 != 1) { y[3 * (i - lo) + 2] = u + v * a[ix[i]]; }
    }
    for (int i = 2; i < len(ix); i++) { z[2 * i - 3] = a[ix[i]] * b[0] * a[ix[i]] + b[0]; }
}";
    assert!(takes_elements(src));
    let j = jit(src);
    let ix: Vec<i64> = vec![0, 1, 1, 2, 3, 0, 3, 2];
    for lo in [0, 1, 2] {
        let args = [
            arr(&[0.5, -1.0, 2.0, 0.25]),
            int(lo),
            arr(&[0.3, 0.7, -0.2]),
            ArgValue::Array(ArrayValue::I64(ix.clone())),
            arr(&[0.0; 24]),
            arr(&[0.0; 13]),
        ];
        dense_and_short(&j, "f", &args, 37, 7);
    }
}

#[test]
fn random_indices_tie_reorder_and_switch_rows() {
    // One program, many index arrays (a small range: reads tie, change
    // order, and branches change the rows' reads): every call against the
    // dense Jacobian, some with vals and cols too short.
    let src = "
[jacobian(J)]
[jacobian(S, sparse)]
void f(double[] a, int o, double[] b, double[] c, int[] ix, out double[] y) {
    int two = o * 2;
    for (int i = 0; i < len(ix) / 6; i++) {
        int p0 = ix[6 * i];
        int p1 = ix[6 * i + 1];
        int p3 = ix[6 * i + 3];
        int p4 = ix[6 * i + 4];
        double u = a[p0 % len(a)];
        double v = c[p1 % len(c)];
        double t = a[ix[6 * i + 2] % len(a)] * b[p3 % len(b)];
        if (p4 % 2 == 0) { u = u * c[p3 % len(c)]; }
        if (ix[6 * i + 5] % 3 == 0) { t = t + a[p0 % len(a)] * v; }
        y[3 * i] = u * t;
        double e = 0.0;
        if (p4 % 4 != 1) { e = v + b[(ix[6 * i + 5] + two) % len(b)]; }
        y[3 * i + 1] = e;
        y[3 * i + 2] = t * t + a[p1 % len(a)] * c[(p0 + o) % len(c)];
    }
}";
    assert!(takes_elements(src));
    let j = jit(src);
    let mut seed: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut next = |m: u64| {
        seed = seed
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        ((seed >> 33) % m) as i64
    };
    for round in 0..24 {
        let p = 3 + (round % 5);
        let range = 2 + (round as u64 % 4);
        let ix: Vec<i64> = (0..6 * p).map(|_| next(range)).collect();
        let o = next(3);
        let (na, nb, nc) = (2 + round % 3, 1 + round % 2, 2 + (round + 1) % 3);
        let a: Vec<f64> = (0..na).map(|k| 0.3 + 0.2 * k as f64).collect();
        let b: Vec<f64> = (0..nb).map(|k| -0.7 + 0.3 * k as f64).collect();
        let c: Vec<f64> = (0..nc).map(|k| 1.1 - 0.25 * k as f64).collect();
        let args = [
            arr(&a),
            int(o),
            arr(&b),
            arr(&c),
            ArgValue::Array(ArrayValue::I64(ix)),
            arr(&vec![0.0; 3 * p]),
        ];
        if round % 4 == 0 {
            dense_and_short(&j, "f", &args, 3 * p, na + nb + nc);
        } else {
            check(&j, "f", &args, 3 * p, na + nb + nc);
        }
    }
}

#[test]
fn a_loop_variable_shadowing_a_parameter_or_an_integer_before_the_loop() {
    // `for (int i = ...)` shadows the parameter `i` (first program) or the
    // integer `i` declared before the loop (second): the outlined body's
    // `i` is the loop's, and it took a second parameter `i` as well, named
    // in its body (error E0203, "parameter `i` is declared twice").
    for src in [
        "
[jacobian(J)]
[jacobian(S, sparse)]
void f(double[] x, int i, out double[] y) {
    for (int i = 0; i < len(y); i++) {
        y[i] = x[i] * x[i + 1];
    }
}",
        "
[jacobian(J)]
[jacobian(S, sparse)]
void f(double[] x, int k, out double[] y) {
    int i = k + 1;
    for (int j = 0; j < len(y) / 2; j++) {
        y[j] = x[j + i] * x[j];
    }
    for (int i = len(y) / 2; i < len(y); i++) {
        y[i] = sin(x[i]) * x[i + 1];
    }
}",
    ] {
        assert!(takes_elements(src), "{src}");
        let j = jit(src);
        let x = [0.5, -1.0, 2.0, 1.5, -0.25, 0.75, 0.3];
        dense_and_short(&j, "f", &[arr(&x), int(1), arr(&[0.0; 6])], 6, 7);
    }
}
