//! Sparse Jacobians by rows (docs/jacobians.md#sparse-jacobians): the
//! automatic choice between coloring the columns (forward runs) and the
//! rows (reverse runs), and `sparse` with `forward` or `reverse`
//! forcing one. Each variant against the dense Jacobian (`check`), the
//! arrow against central differences, the IR interpreter against the
//! JIT, and which side the choice takes (by the interpreter's fuel: the
//! side not taken would need many more runs). The functions here are
//! not partially separable (a `double` declared outside the loops), so
//! the automatic choice colors (docs/jacobians.md#element-jacobians).

use crate::sparse_jacobian::{check, int, interp_arg, ints, pattern, Csr};
use crate::support::{arg_floats, arr, d, jit};
use adc::{ArgValue, ArrayValue, Constant};
use adc_ir::interp::{self, InterpArg, InterpError};

/// The options after `sparse` of the three variants of `S`.
const VARIANTS: [&str; 3] = ["", ", reverse", ", forward"];

/// `src`, whose `{S}` stands for the attributes: the dense `J` and the
/// sparse `S` with the options `opt`.
fn with(src: &str, opt: &str) -> String {
    src.replace("{S}", &format!("[jacobian(J)]\n[jacobian(S, sparse{opt})]"))
}

/// Each variant against the dense Jacobian, all three with one result.
fn check_all(src: &str, f: &str, args: &[ArgValue], nr: usize, nc: usize) -> Csr {
    let mut first: Option<Csr> = None;
    for opt in VARIANTS {
        let j = jit(&with(src, opt));
        let csr = check(&j, f, args, nr, nc);
        interp_agrees(&with(src, opt), args, nr, &csr);
        if let Some(c) = &first {
            assert_eq!(
                (&c.cols, &c.rows),
                (&csr.cols, &csr.rows),
                "pattern of `sparse{opt}`"
            );
            for (a, b) in c.vals.iter().zip(&csr.vals) {
                assert!(
                    (a - b).abs() <= 1e-13 * (1.0 + a.abs()),
                    "`sparse{opt}`: {a} vs {b}"
                );
            }
        } else {
            first = Some(csr);
        }
    }
    first.expect("three variants")
}

/// The arguments of `S`: `args`, then room for `nnz` entries and `nr` rows.
fn sparse_args(args: &[ArgValue], nnz: usize, nr: usize) -> Vec<ArgValue> {
    let mut a = args.to_vec();
    a.push(arr(&vec![0.0; nnz]));
    a.push(ArgValue::Array(ArrayValue::I64(vec![0; nnz])));
    a.push(ArgValue::Array(ArrayValue::I64(vec![0; nr + 1])));
    a
}

fn module(src: &str) -> adc_ir::Module {
    let mut m = adc::driver::frontend("t.ad", src, &adc::CompileOptions::default())
        .unwrap_or_else(|f| panic!("{f}"));
    adc::driver::run_stages(&mut m, adc::driver::Stage::Final).unwrap_or_else(|e| panic!("{e:?}"));
    m
}

/// `S` in the IR interpreter: the same rows as the JIT's.
fn interp_agrees(src: &str, args: &[ArgValue], nr: usize, csr: &Csr) {
    let m = module(src);
    let mut a = sparse_args(args, csr.vals.len(), nr);
    let mut ia: Vec<InterpArg> = a.iter_mut().map(interp_arg).collect();
    interp::call(&m, "S", &mut ia, 1 << 26).unwrap_or_else(|e| panic!("S (interpreter): {e:?}"));
    let k = args.len();
    let num = |c: &Constant| match c {
        Constant::F64(v) => *v,
        Constant::I64(v) => *v as f64,
        other => panic!("{other:?}"),
    };
    let got = |i: usize| match &ia[i] {
        InterpArg::Array(v) => v.iter().map(num).collect::<Vec<f64>>(),
        other => panic!("{other:?}"),
    };
    let as_f = |v: &[i64]| v.iter().map(|&x| x as f64).collect::<Vec<f64>>();
    assert_eq!(got(k + 1), as_f(&csr.cols), "interpreter's columns");
    assert_eq!(got(k + 2), as_f(&csr.rows), "interpreter's rows");
    for (a, b) in got(k).iter().zip(&csr.vals) {
        assert!(
            (a - b).abs() <= 1e-13 * (1.0 + a.abs()),
            "interpreter {a}, JIT {b}"
        );
    }
}

/// The least fuel `S` runs on in the interpreter, within 1/64.
fn fuel(m: &adc_ir::Module, args: &[ArgValue], nnz: usize, nr: usize) -> u64 {
    let runs = |f: u64| {
        let mut a = sparse_args(args, nnz, nr);
        let mut ia: Vec<InterpArg> = a.iter_mut().map(interp_arg).collect();
        match interp::call(m, "S", &mut ia, f) {
            Ok(_) => true,
            Err(InterpError::OutOfFuel) => false,
            Err(e) => panic!("S (interpreter): {e:?}"),
        }
    };
    let mut hi = 1 << 12;
    while !runs(hi) {
        assert!(hi < 1 << 34, "S runs out of fuel");
        hi *= 2;
    }
    let mut lo = hi / 2;
    while hi - lo > hi / 64 {
        let mid = lo + (hi - lo) / 2;
        if runs(mid) {
            hi = mid;
        } else {
            lo = mid;
        }
    }
    hi
}

/// Whether the automatic choice runs as the variant `opt` does: it
/// needs the fuel of `opt` and of its choosing (a pass over the
/// entries: a fifth more at most here), less than the variant `other`,
/// which needs `more` times the fuel of `opt`.
fn chooses(
    src: &str,
    args: &[ArgValue],
    (nnz, nr): (usize, usize),
    opt: &str,
    other: &str,
    more: f64,
) {
    let taken = fuel(&module(&with(src, opt)), args, nnz, nr) as f64;
    let auto = fuel(&module(&with(src, "")), args, nnz, nr) as f64;
    let not = fuel(&module(&with(src, other)), args, nnz, nr) as f64;
    let says = format!("automatic {auto}, `sparse{opt}` {taken}, `sparse{other}` {not}");
    assert!(auto <= 1.2 * taken && auto < not, "{says}");
    assert!(not > more * taken, "{says}");
}

/// Rows 0 .. n-2 are x[i]^2, the last the sum of every x: one dense row
/// (n column colors), two row colors.
const ARROW: &str = "{S}
void arrow(double[] x, out double[] y) {
    int n = len(x);
    double s = 0.0;
    for (int i = 0; i < n - 1; i++) { y[i] = x[i] * x[i]; }
    for (int i = 0; i < n; i++) { s += x[i]; }
    y[n - 1] = s;
}";

#[test]
fn an_arrow_goes_by_rows() {
    let n = 256;
    let x: Vec<f64> = (0..n).map(|i| 0.5 + 0.1 * i as f64).collect();
    let args = [arr(&x), arr(&vec![0.0; n])];
    let csr = check_all(ARROW, "arrow", &args, n, n);
    assert_eq!(csr.vals.len(), 2 * n - 1);
    // Central differences of `arrow`.
    let j = jit(&with(ARROW, ", reverse"));
    let h = 1e-6;
    for (r, cols) in pattern(&csr).iter().enumerate() {
        for (q, &c) in cols.iter().enumerate() {
            let at = |e: f64| {
                let mut xs = x.clone();
                xs[c as usize] += e;
                let mut a = [arr(&xs), arr(&vec![0.0; n])];
                j.call("arrow", &mut a).expect("arrow runs");
                arg_floats(&a[1])[r]
            };
            let fd = (at(h) - at(-h)) / (2.0 * h);
            let got = csr.vals[csr.rows[r] as usize + q];
            assert!(
                (got - fd).abs() <= 1e-6 * (1.0 + fd.abs()),
                "({r}, {c}): {got}, fd {fd}"
            );
        }
    }
    chooses(ARROW, &args, (2 * n - 1, n), ", reverse", ", forward", 2.0);
}

#[test]
fn a_dense_result_is_a_row_of_its_own() {
    // The result (row 0) reads every x: by rows, its seed is lane
    // color(0)'s.
    let src = "{S}
double f(double[] x, out double[] y) {
    double s = 0.0;
    for (int i = 0; i < len(x); i++) { y[i] = sin(x[i]); s += x[i] * x[i]; }
    return s;
}";
    let n = 256;
    let x: Vec<f64> = (0..n).map(|i| 0.1 * i as f64 - 2.0).collect();
    let args = [arr(&x), arr(&vec![0.0; n])];
    check_all(src, "f", &args, n + 1, n);
    chooses(src, &args, (2 * n, n + 1), ", reverse", ", forward", 2.0);
}

#[test]
fn a_dense_column_goes_by_columns() {
    let src = "{S}
void col(double[] x, out double[] y) {
    double c = sin(x[0]);
    for (int i = 0; i < len(y); i++) { y[i] = c * x[i + 1]; }
}";
    let n = 256;
    let x: Vec<f64> = (0..=n).map(|i| 0.3 + 0.01 * i as f64).collect();
    let args = [arr(&x), arr(&vec![0.0; n])];
    let csr = check_all(src, "col", &args, n, n + 1);
    assert_eq!(csr.vals.len(), 2 * n);
    chooses(src, &args, (2 * n, n), ", forward", ", reverse", 2.0);
}

#[test]
fn ties_go_by_columns_and_agree() {
    // Tridiagonal: three colors either way, one run each; and a pattern
    // with as many runs either way (5 column colors, 5 row colors).
    let tri = "{S}
void tri(double[] x, out double[] y) {
    int n = len(x);
    double two = 2.0;
    for (int i = 0; i < n; i++) {
        double s = two * x[i];
        if (i > 0) { s -= x[i - 1]; }
        if (i < n - 1) { s = s * x[i + 1]; }
        y[i] = sin(s);
    }
}";
    let n = 30;
    let x: Vec<f64> = (0..n).map(|i| 0.05 * i as f64).collect();
    let args = [arr(&x), arr(&vec![0.0; n])];
    check_all(tri, "tri", &args, n, n);
    chooses(tri, &args, (3 * n - 2, n), ", forward", ", reverse", 1.1);
    let penta = "{S}
void penta(double[] x, out double[] y) {
    for (int i = 2; i + 2 < len(x); i++) {
        y[i - 2] = x[i - 2] * x[i - 1] + x[i] * x[i + 1] * x[i + 2];
    }
}";
    let args = [arr(&x), arr(&vec![0.0; n - 4])];
    check_all(penta, "penta", &args, n - 4, n);
}

/// A result, `inout` scalars and arrays, an `out` scalar, an `int`
/// parameter, a call that stays a call (recursion), branches on the
/// input, an early `return`; a dense row (`s`) and a dense result.
const MIXED: &str = "
double pw(double x, int k) {
    if (k == 0) return 1.0;
    return x * pw(x, k - 1);
}
{S}
double g(double x, inout double y, double[] a, inout double[] u, out double s, int n, inout int calls) {
    calls += 1;
    double t = y;
    for (int i = 0; i < len(a); i += 2) t = t + sin(a[i] * x) * (i + 1.0);
    for (int i = 0; i < len(u); i++) {
        u[i] = u[i] * pw(t, 2) + a[(i * 3) % len(a)] * y;
        if (u[i] > 1.0) u[i] = sqrt(u[i]);
        else u[i] = 0.5;
    }
    s = 0.0;
    for (int i = 0; i < len(a); i++) s += a[i] * a[i];
    if (x > 10.0) return s;
    y = t * x;
    return exp(-t * t * 0.01) + u[len(u) - 1] + s;
}";

#[test]
fn calls_loops_branches_and_inout_arguments() {
    let a: Vec<f64> = (0..13).map(|i| ((i * 7 % 5) as f64 - 2.0) * 0.3).collect();
    for (x, u) in [
        (0.4, vec![0.5, -0.3, 1.2, 0.8]),
        (11.0, vec![3.0, 2.0, -1.0, 4.0]),
    ] {
        let args = [d(x), d(0.2), arr(&a), arr(&u), d(0.0), int(3), int(5)];
        // `check` compares the writes: `calls` is 6 after one call.
        check_all(MIXED, "g", &args, 7, 19);
    }
}

/// A `void` function with an early `return;` (its reverse derivative
/// goes through a copy returning `0.0`) and an `inout` counter.
#[test]
fn void_functions_with_early_returns() {
    let src = "{S}
void v(double[] x, out double[] y, inout int calls) {
    calls += 1;
    y[0] = 0.0;
    for (int i = 0; i < len(x); i++) y[0] += x[i];
    if (x[0] > 5.0) return;
    for (int i = 1; i < len(y); i++) {
        if (i % 3 == 0) { y[i] = x[i] * y[0]; } else { y[i] = cos(x[i]); }
    }
}";
    for x0 in [0.5, 6.0] {
        let mut x: Vec<f64> = (0..20).map(|i| 0.1 * i as f64).collect();
        x[0] = x0;
        let args = [arr(&x), arr(&vec![0.0; 20]), int(0)];
        check_all(src, "v", &args, 20, 20);
    }
}

#[test]
fn options_that_mean_nothing_are_errors() {
    for (src, says) in [
        ("[jacobian(S, sparse, reverse)]\nint f(double[] x, out double[] y) { y[0] = x[0]; return 1; }", "`double` result or none"),
        ("[jacobian(S, forward, sparse, reverse)]\nvoid f(double[] x, out double[] y) { y[0] = x[0]; }", "not both"),
        ("[jacobian(S, sparse, reverse, forward)]\nvoid f(double[] x, out double[] y) { y[0] = x[0]; }", "not both"),
        ("[jacobian(S, sparse, sparse)]\nvoid f(double[] x, out double[] y) { y[0] = x[0]; }", "at most once"),
        ("[jacobian(S, reverse, reverse)]\ndouble f(double[] x) { return x[0]; }", "at most once"),
    ] {
        let e = adc::compile_jit("t.ad", src, &adc::CompileOptions::default())
            .err()
            .unwrap_or_else(|| panic!("{src} compiles"));
        assert_eq!(e.diagnostics[0].code, "E0309", "{src}: {e}");
        assert!(e.to_string().contains(says), "{src}: {e}");
    }
    // An `int` result: by columns, automatically.
    let j = jit("[jacobian(S, sparse)]\nint f(double[] x, out double[] y) { y[0] = x[0] * x[1]; return 7; }");
    let mut a = sparse_args(&[arr(&[2.0, 3.0]), arr(&[0.0])], 2, 1);
    assert_eq!(j.call("S", &mut a).expect("runs"), [Constant::I64(7)]);
    assert_eq!(arg_floats(&a[2]), [3.0, 2.0]);
    assert_eq!(ints(&a[3]), [0, 1]);
}
