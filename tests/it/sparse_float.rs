//! Sparse Jacobians and Hessians of `float` functions
//! (docs/jacobians.md#sparse-jacobians): the dependency sweep keeps its
//! set handles in `f64` (`ad::handles`), so the patterns and values are
//! those of `double` code, compared here with the dense `[jacobian]` and
//! `[hessian]` of the same `float` function (to `float` rounding) at
//! thousands of columns, where handles go far past what the first 256
//! would need; through calls, `inout` scalars, a `float` result,
//! conversions inside `double` code, the element shape (by columns for
//! `float`) and the band shape of sparse Hessians (the general path for
//! `float`).

use crate::sparse_hessian::check_within as check_hessian;
use crate::sparse_jacobian::{check_within, int, pattern};
use crate::support::{d, jit};
use adc::{ArgValue, ArrayValue, Constant};

/// A `float[]` argument.
fn farr(xs: &[f32]) -> ArgValue {
    ArgValue::Array(ArrayValue::F32(xs.to_vec()))
}

fn inputs(n: usize) -> Vec<f32> {
    (0..n)
        .map(|i| 0.3 + ((i * 37) % 17) as f32 / 11.0)
        .collect()
}

/// Relative tolerance between a sparse and a dense entry of `float` code.
const TOL: f64 = 1e-5;

#[test]
fn a_banded_float_jacobian_at_thousands_of_columns() {
    let j = jit("[jacobian(S, sparse)]
[jacobian(J)]
void f(float[] x, out float[] y) {
    for (int i = 0; i < len(y); i++) {
        float s = x[i + 1] * x[i + 1] - sin(x[i]);
        if (i > 0) { s += x[i - 1] * 0.5; }
        if (i % 7 == 3) { s = s * exp(x[i + 2]); }
        y[i] = s;
    }
}");
    let n = 3000;
    let x = inputs(n + 2);
    let args = [farr(&x), farr(&vec![0.0; n])];
    let csr = check_within(&j, "f", &args, (n, n + 2), TOL);
    let p = pattern(&csr);
    assert_eq!(p[0], [0, 1]);
    assert_eq!(p[1], [0, 1, 2]);
    assert_eq!(p[3], [2, 3, 4, 5]);
    let m = n as i64;
    assert_eq!(p[n - 2], [m - 3, m - 2, m - 1]);
    assert_eq!(p[n - 1], [m - 2, m - 1, m, m + 1]);
}

#[test]
fn a_float_result_inout_scalars_and_calls() {
    let j = jit("float sq(float a, float b) { return a * b + cos(a); }
void acc(float[] x, int i, inout float s) { s += sq(x[i], x[i + 1]); }
[jacobian(S, sparse)]
[jacobian(J)]
float f(float[] x, inout float t, out float[] y, double w) {
    float s = 0.0;
    for (int i = 0; i + 1 < len(x); i++) {
        acc(x, i, s);
        y[i] = sq(x[i], t) + float(w) * x[i + 1];
    }
    t = t * s;
    return s * x[0];
}");
    let n = 600;
    let x = inputs(n);
    let args = [
        farr(&x),
        ArgValue::Scalar(Constant::F32(1.5)),
        farr(&vec![0.0; n - 1]),
        d(0.25),
    ];
    // Rows: the result, `t`, then `y`; columns: `x`, `t`, `w`.
    check_within(&j, "f", &args, (1 + 1 + (n - 1), n + 2), TOL);
}

#[test]
fn float_values_inside_double_code() {
    let j = jit("[jacobian(S, sparse)]
[jacobian(J)]
void f(double[] x, out double[] y) {
    float h[len(x)];
    for (int i = 0; i < len(x); i++) { h[i] = float(x[i]) * 2.0; }
    for (int i = 0; i + 1 < len(x); i++) { y[i] = double(h[i] * h[i + 1]) + x[i]; }
}");
    let n = 2000;
    let x: Vec<f64> = inputs(n).into_iter().map(f64::from).collect();
    let args = [
        crate::support::arr(&x),
        crate::support::arr(&vec![0.0; n - 1]),
    ];
    let p = pattern(&check_within(&j, "f", &args, (n - 1, n), TOL));
    assert!(p
        .iter()
        .enumerate()
        .all(|(i, r)| r == &[i as i64, i as i64 + 1]));
}

#[test]
fn the_element_shape_goes_by_columns_for_float() {
    // An element function (each iteration writes its own rows from a few
    // inputs): `double` code takes the element path, `float` code the
    // coloring, with the same pattern.
    let src = "[jacobian(S, sparse)]
[jacobian(J)]
void f(T[] x, int[] at, out T[] y) {
    for (int i = 0; i < len(at); i++) {
        y[2 * i] = x[at[i]] * x[at[i] + 1];
        y[2 * i + 1] = sin(x[at[i] + 1]) - x[0];
    }
}";
    let n = 1500;
    let at: Vec<i64> = (0..n as i64).map(|i| (i * 7) % (n as i64 - 1)).collect();
    let at = ArgValue::Array(ArrayValue::I64(at));
    let x = inputs(n);
    let xd: Vec<f64> = x.iter().map(|&v| f64::from(v)).collect();
    let single = jit(&src.replace('T', "float"));
    let args = [farr(&x), at.clone(), farr(&vec![0.0; 2 * n])];
    let p = pattern(&check_within(&single, "f", &args, (2 * n, n), TOL));
    let double = jit(&src.replace('T', "double"));
    let args = [
        crate::support::arr(&xd),
        at,
        crate::support::arr(&vec![0.0; 2 * n]),
    ];
    let q = pattern(&check_within(&double, "f", &args, (2 * n, n), 1e-13));
    assert_eq!(p, q);
}

#[test]
fn sparse_reverse_of_float_is_e0309() {
    let src = "[jacobian(S, sparse, reverse)]\nvoid f(float[] x, out float[] y) { y[0] = x[0]; }";
    let e = adc::compile_jit("t.ad", src, &adc::CompileOptions::default())
        .err()
        .expect("refused");
    assert_eq!(e.diagnostics[0].code, "E0309", "{e}");
    assert!(e.to_string().contains("sparse, reverse)` of `f`"), "{e}");
    // `sparse, forward` (the columns) is the way.
    let j = jit(&src.replace("reverse", "forward"));
    let mut a = [
        farr(&[2.0]),
        farr(&[0.0]),
        crate::support::arr(&[0.0]),
        ArgValue::Array(ArrayValue::I64(vec![0])),
        ArgValue::Array(ArrayValue::I64(vec![0; 2])),
    ];
    j.call("S", &mut a).expect("runs");
    assert_eq!(crate::support::arg_floats(&a[2]), [1.0]);
}

#[test]
fn float_hessians_general_and_band_shaped() {
    // A band shape (`x[i]` meets `x[i + 1]`), which `double` code gets
    // from a table, and a general one (an arrow and a scalar).
    let band = jit("[hessian(S, sparse)]
[hessian(H)]
float f(float[] x) {
    float s = 0.0;
    for (int i = 0; i + 1 < len(x); i++) { s += x[i] * x[i] * x[i + 1]; }
    return s;
}");
    let n = 2500;
    let x = inputs(n);
    let p = check_hessian(&band, "f", &[farr(&x)], n, TOL);
    assert_eq!(p[0], [0]);
    assert!(p[1..n - 1]
        .iter()
        .enumerate()
        .all(|(i, r)| r == &[i as i64, i as i64 + 1]));
    assert_eq!(p[n - 1], [n as i64 - 2], "x[n - 1] enters linearly");
    let general = jit("[hessian(S, sparse)]
[hessian(H)]
float g(float[] x, float a, int k) {
    float s = a * a;
    for (int i = 0; i < len(x); i++) {
        s += sin(x[i] * x[0]) + a * x[i] * x[(i + k) % len(x)];
    }
    return s / (1.0 + a * a);
}");
    let n = 400;
    let x = inputs(n);
    let args = [farr(&x), ArgValue::Scalar(Constant::F32(0.7)), int(3)];
    check_hessian(&general, "g", &args, n + 1, TOL);
}

#[test]
fn a_custom_derivative_sweeps_the_float_gradient() {
    // The pattern from the sweep of the gradient (its tape of `float`s
    // carries `double` handles).
    let j = jit(
        "float sq_rev(float x, float seed) { return 2.0 * x * seed; }
[reverse_derivative(sq_rev)]
float sq(float x) { return x * x; }
[hessian(S, sparse)]
[hessian(H)]
float f(float[] x, float a) {
    float s = 0.0;
    for (int i = 0; i + 1 < len(x); i++) {
        s += x[i] * x[i] * x[i + 1] + sin(a * x[i]) + sq(x[i + 1]);
    }
    return s;
}",
    );
    let n = 700;
    let args = [farr(&inputs(n)), ArgValue::Scalar(Constant::F32(0.5))];
    let p = check_hessian(&j, "f", &args, n + 1, TOL);
    assert_eq!(
        p[n].len(),
        n,
        "`a` meets every `x[i]` but the last, and itself"
    );
}
