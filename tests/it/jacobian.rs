//! Dense Jacobians (`[jacobian(NAME)]`, docs/jacobians.md#jacobians):
//! against forward-mode calls column by column and against central
//! differences, in several chunks of columns (the width chosen and a
//! given one), with `inout` arguments (restored between chunks), `Const`
//! activities, and the errors; the automatic chunk width.

use crate::support::{arg_floats, arr, d, jit, number};
use adc::{ArgValue, ArrayValue, CallError, Constant, JitModule};

/// `g`: 1 + 1 + 35 + 4 = 41 columns (`x`, `y`, `a`, `u`: two chunks of
/// the width chosen, 32; eleven of 4 in `jg4`), 7 rows (the result, `y`,
/// `u` and `s`).
const SRC: &str = "
[jacobian(jg)]
[jacobian(jg4, width = 4)]
[autodiff_forward(tg, Dual, Dual, Dual, Dual, Dual, Const, Dual)]
double g(double x, inout double y, double[] a, inout double[] u, out double s, int n) {
    double t = y;
    for (int i = 0; i < len(a); i++) t = t + sin(a[i] * x) * (i + 1.0);
    for (int i = 0; i < len(u); i++) {
        u[i] = u[i] * t + a[(i * 3) % len(a)] * y;
        if (u[i] > 1.0) u[i] = sqrt(u[i]);
    }
    y = t * x;
    s = u[0] * n + y;
    return exp(-t * t * 0.01) + u[len(u) - 1];
}";

fn inputs() -> (f64, f64, Vec<f64>, Vec<f64>) {
    let a: Vec<f64> = (0..35).map(|i| ((i * 7 % 5) as f64 - 2.0) * 0.3).collect();
    (0.4, 0.2, a, vec![0.5, -0.3, 1.2, 0.8])
}

/// `name` (`jg` or `jg4`) at the inputs: its result, the arguments after
/// the call, the Jacobian.
fn jacobian(j: &JitModule, name: &str) -> (f64, Vec<ArgValue>, Vec<f64>) {
    let (x, y, a, u) = inputs();
    let mut args = [
        d(x),
        d(y),
        arr(&a),
        arr(&u),
        d(0.0),
        ArgValue::Scalar(Constant::I64(3)),
        arr(&vec![0.0; 7 * 41]),
    ];
    let r = j
        .call(name, &mut args)
        .unwrap_or_else(|e| panic!("{name}: {e}"));
    let jac = arg_floats(&args[6]);
    (number(&r[0]), args.to_vec(), jac)
}

#[test]
fn columns_equal_forward_mode_and_the_function_does_what_g_does() {
    let j = jit(SRC);
    for name in ["jg", "jg4"] {
        columns_equal_forward_mode(&j, name);
    }
}

fn columns_equal_forward_mode(j: &JitModule, name: &str) {
    let (r, after, jac) = jacobian(j, name);
    let (x, y, a, u) = inputs();
    // What `g` itself does.
    let mut g_args = [
        d(x),
        d(y),
        arr(&a),
        arr(&u),
        d(0.0),
        ArgValue::Scalar(Constant::I64(3)),
    ];
    let g = j.call("g", &mut g_args).expect("g runs");
    assert_eq!(number(&g[0]), r, "{name}");
    for k in 0..6 {
        assert_eq!(after[k], g_args[k], "{name}: argument {k} after the call");
    }
    // Column by column, a forward call with that unit direction.
    for c in 0..41 {
        let e = |k: usize| if k == c { 1.0 } else { 0.0 };
        let ta: Vec<f64> = (0..35).map(|i| e(2 + i)).collect();
        let tu: Vec<f64> = (0..4).map(|i| e(37 + i)).collect();
        let mut f_args = [
            d(x),
            d(e(0)),
            d(y),
            d(e(1)),
            arr(&a),
            arr(&ta),
            arr(&u),
            arr(&tu),
            d(0.0),
            d(0.0),
            ArgValue::Scalar(Constant::I64(3)),
        ];
        let out = j.call("tg", &mut f_args).expect("tg runs");
        let mut col = vec![number(&out[1])];
        col.extend(arg_floats(&f_args[3]));
        col.extend(arg_floats(&f_args[7]));
        col.extend(arg_floats(&f_args[9]));
        for (row, want) in col.iter().enumerate() {
            let got = jac[row * 41 + c];
            assert!(
                (got - want).abs() <= 1e-12 * (1.0 + want.abs()),
                "{name}: jac[{row}][{c}] = {got}, forward mode {want}"
            );
        }
    }
}

#[test]
fn jacobian_against_central_differences() {
    let j = jit(SRC);
    let (_, _, jac) = jacobian(&j, "jg");
    let (x, y, a, u) = inputs();
    let rows = |v: &[f64]| -> Vec<f64> {
        let mut args = [
            d(v[0]),
            d(v[1]),
            arr(&v[2..37]),
            arr(&v[37..41]),
            d(0.0),
            ArgValue::Scalar(Constant::I64(3)),
        ];
        let r = j.call("g", &mut args).expect("g runs");
        let mut out = vec![number(&r[0])];
        out.extend(arg_floats(&args[1]));
        out.extend(arg_floats(&args[3]));
        out.extend(arg_floats(&args[4]));
        out
    };
    let mut at = vec![x, y];
    at.extend(&a);
    at.extend(&u);
    let h = 1e-6;
    for c in 0..41 {
        let (mut p, mut m) = (at.clone(), at.clone());
        p[c] += h;
        m[c] -= h;
        let (rp, rm) = (rows(&p), rows(&m));
        for row in 0..7 {
            let fd = (rp[row] - rm[row]) / (2.0 * h);
            let got = jac[row * 41 + c];
            assert!(
                (got - fd).abs() <= 1e-6 * (1.0 + fd.abs()),
                "jac[{row}][{c}] = {got}, central differences {fd}"
            );
        }
    }
}

#[test]
fn const_parameters_are_no_columns_and_wrong_lengths_are_errors() {
    let src = "[jacobian(jh, Const, Dual, Dual)]
double h(double x, double[] a, out double[] o) {
    for (int i = 0; i < len(o); i++) o[i] = a[i] * a[i] * x;
    return a[0] * x;
}";
    let j = jit(src);
    // Columns: a (2); rows: the result, o (2).
    let mut args = [d(3.0), arr(&[1.0, 2.0]), arr(&[0.0, 0.0]), arr(&[0.0; 6])];
    let r = j.call("jh", &mut args).expect("runs");
    assert_eq!(number(&r[0]), 3.0);
    assert_eq!(arg_floats(&args[2]), [3.0, 12.0]);
    assert_eq!(arg_floats(&args[3]), [3.0, 0.0, 6.0, 0.0, 0.0, 12.0]);
    for n in [5, 7, 0] {
        let mut wrong = [
            d(3.0),
            arr(&[1.0, 2.0]),
            arr(&[0.0, 0.0]),
            arr(&vec![0.0; n]),
        ];
        match j.call("jh", &mut wrong) {
            Err(CallError::Runtime(m)) => {
                assert!(
                    m.contains(&format!("len(jac) = {n} differs from nrows * ncols = 6")),
                    "{n}: {m}"
                )
            }
            other => panic!("len(jac) = {n}: {other:?}"),
        }
    }
}

#[test]
fn misuse_is_e0309() {
    for attr in [
        "jacobian",
        "jacobian(jf, forward, reverse)",
        "jacobian(jf, reverse, sparse, forward)",
        "jacobian(jf, sparse, sparse)",
        "jacobian(jf, Dual)",
        "jacobian(jf, Maybe, Dual)",
        "jacobian(jf, chunk = 4)",
        "jacobian(jf, reverse, width = 4)",
        "jacobian(jf, width = 4, sparse)",
    ] {
        let src = format!("[{attr}]\ndouble f(double x, double y) {{ return x * y; }}");
        let e = adc::compile_jit("t.ad", &src, &adc::CompileOptions::default())
            .err()
            .unwrap_or_else(|| panic!("{attr} compiles"));
        assert_eq!(e.diagnostics[0].code, "E0309", "{attr}: {e}");
    }
}

/// `Const` and integer `inout` arguments are restored before each chunk,
/// by columns and by rows, so the Jacobian writes them once, as `f` does.
#[test]
fn every_inout_argument_is_written_once() {
    let j = jit(
        "[jacobian(jc, Dual, Dual, Const, Const, forward, width = 2)]
[jacobian(jr, Dual, Dual, Const, Const, reverse)]
double f(double[] x, out double[] y, inout double[] c, inout int n) {
    c[0] = c[0] + 1.0;
    n = n + 1;
    for (int i = 0; i < len(y); i++) y[i] = x[i] * x[i] * c[0];
    return x[0] * c[0];
}",
    );
    // 20 columns (10 chunks), 21 rows (two chunks of 16).
    let x: Vec<f64> = (0..20).map(|i| 0.5 + 0.1 * i as f64).collect();
    for name in ["jc", "jr"] {
        let mut args = [
            arr(&x),
            arr(&[0.0; 20]),
            arr(&[1.0]),
            ArgValue::Scalar(Constant::I64(0)),
            arr(&[0.0; 21 * 20]),
        ];
        let r = j
            .call(name, &mut args)
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(number(&r[0]), 2.0 * x[0], "{name}");
        assert_eq!(arg_floats(&args[2]), [2.0], "{name}: c");
        assert_eq!(args[3], ArgValue::Scalar(Constant::I64(1)), "{name}: n");
        let jac = arg_floats(&args[4]);
        for i in 0..20 {
            assert_eq!(
                jac[(1 + i) * 20 + i],
                4.0 * x[i],
                "{name}: d y[{i}] / d x[{i}]"
            );
        }
        assert_eq!(jac[0], 2.0, "{name}: d f / d x[0]");
    }
}

#[test]
fn a_bad_width_is_e0308() {
    for attr in [
        "jacobian(jf, width = 0)",
        "jacobian(jf, width = 65)",
        "jacobian(jf, width = 2, width = 2)",
        "jacobian(jf, width = K)",
    ] {
        let src = format!(
            "const double K = 2.0;\n[{attr}]\ndouble f(double x, double y) {{ return x * y; }}"
        );
        let e = adc::compile_jit("t.ad", &src, &adc::CompileOptions::default())
            .err()
            .unwrap_or_else(|| panic!("{attr} compiles"));
        assert_eq!(e.diagnostics[0].code, "E0308", "{attr}: {e}");
    }
}

/// `width = 1`, a literal or a `const int`, is one column per run: the
/// Jacobian of the automatic chunk.
#[test]
fn a_width_of_one_is_one_column_per_run() {
    let src = "const int W = 1;
[jacobian(j1, forward, width = 1)]
[jacobian(jw, forward, width = W)]
[jacobian(ja, forward)]
void f(double[] x, out double[] y) {
    for (int i = 0; i < len(y); i++) y[i] = sin(x[i % len(x)] * x[(i + 1) % len(x)]) + double(i);
}";
    assert_eq!(chunk_width(src, "j1"), 1);
    assert_eq!(chunk_width(src, "jw"), 1);
    let j = adc::compile_jit("t.ad", src, &adc::CompileOptions::default())
        .unwrap_or_else(|e| panic!("{e}"));
    let x = [0.3, -1.2, 0.8];
    let jac = |name: &str| {
        let mut args = [arr(&x), arr(&[0.0; 4]), arr(&[0.0; 12])];
        j.call(name, &mut args)
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        arg_floats(&args[2])
    };
    let want = jac("ja");
    assert!(want.iter().any(|v| *v != 0.0));
    assert_eq!(jac("j1"), want);
    assert_eq!(jac("jw"), want);
}

/// The width of `name__columns`, the forward derivative `[jacobian(name)]`
/// generates (`adc ir --after lower` prints it `width W`).
fn chunk_width(src: &str, name: &str) -> u32 {
    let m = adc_frontend::compile_to_ir(src)
        .unwrap_or_else(|e| panic!("{e:?}"))
        .module;
    let id = m
        .find(&format!("{name}__columns"))
        .unwrap_or_else(|| panic!("no {name}__columns in\n{m}"));
    m.func(id)
        .deriv
        .as_ref()
        .expect("a derivative request")
        .width
}

/// The automatic chunk (docs/jacobians.md#chunk-width): a body of math
/// calls (primal work several times a lane's) runs 32 columns per run, a
/// body of products and sums (as much work per lane as in the primal) 4;
/// a call the estimate cannot see into (`extern`) keeps 32, a call of a
/// generated derivative gets 4; `width` overrides.
#[test]
fn the_chunk_width_follows_primal_against_lane_work() {
    let sines = "[jacobian(jf)]
void f(double[] x, out double[] y) {
    for (int i = 0; i < len(y); i++) {
        double s = 0.0;
        for (int j = 0; j < len(x); j++) s += sin(x[j] * double(i % 7 + 1) + double(i));
        y[i] = s;
    }
}";
    assert_eq!(chunk_width(sines, "jf"), 32);
    // Fewer math calls per product (`cargo bench --bench jacobian`'s `wide`).
    let wide = "[jacobian(jw, forward)]
double wide(double[] x, out double[] c) {
    double s = 0.0;
    for (int j = 0; j < len(x); j++) s += sin(x[j] * (0.5 + 0.001 * double(j))) * x[j];
    for (int i = 0; i < len(c); i++) {
        double t = 0.0;
        for (int j = i; j < len(x); j += len(c)) t += cos(x[j]) * x[j];
        c[i] = t;
    }
    return s;
}";
    assert_eq!(chunk_width(wide, "jw"), 32);
    // GradBench's ht as ported plainly: matrix products (4x4 by 4x4 and 4 x nv).
    let ht = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/gradbench/evals/plain/ht.ad"
    ))
    .expect("plain ht");
    assert_eq!(chunk_width(&ht, "objective_simple_j"), 4);
    assert_eq!(chunk_width(&ht, "objective_complicated_j"), 4);
    let products =
        "static void mat_mult(int n, int m, int p, double[] lhs, double[] rhs, out double[] o) {
    for (int i = 0; i < n; i++) {
        for (int k = 0; k < p; k++) {
            o[k * n + i] = lhs[i] * rhs[k * m];
            for (int j = 1; j < m; j++) o[k * n + i] += lhs[j * n + i] * rhs[k * m + j];
        }
    }
}
[jacobian(jf)]
void f(double[] a, double[] b, out double[] c) {
    double t[16];
    mat_mult(4, 4, 4, a, b, t);
    mat_mult(4, 4, 4, t, b, c);
}";
    assert_eq!(chunk_width(products, "jf"), 4);
    let given = products.replace("[jacobian(jf)]", "[jacobian(jf, width = 8)]");
    assert_eq!(chunk_width(&given, "jf"), 8);
    let named = format!(
        "const int W = 2;\n{}",
        products.replace("[jacobian(jf)]", "[jacobian(jf, width = W)]")
    );
    assert_eq!(chunk_width(&named, "jf"), 2);
    // A `const int` is its value, as for `width` on a derivative attribute.
    let computed = format!(
        "const int W = 4 + 4;\n{}",
        products.replace("[jacobian(jf)]", "[jacobian(jf, width = W)]")
    );
    assert_eq!(chunk_width(&computed, "jf"), 8);
    let unseen = "[autodiff_forward(tg, Dual, DualOnly)]
double g(double x) { return x * x; }
[jacobian(jf)]
void f(double[] a, out double[] c) {
    for (int i = 0; i < len(c); i++) c[i] = a[i] * a[i] + tg(a[i], 1.0);
}";
    // A call of a generated derivative: the narrowest chunk, as each of
    // the chunk's lanes carries the derivative's own code (a `[jacobian]`
    // of a function calling a `[hessian]` chunked 32 was 32 by 32 lanes).
    assert_eq!(chunk_width(unseen, "jf"), 4);
    // An `extern` function the estimate cannot see into: the widest.
    let external = "double gd(double x, double d_x) { return d_x * 2.0 * x; }
[forward_derivative(gd)]
extern double g(double x);
[jacobian(jf)]
void f(double[] a, out double[] c) {
    for (int i = 0; i < len(c); i++) c[i] = a[i] * a[i] + g(a[i]);
}";
    assert_eq!(chunk_width(external, "jf"), 32);
}

/// `F` may read what it wrote to an `out` array: the Jacobian runs `F`'s
/// code once per chunk (of columns or rows, dense or sparse), and each run
/// starts from the arguments `F` was given, so `F`'s writes happen once.
#[test]
fn an_out_array_that_f_reads_is_written_once() {
    let body = "void f(double[] x, out double[] y) {
    for (int i = 0; i < len(y); i++) { y[i] += x[i] * x[i]; }
}";
    // By rows, a dense Jacobian needs a float result: its row comes first.
    let with_result = "double f(double[] x, out double[] y) {
    for (int i = 0; i < len(y); i++) { y[i] += x[i] * x[i]; }
    return 0.0;
}";
    for attr in [
        "jacobian(jd, forward)",
        "jacobian(jd, forward, width = 2)",
        "jacobian(jd, reverse)",
        "jacobian(jd, sparse)",
        "jacobian(jd, sparse, forward)",
        "jacobian(jd, sparse, reverse)",
    ] {
        let result_row = usize::from(attr == "jacobian(jd, reverse)");
        let f = if result_row == 1 { with_result } else { body };
        let src = format!("[{attr}]\n{f}");
        let j = adc::compile_jit("t.ad", &src, &adc::CompileOptions::default())
            .unwrap_or_else(|e| panic!("{attr}: {e}"));
        let n = 9;
        let x: Vec<f64> = (0..n).map(|i| 1.0 + i as f64).collect();
        let mut args = vec![
            ArgValue::Array(ArrayValue::F64(x.clone())),
            ArgValue::Array(ArrayValue::F64(vec![1.0; n])),
        ];
        let sparse = attr.contains("sparse");
        if sparse {
            args.push(ArgValue::Array(ArrayValue::F64(vec![0.0; n])));
            args.push(ArgValue::Array(ArrayValue::I64(vec![0; n])));
            args.push(ArgValue::Array(ArrayValue::I64(vec![0; n + 1])));
        } else {
            args.push(ArgValue::Array(ArrayValue::F64(vec![
                0.0;
                (n + result_row) * n
            ])));
        }
        j.call("jd", &mut args)
            .unwrap_or_else(|e| panic!("{attr}: {e}"));
        let ArgValue::Array(ArrayValue::F64(y)) = &args[1] else {
            unreachable!("y is a double array")
        };
        for (i, (yi, xi)) in y.iter().zip(&x).enumerate() {
            assert_eq!(*yi, 1.0 + xi * xi, "{attr}: y[{i}]");
        }
        let ArgValue::Array(ArrayValue::F64(jac)) = &args[2] else {
            unreachable!("the Jacobian is a double array")
        };
        for i in 0..n {
            let at = if sparse { i } else { (i + result_row) * n + i };
            assert_eq!(jac[at], 2.0 * x[i], "{attr}: d y[{i}] / d x[{i}]");
        }
    }
}
