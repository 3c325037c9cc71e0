//! Two-lane vector code (codegen's `translate/simd.rs`) for the four-copy
//! loops of `unroll-inner`: elementwise loops, with and without an offset
//! between the arrays' indices, an in-place update, the strong-zero
//! products of a reverse sweep, its tape pops (two cells a pair), and a
//! recurrence through one array that
//! must stay scalar (copy `k + 1` reads what copy `k` writes). Every trip
//! count from 0 to 13 covers no unrolled iteration, one or several, with
//! and without a remainder. The values computed here in Rust, in the same
//! order, are the oracle: each lane must give exactly the scalar result.

mod support;

use adc::{ArgValue, ArrayValue};

const SOURCE: &str = "
void rk(double[] y, double[] k, double h, out double[] t) {
    for (int i = 0; i < len(y); i++) t[i] = y[i] + h * k[i] / 2.0;
}
void shift(double[] x, double[] y, out double[] z) {
    z[0] = x[0];
    for (int i = 1; i < len(x); i++) z[i] = x[i] * y[i - 1];
}
void inplace(inout double[] a, double[] b) {
    for (int i = 0; i < len(a); i++) a[i] = sqrt(abs(a[i])) * 2.0 - b[i];
}
void recur(inout double[] a, double[] b) {
    for (int i = 1; i < len(a); i++) a[i] = a[i - 1] * 0.5 + b[i];
}
[autodiff_reverse(dsq, Duplicated, Duplicated)]
void sq(inout double[] t, double[] u) { for (int i = 0; i < len(t); i++) t[i] = t[i] * t[i] + u[i]; }
[autodiff_reverse(dmul, Duplicated, Duplicated, Duplicated)]
void mul(double[] x, double[] y, out double[] z) {
    for (int i = 0; i < len(z); i++) z[i] = x[i] * y[i];
}
";

fn arr(v: &[f64]) -> ArgValue {
    ArgValue::Array(ArrayValue::F64(v.to_vec()))
}

fn got(a: &ArgValue) -> Vec<f64> {
    match a {
        ArgValue::Array(ArrayValue::F64(v)) => v.clone(),
        other => panic!("not a double array: {other:?}"),
    }
}

fn data(n: usize, scale: f64, shift: f64) -> Vec<f64> {
    (0..n)
        .map(|i| (i as f64 * scale + shift).sin() * 3.0 - 0.5)
        .collect()
}

/// Bitwise equality (NaN included).
fn same(a: &[f64], b: &[f64]) -> bool {
    a.len() == b.len() && a.iter().zip(b).all(|(x, y)| x.to_bits() == y.to_bits())
}

#[test]
fn vector_pairs_compute_what_scalar_code_computes() {
    let j = support::jit(SOURCE);
    for n in 0..=13usize {
        let (y, k, b) = (data(n, 0.7, 0.1), data(n, 1.3, 0.4), data(n, 0.3, 2.0));
        let h = 0.37;
        let mut args = [arr(&y), arr(&k), support::d(h), arr(&vec![0.0; n])];
        j.call("rk", &mut args).expect("rk runs");
        let want: Vec<f64> = (0..n).map(|i| y[i] + h * k[i] / 2.0).collect();
        assert!(same(&got(&args[3]), &want), "rk n={n}");

        if n > 0 {
            let mut args = [arr(&y), arr(&k), arr(&vec![0.0; n])];
            j.call("shift", &mut args).expect("shift runs");
            let mut want = vec![y[0]];
            want.extend((1..n).map(|i| y[i] * k[i - 1]));
            assert!(same(&got(&args[2]), &want), "shift n={n}");
        }

        let mut args = [arr(&y), arr(&b)];
        j.call("inplace", &mut args).expect("inplace runs");
        let want: Vec<f64> = (0..n).map(|i| y[i].abs().sqrt() * 2.0 - b[i]).collect();
        assert!(same(&got(&args[0]), &want), "inplace n={n}");

        let mut args = [arr(&y), arr(&b)];
        j.call("recur", &mut args).expect("recur runs");
        let mut want = y.clone();
        for i in 1..n {
            want[i] = want[i - 1] * 0.5 + b[i];
        }
        assert!(same(&got(&args[0]), &want), "recur n={n}");
    }
}

#[test]
fn vector_strong_zero_products_keep_zero_adjoints_zero() {
    let j = support::jit(SOURCE);
    for n in 0..=13usize {
        let x = data(n, 0.9, 0.2);
        let mut y = data(n, 0.5, 1.1);
        let mut dz = data(n, 1.7, 0.3);
        // Infinite and NaN partials meet zero adjoints (strong zero), and a
        // NaN adjoint stays NaN.
        for (i, v) in y.iter_mut().enumerate() {
            match i % 5 {
                1 => *v = f64::INFINITY,
                3 => *v = f64::NAN,
                _ => {}
            }
        }
        for (i, v) in dz.iter_mut().enumerate() {
            match i % 5 {
                1 | 3 => *v = 0.0,
                4 => *v = f64::NAN,
                _ => {}
            }
        }
        let (dx0, dy0) = (data(n, 0.1, 0.0), data(n, 0.2, 0.5));
        let mut args = [
            arr(&x),
            arr(&dx0),
            arr(&y),
            arr(&dy0),
            arr(&vec![0.0; n]),
            arr(&dz),
        ];
        j.call("dmul", &mut args).expect("dmul runs");
        let strong = |a: f64, p: f64| if a == 0.0 { 0.0 } else { a * p };
        let want_dx: Vec<f64> = (0..n).map(|i| dx0[i] + strong(dz[i], y[i])).collect();
        let want_dy: Vec<f64> = (0..n).map(|i| dy0[i] + strong(dz[i], x[i])).collect();
        assert!(
            same(&got(&args[1]), &want_dx),
            "dx n={n}: {:?}",
            got(&args[1])
        );
        assert!(
            same(&got(&args[3]), &want_dy),
            "dy n={n}: {:?}",
            got(&args[3])
        );
        assert!(got(&args[5]).iter().all(|v| *v == 0.0), "dz is consumed");
    }
}

#[test]
fn vector_tape_pops_give_each_lane_its_own_cell() {
    let j = support::jit(SOURCE);
    for n in 0..=13usize {
        let t0 = data(n, 0.8, 0.3);
        let u = data(n, 0.4, 1.7);
        let mut seed = data(n, 1.1, 0.6);
        if n > 2 {
            seed[2] = 0.0;
        }
        let du0 = data(n, 0.2, 0.9);
        let mut args = [arr(&t0), arr(&seed), arr(&u), arr(&du0)];
        j.call("dsq", &mut args).expect("dsq runs");
        let strong = |a: f64, p: f64| if a == 0.0 { 0.0 } else { a * p };
        let want_dt: Vec<f64> = (0..n)
            .map(|i| strong(seed[i], t0[i]) + strong(seed[i], t0[i]))
            .collect();
        let want_du: Vec<f64> = (0..n).map(|i| du0[i] + seed[i]).collect();
        let want_t: Vec<f64> = (0..n).map(|i| t0[i] * t0[i] + u[i]).collect();
        assert!(
            same(&got(&args[1]), &want_dt),
            "dt n={n}: {:?}",
            got(&args[1])
        );
        assert!(same(&got(&args[3]), &want_du), "du n={n}");
        assert!(same(&got(&args[0]), &want_t), "t n={n}");
    }
}
