//! Element Jacobians of sparse Jacobians (docs/jacobians.md#element-jacobians):
//! functions whose loops write disjoint rows take them (`S__elems` is
//! generated), others do not, and a loop whose iterations turn out to
//! share a row at run time falls back to the coloring; every case against
//! the dense Jacobian.

use crate::sparse_jacobian::{check, int, pattern};
use crate::support::{arr, jit};
use adc::{ArgValue, ArrayValue};

/// Whether `S`'s element code was generated for `source`.
pub(crate) fn takes_elements(source: &str) -> bool {
    let m = adc::driver::frontend("t.ad", source, &adc::CompileOptions::default())
        .unwrap_or_else(|f| panic!("does not compile:\n{f}"));
    m.find("S__elems").is_some()
}

/// Bundle adjustment's shape: each observation writes two rows through a
/// callee's `out` parameter at an offset, from a few elements of two
/// blocks picked by an index array; a second loop writes one row each.
const BA_LIKE: &str = "
const int NC = 3;
static void proj(double[] cam, int co, double[] pt, int po, double w, out double[] err, int eo) {
    double t[2];
    for (int k = 0; k < 2; k++) t[k] = sin(cam[co + k]) * pt[po + k] + cam[co + 2];
    if (t[0] > 0.0) { t[0] = sqrt(t[0]); }
    err[eo + 0] = w * t[0] * pt[po + 1];
    err[eo + 1] = w * t[1] / (1.0 + pt[po] * pt[po]);
}
static void wt(double[] w, int i, out double[] e) {
    e[i] = 1.0 - w[i] * w[i];
}
[jacobian(J)]
[jacobian(S, sparse)]
void obj(double[] cams, double[] pts, double[] w, int[] obs, out double[] err, out double[] werr) {
    int p = len(w);
    for (int i = 0; i < p; i++) {
        int c = obs[2 * i];
        int q = obs[2 * i + 1];
        proj(cams, c * NC, pts, q * 2, w[i], err, 2 * i);
    }
    for (int i = 0; i < p; i++) {
        wt(w, i, werr);
    }
}";

/// Observation `i`'s camera (of `n`) and point (of `m`), `p` of them.
fn observations(n: usize, m: usize, p: usize) -> Vec<i64> {
    (0..p)
        .flat_map(|i| [(i % n) as i64, ((i * 3) % m) as i64])
        .collect()
}

#[test]
fn bundle_adjustment_shape_takes_elements() {
    assert!(takes_elements(BA_LIKE));
    let j = jit(BA_LIKE);
    let (n, m, p) = (3, 4, 7);
    let cams: Vec<f64> = (0..n * 3).map(|k| 0.3 + 0.1 * k as f64).collect();
    let pts: Vec<f64> = (0..m * 2).map(|k| 0.2 * k as f64 - 0.5).collect();
    let w: Vec<f64> = (0..p).map(|k| 0.9 + 0.05 * k as f64).collect();
    let obs = observations(n, m, p);
    let args = [
        arr(&cams),
        arr(&pts),
        arr(&w),
        ArgValue::Array(ArrayValue::I64(obs.clone())),
        arr(&vec![0.0; 2 * p]),
        arr(&vec![0.0; p]),
    ];
    let csr = check(&j, "obj", &args, 3 * p, n * 3 + m * 2 + p);
    // Row 2i + k: camera obs[2i]'s 3, point obs[2i+1]'s 2 (where they
    // reach it) and w[i]; row 2p + i: w[i].
    for (r, cols) in pattern(&csr).iter().enumerate() {
        if r >= 2 * p {
            assert_eq!(cols, &[(n * 3 + m * 2 + r - 2 * p) as i64]);
        } else {
            let i = r / 2;
            assert!(
                cols.contains(&((n * 3 + m * 2 + i) as i64)),
                "row {r}: {cols:?}"
            );
            let cam = obs[2 * i] * 3;
            assert!(cols.contains(&(cam + 2)), "row {r}: {cols:?}");
        }
    }
}

#[test]
fn direct_writes_branches_and_integers_before_the_loop() {
    // Two sites per iteration, one of them conditional, from 1 on; the
    // rows of y[0] and y[1] are written by no iteration (empty).
    let src = "
[jacobian(J)]
[jacobian(S, sparse)]
void f(double[] x, out double[] y, int k) {
    int h = len(y) / 2;
    int s = k + 1;
    for (int i = 1; i < h; i++) {
        double a = x[i] * x[i - 1];
        y[2 * i] = a * s;
        if (x[i] > 0.0) { y[2 * i + 1] = cos(a) + x[i + 1]; }
    }
}";
    assert!(takes_elements(src));
    let j = jit(src);
    let x = [0.5, -1.0, 2.0, 1.5, -0.25, 0.75];
    let csr = check(&j, "f", &[arr(&x), arr(&[0.0; 10]), int(2)], 10, 6);
    let rows = pattern(&csr);
    assert!(rows[0].is_empty() && rows[1].is_empty());
    assert_eq!(rows[3], Vec::<i64>::new(), "x[1] < 0: y[3] not written");
    assert_eq!(rows[5], [1, 2, 3]);
}

#[test]
fn shared_rows_fall_back_to_the_coloring() {
    // Iterations i and i + 3 write the same row (the last one wins), and
    // one iteration writes one row twice: correct by the coloring.
    for src in [
        "
[jacobian(J)]
[jacobian(S, sparse)]
void f(double[] x, out double[] y) {
    for (int i = 0; i < len(x); i++) { y[i % 3] = x[i] * x[i]; }
}",
        "
[jacobian(J)]
[jacobian(S, sparse)]
void f(double[] x, out double[] y) {
    for (int i = 0; i < len(y); i++) { y[i] = x[i] * x[i]; y[i] = sin(x[i + 1]) * 2.0; }
}",
    ] {
        assert!(takes_elements(src));
        let j = jit(src);
        let x = [0.5, -1.0, 2.0, 1.5, -0.25, 0.75];
        let csr = check(&j, "f", &[arr(&x), arr(&[0.0; 3])], 3, 6);
        assert_eq!(csr.vals.len(), 3);
    }
}

#[test]
fn state_carried_between_iterations_keeps_the_coloring() {
    for src in [
        // A float carried in a variable.
        "
[jacobian(J)]
[jacobian(S, sparse)]
void f(double[] x, out double[] y) {
    double acc = 1.0;
    for (int i = 0; i < len(y); i++) { acc = acc * x[i]; y[i] = acc; }
}",
        // In the output itself.
        "
[jacobian(J)]
[jacobian(S, sparse)]
void f(double[] x, out double[] y) {
    for (int i = 0; i < len(y); i++) {
        y[i] = x[i];
        if (i > 0) { y[i] = y[i] * y[i - 1]; }
    }
}",
        // Through a callee that reads its `out` parameter.
        "
static void g(double[] x, int i, out double[] y) { y[i] = x[i]; y[i] = y[i] * x[i + 1]; }
[jacobian(J)]
[jacobian(S, sparse)]
void f(double[] x, out double[] y) {
    for (int i = 0; i < len(y); i++) { g(x, i, y); }
}",
        // Through a local array declared before the loop.
        "
[jacobian(J)]
[jacobian(S, sparse)]
void f(double[] x, out double[] y) {
    double t[1];
    for (int i = 0; i < len(y); i++) { t[0] = t[0] + x[i]; y[i] = t[0]; }
}",
        // A site in an inner loop.
        "
[jacobian(J)]
[jacobian(S, sparse)]
void f(double[] x, out double[] y) {
    for (int i = 0; i < len(y) / 2; i++) { for (int k = 0; k < 2; k++) { y[2 * i + k] = x[i] * x[k]; } }
}",
    ] {
        assert!(!takes_elements(src), "{src}");
        let j = jit(src);
        let x = [0.5, -1.0, 2.0, 1.5, -0.25, 0.75, 2.0];
        check(&j, "f", &[arr(&x), arr(&[0.0; 6])], 6, 7);
    }
}

#[test]
fn an_iteration_outgrowing_the_buffer_starts_again_with_more_room() {
    // Each iteration sums 150 products: its prefix sums' sets outgrow the
    // first buffer (4096 past the columns' own sets).
    let src = "
[jacobian(J)]
[jacobian(S, sparse)]
void f(double[] x, out double[] y) {
    for (int i = 0; i < len(y); i++) {
        double s = 0.0;
        for (int k = 0; k < 150; k++) { s += x[i + k] * x[k]; }
        y[i] = s;
    }
}";
    assert!(takes_elements(src));
    let j = jit(src);
    let x: Vec<f64> = (0..153).map(|k| 0.01 * k as f64 - 0.5).collect();
    let csr = check(&j, "f", &[arr(&x), arr(&[0.0; 3])], 3, 153);
    assert_eq!(pattern(&csr)[2].len(), 152);
}

/// Calls `S` and its coloring `S__colored` on `args` (after `check`
/// against the dense Jacobian): the element path gives exactly the
/// coloring's entries, pattern and values.
pub(crate) fn same_as_coloring(
    j: &adc::JitModule,
    f: &str,
    args: &[ArgValue],
    nr: usize,
    nc: usize,
) {
    same_as_coloring_within(j, f, args, (nr, nc), 0.0);
}

/// [`same_as_coloring`], the values equal within `tol` relative (a sum
/// of several terms, which the reverse run of the element path and the
/// forward run of the coloring may round in other orders).
pub(crate) fn same_as_coloring_within(
    j: &adc::JitModule,
    f: &str,
    args: &[ArgValue],
    (nr, nc): (usize, usize),
    tol: f64,
) {
    let csr = check(j, f, args, nr, nc);
    let nnz = csr.vals.len();
    let mut ca = args.to_vec();
    ca.push(arr(&vec![0.0; nnz]));
    ca.push(ArgValue::Array(ArrayValue::I64(vec![0; nnz])));
    ca.push(ArgValue::Array(ArrayValue::I64(vec![0; nr + 1])));
    j.call("S__colored", &mut ca)
        .unwrap_or_else(|e| panic!("S__colored: {e}"));
    let k = args.len();
    assert_eq!(
        ca[k + 2],
        ArgValue::Array(ArrayValue::I64(csr.rows.clone())),
        "rows"
    );
    assert_eq!(
        ca[k + 1],
        ArgValue::Array(ArrayValue::I64(csr.cols.clone())),
        "cols"
    );
    let vals = crate::support::arg_floats(&ca[k]);
    assert_eq!(vals.len(), csr.vals.len(), "vals");
    for (a, b) in vals.iter().zip(&csr.vals) {
        assert!(
            (a - b).abs() <= tol * a.abs().max(b.abs()) || a == b,
            "vals: {a} vs {b}"
        );
    }
}

#[test]
fn bit_sets_follow_reads_whose_order_ties_and_branches_change() {
    // Each iteration reads x at three indices whose order changes, some
    // equal (a column read twice), and a branch changes which reads reach
    // the second row: the plan of one iteration serves the next only when
    // its reads keep their order and ties.
    let src = "
[jacobian(J)]
[jacobian(S, sparse)]
void f(double[] x, int[] a, out double[] y) {
    for (int i = 0; i < len(y) / 2; i++) {
        double u = x[a[3 * i]];
        double v = x[a[3 * i + 1]];
        double t = u * v;
        y[2 * i] = t + x[a[3 * i + 2]];
        if (u > 0.0) { y[2 * i + 1] = sin(v) * x[a[3 * i]]; } else { y[2 * i + 1] = u * x[a[3 * i + 2]] + 1.0; }
    }
}";
    assert!(takes_elements(src));
    let j = jit(src);
    let x = [0.5, -1.0, 2.0, 1.5, -0.25, 0.75, 0.3];
    let a: Vec<i64> = vec![
        0, 1, 2, 0, 1, 2, 2, 1, 0, 3, 3, 5, 3, 3, 5, 6, 4, 6, 4, 4, 4, 1, 5, 0, 1, 5, 0,
    ];
    let p = a.len() / 3;
    let args = [
        arr(&x),
        ArgValue::Array(ArrayValue::I64(a)),
        arr(&vec![0.0; 2 * p]),
    ];
    same_as_coloring(&j, "f", &args, 2 * p, 7);
}

/// `f`, a loop of `len(y) / 2` iterations (`u = x[i]`, then `body`) whose
/// sparse Jacobian is `S`, and `big(x, o)`: it reads `x[o]` and
/// `x[o + 1]`, and is too long to inline (150 statements), so an element's
/// sweep of bit sets calls `big`'s.
fn with_big(body: &str) -> String {
    let chain = "    s = sin(s) * 0.9 + b;\n".repeat(150);
    format!(
        "
static double big(double[] x, int o) {{
    double a = x[o];
    double b = x[o + 1];
    double s = a;
{chain}    return s;
}}
[jacobian(J)]
[jacobian(S, sparse)]
void f(double[] x, out double[] y) {{
    for (int i = 0; i < len(y) / 2; i++) {{
        double u = x[i];
{body}    }}
}}"
    )
}

#[test]
fn reads_before_in_and_after_a_callee_that_stays_a_call() {
    // `big` is too long to inline (150 statements), so the element's sweep
    // of bit sets calls `big`'s: the read count and next bit, kept in values
    // within a block, must be in the arena for the callee's reads and be
    // taken from it again after the call. Otherwise the callee's reads
    // would reuse the bit of x[i] and the read of x[i + 3] one of the
    // callee's, and the rows would have the wrong columns. (Against the
    // dense Jacobian only: the coloring's forward mode rounds the chain
    // of 150 `sin`s differently.)
    let src = with_big(
        "        double v = big(x, i + 1);
        double t = x[i + 3];
        y[2 * i] = u * t;
        y[2 * i + 1] = v * u;
",
    );
    assert!(takes_elements(&src));
    let j = jit(&src);
    let x: Vec<f64> = (0..8).map(|k| 0.1 * k as f64 - 0.2).collect();
    let csr = check(&j, "f", &[arr(&x), arr(&[0.0; 10])], 10, 8);
    let rows = pattern(&csr);
    assert_eq!(rows[2], vec![1, 4]);
    assert_eq!(rows[3], vec![1, 2, 3]);
}

#[test]
fn more_reads_than_bits_take_the_index_sets() {
    // 52 reads of x per iteration fit the bit sets, 53 do not (the
    // iteration takes the index-set sweep): both give the coloring's rows.
    for reads in [52, 53] {
        let src = format!(
            "
[jacobian(J)]
[jacobian(S, sparse)]
void f(double[] x, out double[] y) {{
    for (int i = 0; i < len(y); i++) {{
        double s = 0.0;
        for (int k = 0; k < {reads}; k++) {{ s += x[(i + 2 * k) % len(x)] * 0.5; }}
        y[i] = s;
    }}
}}"
        );
        assert!(takes_elements(&src));
        let j = jit(&src);
        let x: Vec<f64> = (0..70).map(|k| 0.01 * k as f64 - 0.5).collect();
        same_as_coloring(&j, "f", &[arr(&x), arr(&[0.0; 3])], 3, 70);
    }
}

/// An index out of bounds in `F` is a runtime error from `F`, its sparse
/// Jacobian (the element path: the sweep checks the index where it loads
/// the input's tangent, not the input, as `dce` moves the check) and
/// `NAME_nnz` (at the same place as `F`'s; the element path's outlined
/// loop body reports the attribute's); in range, the Jacobian agrees with
/// the dense one.
#[test]
fn an_index_out_of_bounds_is_the_same_error() {
    const SRC: &str = "
[jacobian(J)]
[jacobian(S, sparse)]
void f(double[] x, int[] at, out double[] y) {
    for (int i = 0; i < len(y); i++) {
        y[i] = x[at[i]] * x[at[i]] + 1.0;
    }
}";
    assert!(takes_elements(SRC));
    let j = jit(SRC);
    let args = |k: i64| {
        [
            arr(&[1.0, 2.0, 3.0]),
            ArgValue::Array(ArrayValue::I64(vec![2, k])),
            arr(&[0.0; 2]),
        ]
    };
    check(&j, "f", &args(0), 2, 3);
    let error = |name: &str, extra: &[ArgValue]| {
        let mut a: Vec<ArgValue> = args(3).to_vec();
        a.extend(extra.iter().cloned());
        match j.call(name, &mut a) {
            Err(adc::CallError::Runtime(m)) => m,
            other => panic!("{name}: {other:?}"),
        }
    };
    let want = error("f", &[]);
    assert!(want.starts_with("index out of bounds"), "{want}");
    let csr = [
        arr(&[0.0; 2]),
        ArgValue::Array(ArrayValue::I64(vec![0; 2])),
        ArgValue::Array(ArrayValue::I64(vec![0; 3])),
    ];
    let elements = error("S", &csr);
    assert!(
        elements.starts_with("index out of bounds at t"),
        "{elements}"
    );
    assert_eq!(error("S_nnz", &[]), want);
}

/// The functions an attribute generates (here the outlined loop bodies,
/// which take every parameter of `obj` and read few) get no W0001: it
/// pointed at the user's attribute and parameters for code the user did
/// not write. The user's own unused names still get it.
#[test]
fn generated_functions_get_no_unused_warnings() {
    let c = adc_frontend::compile_to_ir(BA_LIKE).expect("compiles");
    assert!(c.warnings.is_empty(), "{:?}", c.warnings);
    let unused = BA_LIKE.replace("int p = len(w);", "int p = len(w); int unused = 1;");
    let c = adc_frontend::compile_to_ir(&unused).expect("compiles");
    assert_eq!(c.warnings.len(), 1, "{:?}", c.warnings);
    assert!(
        c.warnings[0].message.contains("`unused`"),
        "{:?}",
        c.warnings
    );
}

#[test]
fn reads_spread_over_branches_inner_loops_and_a_callee_per_element() {
    // The bit-set sweep keeps its read count and next bit as values within
    // a block and stores them back at the block's end and before a call:
    // reads here sit in the loop's first block, in both arms of a branch
    // (one arm calling `big`, too long to inline, whose own sweep reads
    // from the arena), in an inner loop of a constant 2 trips, and after
    // the join. A count or bit not stored back, or not reloaded after the
    // call or in the next block, gives two reads one bit or a read the
    // column of another, and rows with wrong columns.
    let src = with_big(
        "        double v = 0.0;
        if (u > 0.0) {
            v = x[i + 1] * big(x, i + 4) + x[i + 2];
        } else {
            v = x[i + 3] * u;
        }
        double w = 0.0;
        for (int k = 0; k < 2; k++) {
            w += x[i + 6 + k] * v;
        }
        y[2 * i] = u * w + x[i + 5];
        y[2 * i + 1] = v * x[i + 8];
",
    );
    assert!(takes_elements(&src));
    let j = jit(&src);
    // Signs alternate so both arms run, at different iterations.
    let x: Vec<f64> = (0..12)
        .map(|k| {
            if k % 2 == 0 {
                0.3 + 0.1 * k as f64
            } else {
                -0.2 - 0.05 * k as f64
            }
        })
        .collect();
    let csr = check(&j, "f", &[arr(&x), arr(&[0.0; 6])], 6, 12);
    let rows = pattern(&csr);
    // i = 0: x[0] > 0, so v reads x[1], x[4], x[5] (big), x[2].
    assert_eq!(rows[0], vec![0, 1, 2, 4, 5, 6, 7]);
    assert_eq!(rows[1], vec![1, 2, 4, 5, 8]);
    // i = 1: x[1] < 0, so v = x[4] * x[1].
    assert_eq!(rows[2], vec![1, 4, 6, 7, 8]);
    assert_eq!(rows[3], vec![1, 4, 9]);
}

#[test]
fn rows_gather_columns_from_every_input_around_an_empty_one() {
    // Each element's rows take columns from three input arrays, read out
    // of column order and some twice (ties), and the middle array is empty
    // in the second call: `S__egather` (out of line) moves a row's entries
    // along the plan's increasing columns from one array holding every
    // input's shadow, each entry at its input's offset, so a row missing
    // an input, or an input of no columns, must not shift the others.
    let src = "
[jacobian(J)]
[jacobian(S, sparse)]
void f(double[] a, double[] b, double[] c, int[] ix, out double[] y) {
    int nb = len(b);
    for (int i = 0; i < len(y) / 2; i++) {
        double u = c[ix[2 * i]] * a[ix[2 * i + 1]];
        double v = 1.0;
        if (nb > 0) { v = b[i % nb] * u; }
        y[2 * i] = u + v * c[(ix[2 * i] + 1) % len(c)];
        y[2 * i + 1] = sin(a[0]) * c[len(c) - 1 - i % len(c)];
    }
}";
    assert!(takes_elements(src));
    let m = adc::driver::frontend("t.ad", src, &adc::CompileOptions::default()).expect("compiles");
    assert!(m.find("S__egather").is_some() && m.find("S__eplan").is_some());
    let j = jit(src);
    let a = [0.5, -1.0, 2.0];
    let c = [1.5, -0.25, 0.75, 0.3];
    let ix: Vec<i64> = vec![0, 1, 3, 2, 3, 0, 2, 2, 1, 0, 0, 1];
    let p = ix.len() / 2;
    for b in [vec![0.9, -0.4], vec![]] {
        let args = [
            arr(&a),
            arr(&b),
            arr(&c),
            ArgValue::Array(ArrayValue::I64(ix.clone())),
            arr(&vec![0.0; 2 * p]),
        ];
        let nc = a.len() + b.len() + c.len();
        let csr = check(&j, "f", &args, 2 * p, nc);
        let rows = pattern(&csr);
        // i = 1: c[3] * a[2] (+ b[1] * u) + v * c[0]; sin(a[0]) * c[2].
        let cb = (a.len() + b.len()) as i64;
        let mut want = vec![2];
        if !b.is_empty() {
            want.push(4);
        }
        want.extend([cb, cb + 3]);
        assert_eq!(rows[2], want);
        assert_eq!(rows[3], vec![0, cb + 2]);
    }
}

#[test]
fn plans_of_reads_crossing_inputs_in_changing_orders() {
    // Each element reads b, then a twice (out of column order, the two
    // reads of a tied in some elements): consecutive elements keep the
    // plan (the same order and ties, other columns), or change the order,
    // the ties or both. A plan used again where the order changed gives
    // rows whose columns do not increase (`S__esame` not comparing the
    // columns' order: rows 11 and 15), a shadow element not zeroed after
    // its gather gives the next element's entries plus this one's.
    let src = "
[jacobian(J)]
[jacobian(S, sparse)]
void f(double[] a, double[] b, int[] ix, out double[] y) {
    for (int i = 0; i < len(y) / 2; i++) {
        double v = b[ix[3 * i + 1]];
        double u = a[ix[3 * i]];
        double t = a[ix[3 * i + 2]];
        y[2 * i] = u * v;
        y[2 * i + 1] = t * v * u;
    }
}";
    assert!(takes_elements(src));
    let j = jit(src);
    let ix: Vec<i64> = vec![
        0, 0, 0, 1, 2, 1, 2, 1, 0, 2, 2, 2, 0, 0, 1, 1, 1, 0, 0, 2, 2, 1, 0, 0,
    ];
    let p = ix.len() / 3;
    let args = [
        arr(&[0.5, -1.0, 2.0]),
        arr(&[0.3, 0.7, -0.2]),
        ArgValue::Array(ArrayValue::I64(ix)),
        arr(&vec![0.0; 2 * p]),
    ];
    same_as_coloring(&j, "f", &args, 2 * p, 6);
}

#[test]
fn out_arrays_a_loop_has_no_site_in_are_written_by_the_other() {
    // The first loop writes y through a callee, one row or the other by
    // branch; the second writes w alone (its shadow of y, and the first
    // loop's of w, are not zero-filled: no iteration writes them; zeroed,
    // they would be the same) from reads whose number alternates above
    // and below the bit sets' 52, so a plan made at one element must
    // survive an element of index sets. (Written in one loop, y and w
    // would take the coloring: their rows interleave.)
    let src = "
static void g(double[] x, int i, out double[] y) {
    double t = x[i] * x[i + 1];
    if (t > 0.0) { y[2 * i] = t * x[i + 2]; } else { y[2 * i + 1] = t - x[i + 3]; }
}
[jacobian(J)]
[jacobian(S, sparse)]
void f(double[] x, out double[] y, out double[] w) {
    for (int i = 0; i < len(y) / 2; i++) { g(x, i, y); }
    for (int i = 0; i < len(w); i++) {
        int m = i % 2 == 0 ? 3 : 60;
        double s = 0.0;
        for (int k = 0; k < m; k++) { s += x[(i + 3 * k) % len(x)] * x[(7 * k + i) % len(x)]; }
        w[i] = s * x[len(x) - 1 - i];
    }
}";
    assert!(takes_elements(src));
    let j = jit(src);
    let x: Vec<f64> = (0..70)
        .map(|k| {
            if k % 3 == 1 {
                -0.4 - 0.01 * k as f64
            } else {
                0.2 + 0.01 * k as f64
            }
        })
        .collect();
    let args = [arr(&x), arr(&[0.0; 12]), arr(&[0.0; 6])];
    let csr = check(&j, "f", &args, 18, 70);
    let rows = pattern(&csr);
    // x[0] * x[1] < 0: y[1] = x[0] * x[1] - x[3]; x[2] * x[3] > 0: y[4].
    assert!(rows[0].is_empty());
    assert_eq!(rows[1], vec![0, 1, 3]);
    assert_eq!(rows[4], vec![2, 3, 4]);
}

#[test]
fn rows_that_fit_and_rows_that_do_not_in_short_arrays() {
    // Rows of several entries from three inputs (the last one's loop has
    // no end test when the row fits in `vals` and `cols`): with either
    // array short by 1 to all entries, a row stops fitting somewhere, mid
    // row or at its start; its entries past the room must be counted, not
    // stored (a store past the end is an index error, not `jacobian needs
    // N entries`). With room to spare every row fits.
    let src = "
[jacobian(J)]
[jacobian(S, sparse)]
void f(double[] a, double[] b, double[] c, int[] ix, out double[] y) {
    for (int i = 0; i < len(y) / 2; i++) {
        double u = a[ix[2 * i]] * b[i % len(b)] + c[ix[2 * i + 1]];
        y[2 * i] = u * c[0] + sin(a[(ix[2 * i] + 1) % len(a)]);
        y[2 * i + 1] = u * b[(i + 1) % len(b)];
    }
}";
    assert!(takes_elements(src));
    let j = jit(src);
    let ix: Vec<i64> = vec![0, 1, 2, 0, 1, 2, 0, 0];
    let p = ix.len() / 2;
    let args = [
        arr(&[0.5, -1.0, 2.0]),
        arr(&[0.3, 0.7]),
        arr(&[1.5, -0.25, 0.75]),
        ArgValue::Array(ArrayValue::I64(ix)),
        arr(&vec![0.0; 2 * p]),
    ];
    same_as_coloring(&j, "f", &args, 2 * p, 8);
    let nnz = check(&j, "f", &args, 2 * p, 8).vals.len();
    assert!(nnz > 2 * p, "rows of several entries");
    crate::sparse_element_plans::dense_and_short(&j, "f", &args, 2 * p, 8);
}

#[test]
fn element_bodies_take_only_the_parameters_they_name() {
    // The first loop reads no input (rows of no entries, no shadow;
    // `a` sets its bound, before it); the second names `b` and `z` alone, so its body's sweep numbers `b`
    // as its first input: `b`'s first column must come from the arena's
    // first input slot (taken as `a`'s, every column would be off by
    // `len(a)`), and `a` (long) is neither passed nor given a shadow.
    let src = "
[jacobian(J)]
[jacobian(S, sparse)]
void f(double[] a, double[] b, int k, out double[] y, out double[] z) {
    int na = len(a);
    for (int i = 0; i < na - 37; i++) {
        y[i] = 2.0 + double(i);
    }
    for (int i = 0; i < len(z); i++) {
        z[i] = b[i % len(b)] * sin(b[(i + k) % len(b)]);
    }
}";
    assert!(takes_elements(src));
    let m = adc::driver::frontend("t.ad", src, &adc::CompileOptions::default()).expect("compiles");
    assert!(m.find("S__egather").is_some());
    let c = adc_frontend::compile_to_ir(src).expect("compiles");
    assert!(c.warnings.is_empty(), "{:?}", c.warnings);
    let j = jit(src);
    let a: Vec<f64> = (0..40).map(|i| 0.1 * i as f64).collect();
    let b = [0.5, -1.0, 2.0, 0.25];
    let args = [arr(&a), arr(&b), int(1), arr(&[0.0; 3]), arr(&[0.0; 5])];
    let csr = check(&j, "f", &args, 8, a.len() + b.len());
    let rows = pattern(&csr);
    let at = a.len() as i64;
    assert!(rows[..3].iter().all(|r| r.is_empty()));
    assert_eq!(rows[3], vec![at, at + 1]);
    assert_eq!(rows[7], vec![at, at + 1]);
    assert_eq!(rows[6], vec![at, at + 3]);
    same_as_coloring(&j, "f", &args, 8, a.len() + b.len());
}

#[test]
fn plans_keep_the_input_of_each_read() {
    // Each element reads one element of `a` or of `b` (a branch on `ix`),
    // its two rows the same one read: consecutive elements have the same
    // reads, masks and (one) column order, but not always the same input.
    // The plan gives each entry its input's offset in the one array of
    // shadows (input `b`'s lanes lie after both of `a`'s), so `S__esame`
    // must also compare where each input's columns start in the sorted
    // reads: used again for a read of the other input, the plan would take
    // lane 1 of `a`'s shadow for lane 0 of `b`'s (values zero, `b`'s
    // shadow left unzeroed for the next element).
    let src = "
[jacobian(J)]
[jacobian(S, sparse)]
void f(double[] a, double[] b, int[] ix, out double[] y) {
    for (int i = 0; i < len(y) / 2; i++) {
        double u = 0.0;
        if (ix[i] > 0) { u = a[ix[i] % len(a)]; } else { u = b[(i + 1) % len(b)]; }
        y[2 * i] = u * u;
        y[2 * i + 1] = sin(u) * 3.0;
    }
}";
    assert!(takes_elements(src));
    let j = jit(src);
    let ix: Vec<i64> = vec![1, 0, 0, 2, 1, 0, 3, 0];
    let p = ix.len();
    let args = [
        arr(&[0.5, -1.0, 2.0, 0.7]),
        arr(&[0.3, 0.9, -0.6]),
        ArgValue::Array(ArrayValue::I64(ix.clone())),
        arr(&vec![0.0; 2 * p]),
    ];
    let csr = check(&j, "f", &args, 2 * p, 7);
    let rows = pattern(&csr);
    for (i, &x) in ix.iter().enumerate() {
        let c = if x > 0 { x % 4 } else { 4 + (i as i64 + 1) % 3 };
        assert_eq!(rows[2 * i], vec![c]);
        assert_eq!(rows[2 * i + 1], vec![c]);
    }
}

/// An element's reverse run marks its input shadows cold (`cold(...)`), and
/// `early-loads` starts the first loads of the point's two shadow lanes
/// beside the checked read of the point, in the entry block, where the
/// source reads them after a branch and twice (`pts[po]` in both rows):
/// the Jacobian stays the dense one's.
#[test]
fn element_runs_load_their_shadows_early() {
    let src = "
static void proj(double[] cam, int co, double[] pt, int po, out double[] err, int eo) {
    double a = pt[po] - cam[co];
    double b = pt[po + 1] - cam[co + 1];
    if (a * b > 0.0) { a = a * b; } else { b = sin(b) * cam[co]; }
    err[eo] = a * pt[po];
    err[eo + 1] = b / (1.0 + pt[po] * a);
}
[jacobian(J)]
[jacobian(S, sparse)]
void obj(double[] cams, double[] pts, int[] obs, out double[] err) {
    for (int i = 0; i < len(obs) / 2; i++) {
        proj(cams, 2 * obs[2 * i], pts, 2 * obs[2 * i + 1], err, 2 * i);
    }
}";
    assert!(takes_elements(src));
    let mut m = adc::driver::frontend("t.ad", src, &adc::CompileOptions::default())
        .unwrap_or_else(|f| panic!("{f}"));
    adc::driver::run_stages(&mut m, adc::Stage::Final).expect("stages run");
    let run = m.find("S__e0b").expect("the element's reverse run");
    let run = m.func(run);
    assert_eq!(run.cold, vec![1, 3], "{run}");
    // The entry block loads both lanes of the point's shadow at pts[po].
    let entry = run.dfg.block(run.layout[0]);
    let early = (entry.insts.iter())
        .filter(|&&i| {
            matches!(run.dfg.inst(i), adc_ir::InstData::Load { array, checked: false, .. }
                if matches!(run.dfg.value_def(*array), adc_ir::ValueDef::Result(v, _)
                    if matches!(run.dfg.inst(v), adc_ir::InstData::ArrayView { array, .. }
                        if *array == run.dfg.block_params(run.layout[0])[3])))
        })
        .count();
    assert!(early >= 2, "{run}");
    let j = jit(src);
    let (n, m, p) = (3, 4, 9);
    let cams: Vec<f64> = (0..n * 2).map(|k| 0.3 - 0.15 * k as f64).collect();
    let pts: Vec<f64> = (0..m * 2).map(|k| 0.4 * k as f64 - 1.1).collect();
    let args = [
        arr(&cams),
        arr(&pts),
        ArgValue::Array(ArrayValue::I64(observations(n, m, p))),
        arr(&vec![0.0; 2 * p]),
    ];
    let csr = check(&j, "obj", &args, 2 * p, n * 2 + m * 2);
    // Against central differences, column by column.
    let err_at = |cams: &[f64], pts: &[f64]| {
        let mut a = args.to_vec();
        a[0] = arr(cams);
        a[1] = arr(pts);
        j.call("obj", &mut a).expect("obj runs");
        crate::support::arg_floats(&a[3])
    };
    let h = 1e-6;
    for c in 0..n * 2 + m * 2 {
        let (mut cp, mut pp) = (cams.clone(), pts.clone());
        let (mut cm, mut pm) = (cams.clone(), pts.clone());
        if c < n * 2 {
            cp[c] += h;
            cm[c] -= h;
        } else {
            pp[c - n * 2] += h;
            pm[c - n * 2] -= h;
        }
        let (up, dn) = (err_at(&cp, &pp), err_at(&cm, &pm));
        for r in 0..2 * p {
            let fd = (up[r] - dn[r]) / (2.0 * h);
            let (lo, hi) = (csr.rows[r] as usize, csr.rows[r + 1] as usize);
            let got = (lo..hi)
                .find(|&q| csr.cols[q] == c as i64)
                .map_or(0.0, |q| csr.vals[q]);
            assert!(
                (got - fd).abs() <= 1e-6 * (1.0 + fd.abs()),
                "entry ({r}, {c}): sparse {got}, central difference {fd}"
            );
        }
    }
}
