//! Dense Jacobians (`[jacobian(NAME)]`, docs/jacobians.md#jacobians):
//! against forward-mode calls column by column and against central
//! differences, in several chunks of columns, with `inout` arguments
//! (restored between chunks), `Const` activities, and the errors.

use crate::support::{arg_floats, arr, d, jit, number};
use adc::{ArgValue, CallError, Constant, JitModule};

/// `g`: 1 + 1 + 35 + 4 = 41 columns (`x`, `y`, `a`, `u`: two chunks),
/// 7 rows (the result, `y`, `u` and `s`).
const SRC: &str = "
[jacobian(jg)]
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

/// `jg` at the inputs: its result, the arguments after the call, the Jacobian.
fn jacobian(j: &JitModule) -> (f64, Vec<ArgValue>, Vec<f64>) {
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
        .call("jg", &mut args)
        .unwrap_or_else(|e| panic!("jg: {e}"));
    let jac = arg_floats(&args[6]);
    (number(&r[0]), args.to_vec(), jac)
}

#[test]
fn columns_equal_forward_mode_and_the_function_does_what_g_does() {
    let j = jit(SRC);
    let (r, after, jac) = jacobian(&j);
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
    assert_eq!(number(&g[0]), r);
    for k in 0..6 {
        assert_eq!(after[k], g_args[k], "argument {k} after the call");
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
                "jac[{row}][{c}] = {got}, forward mode {want}"
            );
        }
    }
}

#[test]
fn jacobian_against_central_differences() {
    let j = jit(SRC);
    let (_, _, jac) = jacobian(&j);
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
                    m.contains("len(jac) differs from nrows * ncols"),
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
    ] {
        let src = format!("[{attr}]\ndouble f(double x, double y) {{ return x * y; }}");
        let e = adc::compile_jit("t.ad", &src, &adc::CompileOptions::default())
            .err()
            .unwrap_or_else(|| panic!("{attr} compiles"));
        assert_eq!(e.diagnostics[0].code, "E0309", "{attr}: {e}");
    }
}
