//! Sparse Jacobians (`[jacobian(NAME, sparse)]`,
//! docs/jacobians.md#sparse-jacobians): against the dense Jacobian of the
//! same function (pattern a superset of its nonzeros, values equal), the
//! rows' layout, `NAME_nnz`, the function's own result and writes, exact
//! patterns where the dependencies are known, and the errors.

use crate::support::{arg_floats, arr, d, jit};
use adc::{ArgValue, ArrayValue, CallError, Constant, JitModule};

pub(crate) fn int(k: i64) -> ArgValue {
    ArgValue::Scalar(Constant::I64(k))
}

pub(crate) fn ints(a: &ArgValue) -> Vec<i64> {
    match a {
        ArgValue::Array(ArrayValue::I64(v)) => v.clone(),
        other => panic!("not ints: {other:?}"),
    }
}

/// A sparse Jacobian in compressed sparse rows.
pub(crate) struct Csr {
    pub vals: Vec<f64>,
    pub cols: Vec<i64>,
    pub rows: Vec<i64>,
}

/// Calls `J` (dense, `nr * nc`), `S_nnz` and `S` (sparse) on `args`;
/// checks that `S` does what `F` does (result and writes), that `S_nnz`
/// writes what `F` writes (its sweep writes no `out` array), that the rows
/// are well formed, that `S_nnz` counts the entries, that every nonzero
/// of the dense Jacobian is an entry and that the entries equal it.
pub(crate) fn check(j: &JitModule, f: &str, args: &[ArgValue], nr: usize, nc: usize) -> Csr {
    check_within(j, f, args, (nr, nc), 1e-13)
}

/// [`check`], the entries equal to the dense ones within `tol` relative
/// (a `float` function's: each is rounded to `float` on its own way).
pub(crate) fn check_within(
    j: &JitModule,
    f: &str,
    args: &[ArgValue],
    (nr, nc): (usize, usize),
    tol: f64,
) -> Csr {
    let mut fa = args.to_vec();
    let fr = j.call(f, &mut fa).unwrap_or_else(|e| panic!("{f}: {e}"));
    let mut da = args.to_vec();
    da.push(arr(&vec![0.0; nr * nc]));
    j.call("J", &mut da).unwrap_or_else(|e| panic!("J: {e}"));
    let dense = arg_floats(&da[args.len()]);
    let mut na = args.to_vec();
    let nnz = j
        .call("S_nnz", &mut na)
        .unwrap_or_else(|e| panic!("S_nnz: {e}"));
    let Constant::I64(nnz) = nnz[0] else {
        panic!("S_nnz returns an int")
    };
    assert_eq!(&na[..], &fa[..], "S_nnz writes what {f} writes");
    let nnz = nnz as usize;
    let mut sa = args.to_vec();
    sa.push(arr(&vec![0.0; nnz]));
    sa.push(ArgValue::Array(ArrayValue::I64(vec![0; nnz])));
    sa.push(ArgValue::Array(ArrayValue::I64(vec![0; nr + 1])));
    let sr = j.call("S", &mut sa).unwrap_or_else(|e| panic!("S: {e}"));
    assert_eq!(sr, fr, "S returns what {f} returns");
    assert_eq!(&sa[..args.len()], &fa[..], "S writes what {f} writes");
    let k = args.len();
    let csr = Csr {
        vals: arg_floats(&sa[k]),
        cols: ints(&sa[k + 1]),
        rows: ints(&sa[k + 2]),
    };
    assert_eq!(csr.rows[0], 0);
    assert_eq!(csr.rows[nr] as usize, nnz, "the last row ends at NAME_nnz");
    let mut listed = vec![false; nr * nc];
    for r in 0..nr {
        let (lo, hi) = (csr.rows[r] as usize, csr.rows[r + 1] as usize);
        assert!(lo <= hi, "rows increase: {:?}", csr.rows);
        for q in lo..hi {
            let c = csr.cols[q];
            assert!((0..nc as i64).contains(&c), "column {c} of row {r}");
            if q > lo {
                assert!(
                    csr.cols[q - 1] < c,
                    "columns increase in row {r}: {:?}",
                    &csr.cols[lo..hi]
                );
            }
            let c = c as usize;
            listed[r * nc + c] = true;
            let want = dense[r * nc + c];
            let got = csr.vals[q];
            assert!(
                (got - want).abs() <= tol * (1.0 + want.abs()),
                "entry ({r}, {c}): sparse {got}, dense {want}"
            );
        }
    }
    for r in 0..nr {
        for c in 0..nc {
            let v = dense[r * nc + c];
            assert!(
                v == 0.0 || listed[r * nc + c],
                "nonzero ({r}, {c}) = {v} is missing"
            );
        }
    }
    csr
}

/// The entries' positions, row by row.
pub(crate) fn pattern(csr: &Csr) -> Vec<Vec<i64>> {
    csr.rows
        .windows(2)
        .map(|w| csr.cols[w[0] as usize..w[1] as usize].to_vec())
        .collect()
}

#[test]
fn tridiagonal_with_branches_has_exactly_its_pattern() {
    let j = jit("[jacobian(J)]
[jacobian(S, sparse)]
void tri(double[] x, out double[] y) {
    int n = len(x);
    for (int i = 0; i < n; i++) {
        double s = 2.0 * x[i];
        if (i > 0) { s -= x[i - 1]; }
        if (i < n - 1) { s = s * x[i + 1]; }
        y[i] = sin(s);
    }
}");
    let n = 23;
    let x: Vec<f64> = (0..n).map(|i| 0.1 * i as f64 - 1.0).collect();
    let csr = check(&j, "tri", &[arr(&x), arr(&vec![0.0; n])], n, n);
    for (r, cols) in pattern(&csr).iter().enumerate() {
        let want: Vec<i64> = (r.saturating_sub(1)..(r + 2).min(n))
            .map(|c| c as i64)
            .collect();
        assert_eq!(cols, &want, "row {r}");
    }
}

/// Scalars in and out, `inout` scalars and arrays (their value on entry
/// is a column, at exit a row), an `out` scalar, an `int` parameter, a
/// result; the pattern depends on the input through a branch.
const MIXED: &str = "
[jacobian(J)]
[jacobian(S, sparse)]
double g(double x, inout double y, double[] a, inout double[] u, out double s, int n) {
    double t = y;
    for (int i = 0; i < len(a); i += 2) t = t + sin(a[i] * x) * (i + 1.0);
    for (int i = 0; i < len(u); i++) {
        u[i] = u[i] * t + a[(i * 3) % len(a)] * y;
        if (u[i] > 1.0) u[i] = sqrt(u[i]);
        else u[i] = 0.5;
    }
    y = t * x;
    s = u[0] * n + y;
    return exp(-t * t * 0.01) + u[len(u) - 1];
}";

#[test]
fn scalars_inout_and_branches_against_the_dense_jacobian() {
    let j = jit(MIXED);
    let a: Vec<f64> = (0..13).map(|i| ((i * 7 % 5) as f64 - 2.0) * 0.3).collect();
    for u in [vec![0.5, -0.3, 1.2, 0.8], vec![3.0, 2.0, -1.0, 4.0]] {
        let args = [d(0.4), d(0.2), arr(&a), arr(&u), d(0.0), int(3)];
        let csr = check(&j, "g", &args, 7, 19);
        // Rows: the result, y, u (4), s. A `u[i]` set to 0.5 depends on
        // nothing: its row is empty; the others are not.
        let mut ga = args.to_vec();
        j.call("g", &mut ga).expect("g runs");
        let rows = pattern(&csr);
        for (i, v) in arg_floats(&ga[3]).iter().enumerate() {
            assert_eq!(rows[2 + i].is_empty(), *v == 0.5, "row of u[{i}] = {v}");
        }
        // Odd elements of `a` are read only as a[(i * 3) % 13], i < 4:
        // a[1], a[5], a[7], a[11] (columns 3, 7, 9, 13) reach no row.
        let used: Vec<i64> = rows.concat();
        for c in [3, 7, 9, 13] {
            assert!(!used.contains(&c), "column {c} is in no row");
        }
    }
}

#[test]
fn calls_that_stay_calls_and_local_arrays() {
    let j = jit("
double pw(double x, int k) {
    if (k == 0) return 1.0;
    return x * pw(x, k - 1);
}
void axpy(double a, double[] x, inout double[] y) {
    for (int i = 0; i < len(x); i++) y[i] += a * pw(x[i], 3);
}
[jacobian(J)]
[jacobian(S, sparse)]
void f(double[] x, double[] z, out double[] y, int[] idx) {
    double w[len(x)];
    for (int i = 0; i < len(x); i++) { w[i] = z[idx[i]]; y[i] = 0.0; }
    axpy(2.0, w, y);
    axpy(x[0], x, y);
}");
    let x = [0.5, -1.0, 2.0, 1.5, 0.25];
    let z = [1.0, 2.0, 3.0];
    let idx = ArgValue::Array(ArrayValue::I64(vec![2, 0, 0, 1, 2]));
    let args = [arr(&x), arr(&z), arr(&[0.0; 5]), idx];
    let csr = check(&j, "f", &args, 5, 8);
    // Row i: x[0], x[i], and z[idx[i]] (column 5 + idx[i]).
    let want: [&[i64]; 5] = [&[0, 7], &[0, 1, 5], &[0, 2, 5], &[0, 3, 6], &[0, 4, 7]];
    for (r, cols) in pattern(&csr).iter().enumerate() {
        assert_eq!(cols, want[r], "row {r}");
    }
}

#[test]
fn const_parameters_are_no_columns() {
    let j = jit("
[jacobian(J, Const, Dual, Dual)]
[jacobian(S, Const, Dual, Dual, sparse)]
double h(double x, double[] a, out double[] o) {
    for (int i = 0; i < len(o); i++) o[i] = a[i] * a[i] * x;
    return a[0] * x;
}");
    let csr = check(&j, "h", &[d(3.0), arr(&[1.0, 2.0]), arr(&[0.0, 0.0])], 3, 2);
    assert_eq!(pattern(&csr), [vec![0], vec![0], vec![1]]);
    assert_eq!(csr.vals, [3.0, 6.0, 12.0]);
}

#[test]
fn const_inout_arguments_are_written_once() {
    // `c` is written by each run of `F`'s code (the sweep, each chunk of
    // the compressed evaluation): every run starts from the argument as it
    // came, so `S` and `S_nnz` add 1 once, as `F` does (twice, 3, before).
    let j = jit("[jacobian(J, Dual, Dual, Const)]
[jacobian(S, Dual, Dual, Const, sparse)]
void f(double[] x, out double[] y, inout double[] c) {
    c[0] = c[0] + 1.0;
    for (int i = 0; i < len(y); i++) {
        double s = 0.0;
        for (int k = 0; k < 6; k++) s += x[i + k] * x[i + k];
        y[i] = s * c[0];
    }
}");
    let x: Vec<f64> = (0..12).map(|i| 0.1 * i as f64).collect();
    let csr = check(&j, "f", &[arr(&x), arr(&[0.0; 7]), arr(&[1.0])], 7, 12);
    assert_eq!(csr.vals[0], 2.0 * 2.0 * x[0], "y = 2 sum x^2");
}

#[test]
fn many_colors_take_several_runs() {
    // Row i depends on columns i .. i + 9: at least 10 colors, so the
    // compressed evaluation runs in several chunks of colors; and its
    // flat sets (ten unions a row) outgrow the first arena.
    let j = jit("[jacobian(J)]
[jacobian(S, sparse)]
void band(double[] x, out double[] y) {
    for (int i = 0; i < len(y); i++) {
        double s = 0.0;
        for (int k = 0; k < 10; k++) s += cos(x[i + k] * (k + 1.0));
        y[i] = s * x[i];
    }
}");
    let x: Vec<f64> = (0..30).map(|i| 0.05 * i as f64).collect();
    let csr = check(&j, "band", &[arr(&x), arr(&[0.0; 21])], 21, 30);
    assert_eq!(csr.vals.len(), 21 * 10);
}

#[test]
fn prefix_sums_share_union_nodes() {
    // Every prefix sum's set is new: the first ones flat, the later ones
    // union nodes on the earlier ones, each row flattened on its own.
    let j = jit("[jacobian(J)]
[jacobian(S, sparse)]
void prefix(double[] x, out double[] y) {
    double s = 0.0;
    for (int i = 0; i < len(x); i++) { s += x[i] * x[i]; y[i] = s; }
}");
    let n = 120;
    let x: Vec<f64> = (0..n).map(|i| 1.0 + i as f64).collect();
    let csr = check(&j, "prefix", &[arr(&x), arr(&vec![0.0; n])], n, n);
    assert_eq!(csr.vals.len(), n * (n + 1) / 2);
}

#[test]
fn a_sum_over_many_inputs_is_linear() {
    // The running sum's set outgrows the flat sets: union nodes, flattened
    // per row (the total of every x, and x[i] beside it). The sets held
    // flat would take n^2 / 2 words, 5 * 10^7 here.
    let j = jit("[jacobian(J)]
[jacobian(S, sparse)]
void total(double[] x, out double[] y) {
    double s = 0.0;
    for (int i = 0; i < len(x); i++) s += x[i] * x[i];
    for (int i = 0; i < len(y); i++) y[i] = s * x[i];
}");
    let n = 10_000;
    let x: Vec<f64> = (0..n).map(|i| 1.0 + 1e-4 * i as f64).collect();
    let mut na = [arr(&x), arr(&[0.0; 3])];
    let nnz = j.call("S_nnz", &mut na).expect("S_nnz");
    assert_eq!(nnz[0], Constant::I64(3 * n as i64));
    let mut sa = [
        arr(&x),
        arr(&[0.0; 3]),
        arr(&vec![0.0; 3 * n]),
        ArgValue::Array(ArrayValue::I64(vec![0; 3 * n])),
        ArgValue::Array(ArrayValue::I64(vec![0; 4])),
    ];
    j.call("S", &mut sa).expect("S");
    assert_eq!(ints(&sa[4]), [0, n as i64, 2 * n as i64, 3 * n as i64]);
    let cols = ints(&sa[3]);
    let vals = arg_floats(&sa[2]);
    let s: f64 = x.iter().map(|v| v * v).sum();
    for r in 0..3 {
        for c in 0..n {
            let q = r * n + c;
            assert_eq!(cols[q], c as i64);
            let want = 2.0 * x[c] * x[r] + if c == r { s } else { 0.0 };
            assert!((vals[q] - want).abs() <= 1e-9 * want.abs(), "({r}, {c})");
        }
    }
    // Small: against the dense Jacobian.
    check(&j, "total", &[arr(&x[..50]), arr(&[0.0; 7])], 7, 50);
}

#[test]
fn shared_union_nodes_are_walked_once() {
    // Each step joins two sets built from the last one: walked without
    // marks, the last set's nodes would take 2^60 steps.
    let j = jit("[jacobian(J)]
[jacobian(S, sparse)]
void twice(double[] x, out double[] y) {
    double s = 0.0;
    for (int i = 0; i < 40; i++) s += x[i];
    for (int k = 0; k < 60; k++) {
        double u = s + x[k % 50];
        double v = s * x[(k + 7) % 50] + x[49 - k % 50];
        s = 0.5 * (u + v);
        if (k % 12 == 0) y[k / 12] = s;
    }
    y[5] = x[3] - x[1];
}");
    let x: Vec<f64> = (0..50).map(|i| 0.9 + 0.01 * i as f64).collect();
    let csr = check(&j, "twice", &[arr(&x), arr(&[0.0; 6])], 6, 50);
    assert_eq!(&csr.cols[csr.rows[5] as usize..], &[1, 3]);
}

#[test]
fn an_arrow_is_colored_greedily_and_a_band_by_span() {
    // Row i of `arrow` reads x[0] and x[i]: its span grows to n, two
    // entries a row, so the greedy coloring (2 colors) runs; `band`'s
    // rows span 3 columns: colors i mod 3.
    let j = jit("[jacobian(J)]
[jacobian(S, sparse)]
void arrow(double[] x, out double[] y) {
    for (int i = 1; i < len(x); i++) y[i - 1] = x[i] * x[0] + sin(x[i]);
}");
    let x: Vec<f64> = (0..40).map(|i| 0.3 + 0.05 * i as f64).collect();
    let csr = check(&j, "arrow", &[arr(&x), arr(&[0.0; 39])], 39, 40);
    assert_eq!(&csr.cols[..4], &[0, 1, 0, 2]);
    let jb = jit("[jacobian(J)]
[jacobian(S, sparse)]
void band(double[] x, out double[] y) {
    for (int i = 0; i + 2 < len(x); i++) y[i] = x[i] * x[i + 2] - x[i + 1];
}");
    let csr = check(&jb, "band", &[arr(&x), arr(&[0.0; 38])], 38, 40);
    assert_eq!(csr.vals.len(), 3 * 38);
}

/// Arrays too short for the Jacobian are the runtime error `jacobian
/// needs N entries` (N what the short array must hold: the entries for
/// `vals` and `cols`, one more than the rows for `rows`), on both paths:
/// one iteration at a time (`sq`, each row its own) and through the
/// coloring (`run`, a running sum); in the JIT and in the IR interpreter.
#[test]
fn short_arrays_are_runtime_errors() {
    const SRC: &str = "[jacobian(S, sparse)]
void sq(double[] x, out double[] y) { for (int i = 0; i < len(x); i++) y[i] = x[i] * x[i]; }
[jacobian(R, sparse)]
void run(double[] x, out double[] y) {
    double s = 0.0;
    for (int i = 0; i < len(x); i++) { s += x[i]; y[i] = s * x[i]; }
}";
    let j = jit(SRC);
    let mut module = adc::driver::frontend("t.ad", SRC, &adc::CompileOptions::default())
        .unwrap_or_else(|f| panic!("{f}"));
    adc::driver::run_stages(&mut module, adc::driver::Stage::Final)
        .unwrap_or_else(|e| panic!("{e:?}"));
    let args = |nv: usize, nc: usize, nr: usize| {
        [
            arr(&[1.0, 2.0, 3.0]),
            arr(&[0.0; 3]),
            arr(&vec![0.0; nv]),
            ArgValue::Array(ArrayValue::I64(vec![0; nc])),
            ArgValue::Array(ArrayValue::I64(vec![0; nr])),
        ]
    };
    for (name, nnz) in [("S", 3), ("R", 6)] {
        let mut ok = args(nnz, nnz, 4);
        j.call(name, &mut ok).expect("long enough");
        let cases = [
            (args(nnz - 1, nnz, 4), nnz),
            (args(nnz, nnz - 1, 4), nnz),
            (args(0, 0, 4), nnz),
            (args(nnz, nnz, 3), 4),
        ];
        for (mut a, needed) in cases {
            let want = format!("jacobian needs {needed} entries");
            match j.call(name, &mut a.clone()) {
                Err(CallError::Runtime(m)) => assert!(m.starts_with(&want), "{name}: {m}"),
                other => panic!("{name}, a short array: {other:?}"),
            }
            let mut iargs: Vec<_> = a.iter_mut().map(interp_arg).collect();
            match adc_ir::interp::call(&module, name, &mut iargs, 1 << 24) {
                Err(adc_ir::interp::InterpError::Runtime { what, .. }) => {
                    assert_eq!(what, want, "{name} (interpreter)")
                }
                other => panic!("{name} (interpreter), a short array: {other:?}"),
            }
        }
    }
}

pub(crate) fn interp_arg(a: &mut ArgValue) -> adc_ir::interp::InterpArg {
    match a {
        ArgValue::Scalar(c) => adc_ir::interp::InterpArg::Scalar(*c),
        ArgValue::Array(ArrayValue::F64(v)) => {
            adc_ir::interp::InterpArg::Array(v.iter().map(|x| Constant::F64(*x)).collect())
        }
        ArgValue::Array(ArrayValue::I64(v)) => {
            adc_ir::interp::InterpArg::Array(v.iter().map(|x| Constant::I64(*x)).collect())
        }
        other => panic!("no interpreter argument for {other:?}"),
    }
}

#[test]
fn sparse_needs_a_float_output() {
    for src in [
        "[jacobian(S, sparse)]\nint f(double x) { return int(x); }",
        "[jacobian(S, sparse)]\nvoid f(double x, double[] y) { x = y[0]; }",
        "[jacobian(S, Dual, Const, sparse)]\nvoid f(double x, out double[] y) { y[0] = x; }",
    ] {
        let e = adc::compile_jit("t.ad", src, &adc::CompileOptions::default())
            .err()
            .unwrap_or_else(|| panic!("{src} compiles"));
        assert_eq!(e.diagnostics[0].code, "E0309", "{src}: {e}");
        assert!(e.to_string().contains("no floating output"), "{e}");
    }
    // A `void` function with an `out` float array has rows.
    let j = jit("[jacobian(S, sparse)]\nvoid f(double x, out double[] y) { y[0] = x; }");
    let mut a = [
        d(2.0),
        arr(&[0.0]),
        arr(&[0.0]),
        ArgValue::Array(ArrayValue::I64(vec![0])),
        ArgValue::Array(ArrayValue::I64(vec![0; 2])),
    ];
    j.call("S", &mut a).expect("runs");
    assert_eq!(arg_floats(&a[2]), [1.0]);
}

#[test]
fn the_sweep_skips_work_only_the_outputs_need() {
    // `exp(x[i])` only feeds `y`, which the sweep does not write (its
    // callers get `y` from the compressed evaluation or from `F`): it has
    // no `exp`; the compressed evaluation has.
    let src = "[jacobian(S, sparse)]
void bratu(double[] x, out double[] y) {
    for (int i = 1; i + 1 < len(x); i++) y[i] = x[i - 1] - 2.0 * x[i] + x[i + 1] + exp(x[i]);
}";
    let mut m = adc::driver::frontend("t.ad", src, &adc::CompileOptions::default())
        .unwrap_or_else(|f| panic!("{f}"));
    adc::driver::run_stages(&mut m, adc::Stage::Final).expect("stages run");
    let exps = |name: &str| {
        let f = m.func(m.find(name).unwrap_or_else(|| panic!("no {name}")));
        f.layout
            .iter()
            .flat_map(|&b| f.dfg.block(b).insts.iter())
            .filter(|&&i| matches!(f.dfg.inst(i), adc_ir::InstData::Math { .. }))
            .count()
    };
    assert_eq!(exps("S__pattern"), 0, "{m}");
    assert!(exps("S__columns") > 0, "{m}");
}

#[test]
fn a_set_another_value_holds_is_not_grown_in_place() {
    // `p`'s set {0, 1} is the newest in the arena when `(p + x[k]) + x[2]`
    // unites: with k = 0, `p + x[k]` returns `p`'s set itself, so the
    // second union, whose first operand nothing else uses, must not merge
    // x[2] into that set in place: row 0 stays {0, 1}.
    let j = jit("[jacobian(J, Dual, Dual, Const)]
[jacobian(S, Dual, Dual, Const, sparse)]
void f(double[] x, out double[] y, int k) {
    double p = x[0] * x[1];
    y[0] = p;
    y[1] = (p + x[k]) + x[2];
    for (int i = 2; i < len(y); i++) y[i] = (x[i - 1] + x[i]) + x[i + 1];
}");
    let x = [1.0, 2.0, 3.0, 4.0, 5.0];
    let csr = check(&j, "f", &[arr(&x), arr(&[0.0; 4]), int(0)], 4, 5);
    assert_eq!(
        pattern(&csr),
        [vec![0, 1], vec![0, 1, 2], vec![1, 2, 3], vec![2, 3, 4]]
    );
}

#[test]
fn a_singleton_above_a_growing_set_is_appended() {
    // `__adc_set_union` appends a singleton above the last index of the
    // set it grows in place (x[i + 3], then x[i + 5]); one below it
    // (x[i + 2]) or already in it (x[i]) merges as before; past 32 indices
    // (row 0's running sum) the union makes nodes. The sets outgrow the
    // first arena (4 words a row): the sweep runs again.
    let j = jit("[jacobian(J)]
[jacobian(S, sparse)]
void f(double[] x, out double[] y) {
    double s = 0.0;
    for (int k = 0; k < len(x); k++) s = s + x[k];
    y[0] = s;
    for (int i = 1; i + 5 < len(x); i++) {
        y[i] = ((((x[i] + x[i + 1]) + x[i + 3]) + x[i + 5]) + x[i + 2]) + x[i];
    }
}");
    let n = 40;
    let x: Vec<f64> = (0..n).map(|i| 0.5 + i as f64).collect();
    let csr = check(&j, "f", &[arr(&x), arr(&vec![0.0; n])], n, n);
    let rows = pattern(&csr);
    assert_eq!(rows[0], (0..n as i64).collect::<Vec<_>>());
    for (i, row) in rows.iter().enumerate().take(n - 5).skip(1) {
        let i = i as i64;
        assert_eq!(row, &vec![i, i + 1, i + 2, i + 3, i + 5], "row {i}");
    }
    assert!(rows[n - 5..].iter().all(|r| r.is_empty()));
}

#[test]
fn a_callee_sweep_returns_no_set_for_a_discarded_result() {
    // `sets::prune`: the sweep of `total` (a call that stays a call) would
    // return the set of its sum, one union per term; `f` discards it, so
    // the sweep returns the empty set.
    let src = "[checkpoint]
double total(double[] x) {
    double s = 0.0;
    for (int i = 0; i < len(x); i++) { s += x[i] * x[i]; }
    return s;
}
[jacobian(J, sparse)]
void f(double[] x, out double[] y) {
    total(x);
    for (int i = 0; i < len(x); i++) { y[i] = 2.0 * x[i]; }
}";
    let mut m = adc::driver::frontend("t.ad", src, &adc::CompileOptions::default())
        .unwrap_or_else(|f| panic!("{f}"));
    adc::driver::run_stages(&mut m, adc::Stage::Transpose).expect("stages run");
    let sweep = m
        .funcs
        .iter()
        .find(|f| f.name.starts_with("__adc_fwd") && f.name.ends_with("s_total"))
        .unwrap_or_else(|| panic!("no sweep of `total` in\n{m}"));
    let mut returns = 0;
    for &b in &sweep.layout {
        for &i in &sweep.dfg.block(b).insts {
            if let adc_ir::InstData::Return { args } = sweep.dfg.inst(i) {
                returns += 1;
                let last = *args.last().expect("a handle is returned");
                let zero = matches!(
                    sweep.dfg.value_def(last),
                    adc_ir::ValueDef::Result(d, _)
                        if matches!(sweep.dfg.inst(d), adc_ir::InstData::Const { .. })
                );
                assert!(zero, "the result's set is returned:\n{m}");
            }
        }
    }
    assert!(returns > 0, "no return in\n{m}");
}
