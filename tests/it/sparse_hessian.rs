//! Sparse Hessians (`[hessian(NAME, sparse)]`,
//! docs/jacobians.md#sparse-hessians): the lower triangle of the dense
//! Hessian of the same function (pattern a superset of its nonzeros,
//! values equal), the rows' layout, `NAME_nnz`, the function's own result
//! and writes, exact patterns (a band, through calls, per branch taken),
//! checkpointed loops and recursion, and the errors.

use crate::support::{arg_floats, arr, d, jit};
use adc::{ArgValue, ArrayValue, Constant, JitModule};

fn ints(a: &ArgValue) -> Vec<i64> {
    match a {
        ArgValue::Array(ArrayValue::I64(v)) => v.clone(),
        other => panic!("not ints: {other:?}"),
    }
}

/// Calls `H` (dense, `n * n`), `S_nnz` and `S` (sparse) on `args`;
/// checks that `S` and `S_nnz` do what `F` does, that the rows are well
/// formed and hold only the lower triangle, that `S_nnz` counts the
/// entries, that every nonzero of the dense lower triangle is an entry
/// and that the entries equal it. Returns the pattern, row by row.
pub(crate) fn check(j: &JitModule, f: &str, args: &[ArgValue], n: usize) -> Vec<Vec<i64>> {
    check_within(j, f, args, n, 1e-12)
}

/// [`check`], the entries equal to the dense ones within `tol` relative
/// (a `float` function's: each is rounded to `float` on its own way).
pub(crate) fn check_within(
    j: &JitModule,
    f: &str,
    args: &[ArgValue],
    n: usize,
    tol: f64,
) -> Vec<Vec<i64>> {
    let mut fa = args.to_vec();
    let fr = j.call(f, &mut fa).unwrap_or_else(|e| panic!("{f}: {e}"));
    let mut da = args.to_vec();
    da.push(arr(&vec![0.0; n * n]));
    j.call("H", &mut da).unwrap_or_else(|e| panic!("H: {e}"));
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
    sa.push(arr(&vec![f64::NAN; nnz]));
    sa.push(ArgValue::Array(ArrayValue::I64(vec![-1; nnz])));
    sa.push(ArgValue::Array(ArrayValue::I64(vec![-1; n + 1])));
    let sr = j.call("S", &mut sa).unwrap_or_else(|e| panic!("S: {e}"));
    assert_eq!(sr, fr, "S returns what {f} returns");
    let k = args.len();
    assert_eq!(&sa[..k], &fa[..], "S writes what {f} writes");
    let (vals, cols, rows) = (arg_floats(&sa[k]), ints(&sa[k + 1]), ints(&sa[k + 2]));
    assert_eq!(rows[0], 0);
    assert_eq!(rows[n] as usize, nnz, "the last row ends at S_nnz");
    let mut listed = vec![false; n * n];
    let mut pattern = Vec::new();
    for r in 0..n {
        let (lo, hi) = (rows[r] as usize, rows[r + 1] as usize);
        assert!(lo <= hi, "rows increase: {rows:?}");
        let row = &cols[lo..hi];
        assert!(row.windows(2).all(|w| w[0] < w[1]), "row {r}: {row:?}");
        for q in lo..hi {
            let c = cols[q];
            assert!((0..=r as i64).contains(&c), "column {c} of row {r}");
            let c = c as usize;
            listed[r * n + c] = true;
            let (got, want) = (vals[q], dense[r * n + c]);
            assert!(
                (got - want).abs() <= tol * (1.0 + want.abs()),
                "entry ({r}, {c}): sparse {got}, dense {want}"
            );
        }
        pattern.push(row.to_vec());
    }
    for r in 0..n {
        for c in 0..=r {
            let v = dense[r * n + c];
            assert!(
                v == 0.0 || listed[r * n + c],
                "nonzero ({r}, {c}) = {v} is missing"
            );
        }
    }
    pattern
}

#[test]
fn banded_objective_has_exactly_its_lower_band() {
    // Row r of the Hessian depends on x[r - 2 .. r + 2]: a band of
    // half-width 2 (through a product of neighbours and a branch).
    let j = jit("[hessian(H)]
[hessian(S, sparse)]
double band(double[] x) {
    double s = 0.0;
    for (int i = 0; i + 2 < len(x); i++) {
        double t = x[i] * x[i + 2] - x[i + 1];
        if (t > 0.0) { s += t * t; } else { s += sin(t) * x[i + 1]; }
    }
    return s;
}");
    let n = 19;
    let x: Vec<f64> = (0..n).map(|i| 0.3 * ((i * 7) % 5) as f64 - 0.4).collect();
    let pattern = check(&j, "band", &[arr(&x)], n);
    for (r, cols) in pattern.iter().enumerate() {
        let want: Vec<i64> = (r.saturating_sub(2)..=r).map(|c| c as i64).collect();
        assert_eq!(cols, &want, "row {r}");
    }
}

#[test]
fn scalars_inout_and_const_parameters() {
    let j = jit("[hessian(H, Dual, Const, Dual, Dual)]
[hessian(S, Dual, Const, Dual, Dual, sparse)]
double g(double x, double[] c, inout double[] u, out double[] w) {
    double s = 0.0;
    for (int i = 0; i < len(u); i++) {
        s += exp(0.1 * u[i] * x) * c[i];
        w[i] = u[i] * s;
        u[i] = u[i] * 2.0;
    }
    return s + x * x * u[0];
}");
    // Columns: x, u[0..3].
    let args = [
        d(0.7),
        arr(&[1.0, -2.0, 0.5]),
        arr(&[0.3, -0.4, 1.1]),
        arr(&[0.0; 3]),
    ];
    let pattern = check(&j, "g", &args, 4);
    // Each u[i] meets x and itself; the u's meet no other u.
    assert_eq!(pattern, vec![vec![0], vec![0, 1], vec![0, 2], vec![0, 3]]);
}

/// `k(x, a)` with a dense `[hessian(H)]` and a sparse `[hessian(S)]`,
/// checked at a point; returns the pattern.
fn check_k(body: &str, helpers: &str, n: usize) -> Vec<Vec<i64>> {
    let j = jit(&format!(
        "{helpers}
[hessian(H)]
[hessian(S, sparse)]
double k(double x, double[] a) {{
{body}
}}"
    ));
    let a: Vec<f64> = (0..n).map(|i| 0.3 + 0.1 * (i % 4) as f64).collect();
    check(&j, "k", &[d(0.4), arr(&a)], n + 1)
}

#[test]
fn through_calls() {
    // pair(u, v) = u exp(v) meets v with u and v; x meets a[0] and a[2].
    let helpers = "double pair(double u, double v) { return u * exp(v); }
double scale(double x, double[] a, int i) { return x * a[i]; }";
    let body = "    double s = 0.0;
    for (int i = 0; i + 1 < len(a); i++) { s += pair(a[i], a[i + 1]); }
    return s + scale(x, a, 0) * scale(x, a, 2);";
    let p = check_k(body, helpers, 5);
    // Columns: x, a[0..5] (column 1 + i).
    assert_eq!(p[0], vec![0]);
    // a[0] enters only linearly, but meets x in x² a[0] a[2].
    assert_eq!(p[1], vec![0]);
    assert_eq!(p[2], vec![1, 2]);
    assert_eq!(p[3], vec![0, 1, 2, 3]);
    assert_eq!(p[4], vec![3, 4]);
    assert_eq!(p[5], vec![4, 5]);
}

#[test]
fn through_a_checkpointed_loop() {
    for checkpoint in ["[checkpoint(3)]", "[checkpoint]"] {
        let body = format!(
            "    double s = x;
    {checkpoint}
    for (int i = 0; i < 20; i++) {{
        s = s + sin(s * a[i % len(a)]) * 0.5 + x * a[(i + 1) % len(a)];
    }}
    return s * s;"
        );
        check_k(&body, "", 5);
    }
}

#[test]
fn through_a_checkpointed_loop_that_overwrites_an_array() {
    // The reverse derivative keeps the array on its tape: the sweep moves
    // the shadow array's handles through it.
    let body = "    double t[len(a)];
    for (int i = 0; i < len(a); i++) { t[i] = a[i]; }
    [checkpoint(2)]
    for (int k = 0; k < 4; k++) {
        for (int i = 1; i < len(t); i++) { t[i] = t[i] * t[i - 1] * 0.5 + x; }
    }
    double s = 0.0;
    for (int i = 0; i < len(t); i++) { s += t[i] * t[i]; }
    return s;";
    check_k(body, "", 6);
}

#[test]
fn through_recursion() {
    let helpers = "double power(double x, double[] a, int i) {
    if (i == len(a)) return 1.0;
    return a[i] * x + sin(x * power(x, a, i + 1));
}";
    check_k("    return power(x, a, 0) * a[0];", helpers, 4);
}

#[test]
fn branches_taken_decide_the_pattern() {
    // Only the branch taken at this input counts: a[0] * a[1] when x > 0.
    let j = jit("[hessian(H)]
[hessian(S, sparse)]
double b(double x, double[] a) {
    if (x > 0.0) { return a[0] * a[1] + x; }
    return a[1] * a[2] * x;
}");
    let a = arr(&[1.0, 2.0, 3.0]);
    assert_eq!(
        check(&j, "b", &[d(0.5), a.clone()], 4),
        vec![vec![], vec![], vec![1], vec![]]
    );
    assert_eq!(
        check(&j, "b", &[d(-0.5), a], 4),
        vec![vec![], vec![], vec![0], vec![0, 2]]
    );
}

#[test]
fn static_and_called_from_the_module() {
    let j = jit("[hessian(hs, sparse)]
static double cube(double[] x) { return x[0] * x[0] * x[1]; }
double use_it() {
    double x[2] = {1.0, 3.0};
    int n = hs_nnz(x);
    double v[n];
    int c[n];
    int r[3];
    double f = hs(x, v, c, r);
    return f + 10.0 * double(n) + 100.0 * v[0] + 1000.0 * v[1];
}");
    // x0² x1 at (1, 3): f = 3, entries (0, 0) = 6, (1, 0) = 2.
    let r = j.call("use_it", &mut []).expect("runs");
    assert_eq!(r, vec![Constant::F64(3.0 + 20.0 + 600.0 + 2000.0)]);
}

#[test]
fn short_arrays_are_a_runtime_error() {
    let j = jit("[hessian(S, sparse)]
double sq(double[] x) { return x[0] * x[0] * x[1]; }");
    let mut args = [
        arr(&[1.0, 2.0]),
        arr(&[0.0; 1]),
        ArgValue::Array(ArrayValue::I64(vec![0; 1])),
        ArgValue::Array(ArrayValue::I64(vec![0; 3])),
    ];
    // Two entries, (0, 0) and (1, 0): `vals` has room for one.
    let e = j.call("S", &mut args).expect_err("one entry too few");
    assert!(e.to_string().contains("hessian needs 2 entries"), "{e}");
}

#[test]
fn short_arrays_on_a_band_pattern_are_a_runtime_error() {
    // The band pattern writes the lower triangle itself, before the
    // coloring: with one run of the band coloring (tridiagonal, no full
    // pattern) and with two (pentadiagonal, the full pattern for the
    // star coloring). Each array one element short; then all long enough.
    let shapes = [
        "for (int i = 0; i + 1 < len(x); i++) { s += x[i] * x[i] * x[i + 1]; }",
        "for (int i = 1; i + 1 < len(x); i++) { double t = x[i - 1] - x[i + 1]; s += t * t * x[i]; }",
    ];
    for body in shapes {
        let j = jit(&format!(
            "[hessian(H)]\n[hessian(S, sparse)]\ndouble f(double[] x) {{ double s = 0.0; {body} return s; }}"
        ));
        let n = 7;
        let x = arr(&(0..n).map(|i| 0.2 * i as f64 - 0.5).collect::<Vec<_>>());
        let r = j.call("S_nnz", &mut [x.clone()]).expect("S_nnz");
        let Constant::I64(m) = r[0] else {
            panic!("S_nnz returns an int")
        };
        let m = m as usize;
        for (k, short, need) in [(1, m - 1, m), (2, m - 1, m), (3, n, n + 1)] {
            let mut args = [
                x.clone(),
                arr(&vec![0.0; m]),
                ArgValue::Array(ArrayValue::I64(vec![0; m])),
                ArgValue::Array(ArrayValue::I64(vec![0; n + 1])),
            ];
            args[k] = match k {
                1 => arr(&vec![0.0; short]),
                _ => ArgValue::Array(ArrayValue::I64(vec![0; short])),
            };
            let e = j.call("S", &mut args).expect_err("one element too few");
            let want = format!("hessian needs {need} entries");
            assert!(e.to_string().contains(&want), "{body}: {e}");
        }
        check(&j, "f", &[x], n);
    }
}

#[test]
fn misuse_is_e0310() {
    for (attr, f) in [
        ("hessian(hf, sparse, Dual)", "double f(double x)"),
        ("hessian(hf, sparse)", "void f(double x)"),
        ("hessian(hf, sparse)", "int f(double x)"),
        ("hessian(hf, sparse, sparse)", "double f(double x)"),
    ] {
        let body = if f.starts_with("void") {
            "{ }"
        } else {
            "{ return x * x; }"
        };
        let src = format!("[{attr}]\n{f} {body}");
        let e = adc::compile_jit("t.ad", &src, &adc::CompileOptions::default())
            .err()
            .unwrap_or_else(|| panic!("{attr} on {f} compiles"));
        assert_eq!(e.diagnostics[0].code, "E0310", "{attr} on {f}: {e}");
    }
}

/// A banded objective: `x[i]` meets `x[i + 1]` only.
const CHAIN: &str = "[hessian(hchain, sparse)]
double chain(double[] x) {
    double s = 0.0;
    for (int i = 0; i + 1 < len(x); i++) { s += x[i] * x[i] * x[i + 1]; }
    return s;
}";

#[test]
fn the_sweep_carries_no_set_of_the_result() {
    // The sweep runs over `F`'s own code, which computes the result `s`:
    // its set would grow by a union per term, all inputs in the end,
    // quadratic in their number. The sweep's result is `Const` and no
    // record reads `s`'s set, so no union carries it around the loop;
    // the products record their interactions. No sweep of the gradient.
    let src = CHAIN;
    let mut m = adc::driver::frontend("t.ad", src, &adc::CompileOptions::default())
        .unwrap_or_else(|f| panic!("{f}"));
    adc::driver::run_stages(&mut m, adc::Stage::Transpose).expect("stages run");
    assert!(
        !m.funcs
            .iter()
            .any(|f| f.name.ends_with("s_hchain__gradient")),
        "a sweep of the gradient:\n{m}"
    );
    let record = m.find("__adc_set_interacts").expect("the sweep records");
    let union = m.find("__adc_set_union");
    let sweep = m.func(m.find("hchain__hp").expect("the sweep"));
    let is_param = |v: adc_ir::Value| matches!(sweep.dfg.value_def(v), adc_ir::ValueDef::Param(..));
    let mut records = 0;
    for &b in &sweep.layout {
        for &i in &sweep.dfg.block(b).insts {
            match sweep.dfg.inst(i) {
                adc_ir::InstData::Call { func, args } if Some(*func) == union => {
                    assert!(
                        !is_param(args[1]) && !is_param(args[2]),
                        "a union carried by a block parameter:\n{m}"
                    );
                }
                adc_ir::InstData::Call { func, .. } if *func == record => records += 1,
                _ => {}
            }
        }
    }
    // x[i] * x[i], then that times x[i + 1].
    assert_eq!(records, 2, "{m}");
}

/// The functions `f` reaches by calls in `m` (itself too).
pub(crate) fn reached(m: &adc_ir::Module, f: &str) -> Vec<String> {
    let mut seen = vec![m.find(f).unwrap_or_else(|| panic!("no {f} in\n{m}"))];
    let mut k = 0;
    while k < seen.len() {
        let func = m.func(seen[k]);
        for &b in &func.layout {
            for &i in &func.dfg.block(b).insts {
                if let adc_ir::InstData::Call { func: c, .. } = func.dfg.inst(i) {
                    if !seen.contains(c) {
                        seen.push(*c);
                    }
                }
            }
        }
        k += 1;
    }
    seen.into_iter().map(|id| m.func(id).name.clone()).collect()
}

#[test]
fn the_sweep_runs_once_and_nnz_runs_it_alone() {
    // `NAME_nnz` counts the lower triangle from the sweep's records (no
    // compressed evaluation); `NAME` runs the sweep (of `F`'s own code,
    // not of the gradient's) once, then the compressed evaluation.
    let src = CHAIN;
    let m = adc::driver::frontend("t.ad", src, &adc::CompileOptions::default())
        .unwrap_or_else(|f| panic!("{f}"));
    let nnz = reached(&m, "hchain_nnz");
    assert!(nnz.iter().any(|f| f == "hchain__hdeps"), "{nnz:?}");
    assert!(!nnz.iter().any(|f| f == "hchain__gj__deps"), "{nnz:?}");
    assert!(!nnz.iter().any(|f| f.ends_with("__columns")), "{nnz:?}");
    let all = reached(&m, "hchain");
    assert!(all.iter().any(|f| f.ends_with("__columns")), "{all:?}");
    assert!(!all.iter().any(|f| f.ends_with("_nnz")), "{all:?}");
    assert!(!all.iter().any(|f| f == "hchain__gj__deps"), "{all:?}");
    let deps = m.find("hchain__hdeps").expect("the sweep");
    let h = m.func(m.find("hchain").expect("defined"));
    let calls = h
        .layout
        .iter()
        .flat_map(|&b| h.dfg.block(b).insts.iter())
        .filter(|&&i| matches!(h.dfg.inst(i), adc_ir::InstData::Call { func, .. } if *func == deps))
        .count();
    assert_eq!(calls, 1, "{m}");
}

/// `S`'s pattern of `body` (a function `f(double[] x)`) at `x`, checked
/// against the dense Hessian.
fn pattern_of(body: &str, helpers: &str, x: &[f64]) -> Vec<Vec<i64>> {
    let j = jit(&format!(
        "{helpers}
[hessian(H)]
[hessian(S, sparse)]
double f(double[] x) {{
{body}
}}"
    ));
    check(&j, "f", &[arr(x)], x.len())
}

#[test]
fn a_product_of_two_disjoint_sums() {
    // Each column of one sum meets each of the other, none its own sum's.
    let p = pattern_of(
        "    return (x[0] + x[1]) * (x[2] - x[3]);",
        "",
        &[1.0, 2.0, 3.0, 4.0],
    );
    assert_eq!(p, vec![vec![], vec![], vec![0, 1], vec![0, 1]]);
}

#[test]
fn a_nonlinear_function_of_a_sum() {
    // exp's argument's columns all meet; x[2] enters linearly, and a
    // product with a constant or a division by one meets nothing.
    let p = pattern_of(
        "    return exp(x[0] + 2.0 * x[1]) + x[2] * 3.0 + x[2] / 4.0;",
        "",
        &[0.1, 0.2, 0.3],
    );
    assert_eq!(p, vec![vec![0], vec![0, 1], vec![]]);
    // A quotient: the numerator's columns meet the denominator's, and
    // the denominator's meet each other.
    let p = pattern_of(
        "    return (x[0] + x[1]) / (x[2] + x[3]);",
        "",
        &[1.0, 2.0, 3.0, 4.0],
    );
    assert_eq!(p, vec![vec![], vec![], vec![0, 1, 2], vec![0, 1, 2, 3]]);
}

#[test]
fn a_loop_carrying_a_product() {
    // p = x0 x1 x2: each pair meets, no column meets itself; the carried
    // sum t meets nothing until it is squared at the end.
    let body = "    double p = 1.0;
    double t = 0.0;
    for (int i = 0; i < 3; i++) { p = p * x[i]; t = t + x[i + 3]; }
    return p + sin(t) * 0.0 + t * t * 0.0 + x[6];";
    let x: Vec<f64> = (0..7).map(|i| 0.5 + 0.25 * i as f64).collect();
    let p = pattern_of(body, "", &x);
    // sin(t) * 0.0 is zero by arithmetic: listed, as its entries are
    // structurally there.
    let want = vec![
        vec![],
        vec![0],
        vec![0, 1],
        vec![3],
        vec![3, 4],
        vec![3, 4, 5],
        vec![],
    ];
    assert_eq!(p, want);
}

#[test]
fn a_branch_and_a_call_in_a_loop() {
    // Through a call (pair's product) and a branch taken per element:
    // where x[i] > 0, x[i] meets x[i + 1]; elsewhere only itself (sin).
    let helpers = "double pair(double u, double v) { return u * v; }";
    let body = "    double s = 0.0;
    for (int i = 0; i + 1 < len(x); i++) {
        if (x[i] > 0.0) { s += pair(x[i], x[i + 1]); } else { s += sin(x[i]); }
    }
    return s;";
    let p = pattern_of(body, helpers, &[1.0, -1.0, 2.0, 3.0, -2.0]);
    assert_eq!(p, vec![vec![], vec![0, 1], vec![], vec![2], vec![3]]);
}

#[test]
fn a_product_stored_only_to_an_unread_output_adds_nothing() {
    // w[i] = x[i] * x[i + 1] reaches no result: no entry; the sweep
    // records a product only where its result is used.
    let j = jit("[hessian(H, Dual, Const)]
[hessian(S, Dual, Const, sparse)]
double f(double[] x, out double[] w) {
    for (int i = 0; i + 1 < len(x); i++) { w[i] = x[i] * x[i + 1]; }
    return x[0] * x[0];
}");
    let p = check(&j, "f", &[arr(&[1.0, 2.0, 3.0]), arr(&[0.0; 3])], 3);
    assert_eq!(p, vec![vec![0], vec![], vec![]]);
}

#[test]
fn a_custom_derivative_keeps_the_sweep_of_the_gradient() {
    // The Hessian's values come from `sq_rev`, not from `sq`'s code: the
    // pattern comes from the sweep of the gradient (`NAME__gj__deps`).
    let src = "double sq_rev(double x, double seed) { return 2.0 * x * seed; }
[reverse_derivative(sq_rev)]
double sq(double x) { return x * x; }
[hessian(H)]
[hessian(S, sparse)]
double f(double[] x) { return sq(x[0]) + x[0] * x[1]; }";
    let m = adc::driver::frontend("t.ad", src, &adc::CompileOptions::default())
        .unwrap_or_else(|f| panic!("{f}"));
    let nnz = reached(&m, "S_nnz");
    assert!(nnz.iter().any(|f| f == "S__gj__deps"), "{nnz:?}");
    assert!(!nnz.iter().any(|f| f == "S__hdeps"), "{nnz:?}");
    let p = check(&jit(src), "f", &[arr(&[1.5, 2.0])], 2);
    assert_eq!(p, vec![vec![0], vec![0]]);
}

#[test]
fn a_nonlinear_function_of_a_long_sum() {
    // More than 32 columns in one set: union nodes, which the rows walk;
    // the dense block's rows are long (not sorted in place).
    let body = "    double s = 0.0;
    for (int i = 0; i < 40; i++) { s += x[i]; }
    return exp(0.01 * s) + x[40] * x[41];";
    let x: Vec<f64> = (0..42).map(|i| 0.01 * i as f64).collect();
    let p = pattern_of(body, "", &x);
    for (r, row) in p.iter().enumerate().take(40) {
        assert_eq!(row, &(0..=r as i64).collect::<Vec<_>>(), "row {r}");
    }
    assert_eq!(p[40], Vec::<i64>::new());
    assert_eq!(p[41], vec![40]);
}
