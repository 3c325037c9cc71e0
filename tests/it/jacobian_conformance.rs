//! What an outside conformance sweep of `[jacobian]` and `[hessian]`
//! found refused or unclear (2026-11-30, docs/jacobians.md): a parameter
//! named like one the generated function adds (`jac`, `hess`, `vals`,
//! `cols`, `rows`: the added one is renamed, `jac_`), `reverse` on a
//! function without a float result (through a copy returning `0.0`), and
//! the dense length errors, which name both lengths.

use crate::support::{arg_floats, arr, d, jit, number};
use adc::{ArgValue, ArrayValue, CallError, Constant};

fn ints(a: &ArgValue) -> Vec<i64> {
    match a {
        ArgValue::Array(ArrayValue::I64(v)) => v.clone(),
        other => panic!("not ints: {other:?}"),
    }
}

fn int_arr(n: usize) -> ArgValue {
    ArgValue::Array(ArrayValue::I64(vec![0; n]))
}

fn assert_near(got: &[f64], want: &[f64], rel: f64, what: &str) {
    assert_eq!(got.len(), want.len(), "{what}: lengths");
    for (k, (g, w)) in got.iter().zip(want).enumerate() {
        assert!(
            (g - w).abs() <= rel * (1.0 + w.abs()),
            "{what}: entry {k}: got {g}, want {w} (all: {got:?} against {want:?})"
        );
    }
}

#[test]
fn a_dense_jacobian_renames_its_jac() {
    let j = jit("[jacobian(J)]
[jacobian(Jr, reverse)]
double f(double x, out double[] jac) { jac[0] = x * x; return x * x * x; }");
    for name in ["J", "Jr"] {
        // Rows: the result, then `jac` (an `out` parameter of `f`); one column.
        let mut args = [d(2.0), arr(&[0.0]), arr(&[0.0, 0.0])];
        let r = j.call(name, &mut args).expect("runs");
        assert_eq!(number(&r[0]), 8.0, "{name}");
        assert_eq!(arg_floats(&args[1]), [4.0], "{name}: f's write");
        assert_eq!(arg_floats(&args[2]), [12.0, 4.0], "{name}");
    }
}

#[test]
fn a_sparse_jacobian_renames_its_vals_cols_and_rows() {
    for opts in ["sparse", "sparse, forward", "sparse, reverse"] {
        let j = jit(&format!(
            "[jacobian(J, {opts})]
double f(double x, out double[] vals, out int[] cols, inout double rows) {{
    vals[0] = x * rows; cols[0] = 1; rows = rows * x; return x * x;
}}"
        ));
        // Rows: the result, `vals`, `rows`; columns: `x`, `rows` on entry.
        let mut args = [
            d(2.0),
            arr(&[0.0]),
            int_arr(1),
            d(3.0),
            arr(&[0.0; 5]),
            int_arr(5),
            int_arr(4),
        ];
        let r = j
            .call("J", &mut args)
            .unwrap_or_else(|e| panic!("{opts}: {e}"));
        assert_eq!(number(&r[0]), 4.0, "{opts}");
        assert_eq!(arg_floats(&args[1]), [6.0], "{opts}: f's writes");
        assert_eq!(ints(&args[2]), [1], "{opts}");
        assert_eq!(arg_floats(&args[3]), [6.0], "{opts}");
        assert_eq!(arg_floats(&args[4]), [4.0, 3.0, 2.0, 3.0, 2.0], "{opts}");
        assert_eq!(ints(&args[5]), [0, 0, 1, 0, 1], "{opts}");
        assert_eq!(ints(&args[6]), [0, 1, 3, 5], "{opts}");
    }
}

#[test]
fn a_hessian_renames_its_hess_and_its_sparse_outputs() {
    let j = jit("[hessian(H)]
double f(double x, double hess) { return x * x * hess; }
[hessian(S, sparse)]
double g(double[] rows, double vals, double cols) { return rows[0] * rows[1] * vals + cols; }");
    let mut args = [d(3.0), d(5.0), arr(&[0.0; 4])];
    let r = j.call("H", &mut args).expect("runs");
    assert_eq!(number(&r[0]), 45.0);
    assert_eq!(arg_floats(&args[2]), [10.0, 6.0, 6.0, 0.0]);
    // Columns rows[0], rows[1], vals, cols: the lower triangle of
    // [[0, v, r1, 0], [v, 0, r0, 0], [r1, r0, 0, 0], [0, 0, 0, 0]].
    let mut args = [
        arr(&[2.0, 3.0]),
        d(5.0),
        d(1.0),
        arr(&[0.0; 3]),
        int_arr(3),
        int_arr(5),
    ];
    let r = j.call("S", &mut args).expect("runs");
    assert_eq!(number(&r[0]), 31.0);
    assert_eq!(arg_floats(&args[3]), [5.0, 3.0, 2.0]);
    assert_eq!(ints(&args[4]), [0, 0, 1]);
    assert_eq!(ints(&args[5]), [0, 0, 1, 3, 3]);
}

#[test]
fn derivatives_asked_from_rust_rename_too() {
    let src = "double f(double jac, double hess) { return jac * hess * hess; }";
    let asks = [
        adc::Derivative::jacobian("f", "J"),
        adc::Derivative::hessian("f", "H"),
    ];
    let j = adc::compile_jit_with("t.ad", src, &asks).expect("compiles");
    let mut args = [d(2.0), d(3.0), arr(&[0.0; 2])];
    assert_eq!(number(&j.call("J", &mut args).expect("runs")[0]), 18.0);
    assert_eq!(arg_floats(&args[2]), [9.0, 12.0]);
    let mut args = [d(2.0), d(3.0), arr(&[0.0; 4])];
    assert_eq!(number(&j.call("H", &mut args).expect("runs")[0]), 18.0);
    assert_eq!(arg_floats(&args[2]), [0.0, 6.0, 6.0, 4.0]);
}

/// Central differences of the rows of `eval` (rows from inputs) at `x`.
fn differences(eval: &dyn Fn(&[f64]) -> Vec<f64>, x: &[f64]) -> Vec<f64> {
    let h = 1e-6;
    let cols: Vec<Vec<f64>> = (0..x.len())
        .map(|c| {
            let (mut up, mut down) = (x.to_vec(), x.to_vec());
            up[c] += h;
            down[c] -= h;
            let (a, b) = (eval(&up), eval(&down));
            a.iter().zip(&b).map(|(a, b)| (a - b) / (2.0 * h)).collect()
        })
        .collect();
    let nr = cols[0].len();
    (0..nr)
        .flat_map(|r| cols.iter().map(move |c| c[r]))
        .collect()
}

#[test]
fn reverse_on_a_void_function_equals_forward_and_differences() {
    let j = jit("[jacobian(Jr, reverse)]
[jacobian(Jf, forward)]
void g(double[] x, out double[] d) { d[0] = x[0] * x[1]; d[1] = sin(x[0]); }");
    let x = [0.7, -1.3];
    let mut jacs = Vec::new();
    for name in ["Jr", "Jf"] {
        let mut args = [arr(&x), arr(&[0.0; 2]), arr(&[0.0; 4])];
        j.call(name, &mut args)
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_near(&arg_floats(&args[1]), &[x[0] * x[1], x[0].sin()], 0.0, name);
        jacs.push(arg_floats(&args[2]));
    }
    assert_near(&jacs[0], &jacs[1], 1e-15, "reverse against forward");
    let want = differences(
        &|x| {
            let mut args = [arr(x), arr(&[0.0; 2])];
            j.call("g", &mut args).expect("runs");
            arg_floats(&args[1])
        },
        &x,
    );
    assert_near(&jacs[0], &want, 1e-8, "against differences");
}

/// `inout` arrays and scalars, an `int` result, `Const` and `Dual`
/// activities and a `float` result with `out` arrays, by rows and by
/// columns.
#[test]
fn reverse_without_a_float_result_and_with_a_float_one() {
    let j = jit("[jacobian(Jr, Dual, Dual, Const, Dual, Const, reverse)]
[jacobian(Jf, Dual, Dual, Const, Dual, Const, forward)]
int h(double[] x, inout double[] u, double c, inout double s, int n) {
    for (int i = 0; i < len(u); i++) { u[i] = u[i] * x[i % len(x)] + c * s; }
    s = s * exp(x[0]) + u[0];
    if (s > 100.0) { return n + 1; }
    return n * 2;
}
[jacobian(Kr, reverse)]
[jacobian(Kf, forward)]
float k(float[] x, out double[] y, inout float t) {
    y[0] = double(x[0] * t);
    t = t * x[1];
    return x[0] * x[1] + sin(t);
}");
    // h: columns x (2), u (3), s; rows u (3), s.
    let run = |name: &str| {
        let mut args = vec![
            arr(&[0.5, -0.25]),
            arr(&[1.0, 2.0, 3.0]),
            d(0.3),
            d(1.5),
            ArgValue::Scalar(Constant::I64(4)),
            arr(&[0.0; 24]),
        ];
        if name == "h" {
            args.pop();
        }
        let r = j
            .call(name, &mut args)
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        (r, args)
    };
    let (rr, ar) = run("Jr");
    let (rf, af) = run("Jf");
    let (rh, ah) = run("h");
    assert_eq!(rr, rf, "the result");
    assert_eq!(rr, rh, "the result of h");
    assert_eq!(ar[..5], ah[..5], "the writes of h, by rows");
    assert_eq!(af[..5], ah[..5], "the writes of h, by columns");
    let jr = arg_floats(&ar[5]);
    assert_near(
        &jr,
        &arg_floats(&af[5]),
        1e-15,
        "h: reverse against forward",
    );
    let want = differences(
        &|v| {
            let mut args = [
                arr(&v[..2]),
                arr(&v[2..5]),
                d(0.3),
                d(v[5]),
                ArgValue::Scalar(Constant::I64(4)),
            ];
            j.call("h", &mut args).expect("runs");
            let mut rows = arg_floats(&args[1]);
            rows.push(number_of(&args[3]));
            rows
        },
        &[0.5, -0.25, 1.0, 2.0, 3.0, 1.5],
    );
    assert_near(&jr, &want, 1e-7, "h against differences");
    // k: columns x (2), t; rows the result, y (1), t.
    let f32s = |v: &[f32]| ArgValue::Array(ArrayValue::F32(v.to_vec()));
    let mut jacs = Vec::new();
    for name in ["Kr", "Kf"] {
        let mut args = [
            f32s(&[0.5, 2.0]),
            arr(&[0.0]),
            ArgValue::Scalar(Constant::F32(1.5)),
            arr(&[0.0; 9]),
        ];
        j.call(name, &mut args)
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        jacs.push(arg_floats(&args[3]));
    }
    assert_near(&jacs[0], &jacs[1], 1e-6, "k: reverse against forward");
    // By hand at x = (0.5, 2), t = 1.5: t' = t x1 = 3.
    let c = 3.0f64.cos();
    let want = [2.0, 0.5 + c * 1.5, c * 2.0, 1.5, 0.0, 0.5, 0.0, 1.5, 2.0];
    assert_near(&jacs[0], &want, 1e-6, "k by hand");
}

fn number_of(a: &ArgValue) -> f64 {
    match a {
        ArgValue::Scalar(c) => number(c),
        other => panic!("not a scalar: {other:?}"),
    }
}

#[test]
fn dense_lengths_are_named_in_the_error() {
    let j = jit("[jacobian(J)]
[jacobian(Jr, reverse)]
[hessian(H)]
double f(double x, double[] a) { return x * a[0] * a[1]; }");
    // Three columns, one row.
    for name in ["J", "Jr"] {
        for n in [2, 4, 0] {
            let mut args = [d(1.0), arr(&[2.0, 3.0]), arr(&vec![0.0; n])];
            match j.call(name, &mut args) {
                Err(CallError::Runtime(m)) => assert!(
                    m.starts_with(&format!(
                        "len(jac) = {n} differs from nrows * ncols = 3 at "
                    )),
                    "{name}, {n}: {m}"
                ),
                other => panic!("{name}, len(jac) = {n}: {other:?}"),
            }
        }
    }
    for n in [3, 10] {
        let mut args = [d(1.0), arr(&[2.0, 3.0]), arr(&vec![0.0; n])];
        match j.call("H", &mut args) {
            Err(CallError::Runtime(m)) => assert!(
                m.starts_with(&format!(
                    "len(hess) = {n} differs from ncols * ncols = 9 at "
                )),
                "{n}: {m}"
            ),
            other => panic!("len(hess) = {n}: {other:?}"),
        }
    }
}
