//! Two-lane vector code (codegen's `translate/simd/`) for the four-copy
//! loops of `unroll-inner`: elementwise loops, with and without an offset
//! between the arrays' indices, an in-place update, the strong-zero
//! products of a reverse sweep, its tape pops (two cells a pair), and a
//! recurrence through one array that
//! must stay scalar (copy `k + 1` reads what copy `k` writes). Every trip
//! count from 0 to 13 covers no unrolled iteration, one or several, with
//! and without a remainder. The values computed here in Rust, in the same
//! order, are the oracle: each lane must give exactly the scalar result.

use crate::support;

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

/// Ordered reductions (`translate/simd/chains.rs`): the lanes are taken
/// out one by one and added, multiplied or subtracted in the copies'
/// order, so the result is the scalar loop's to the bit, NaN and infinity
/// included; a running value used inside the loop (a prefix sum) or
/// updated twice stays scalar.
const REDUCTIONS: &str = "
double dist(double[] c, double[] p, int j, int i, int d) {
    double s = 0.0;
    for (int r = 0; r < d; r++) { double e = c[j * d + r] - p[i * d + r]; s += e * e; }
    return s;
}
double dot(double[] x, double[] y) {
    double s = 0.5;
    for (int i = 0; i < len(x); i++) s = x[i] * y[i] + s;
    return s;
}
double prod(double[] x) {
    double q = 1.0;
    for (int i = 0; i < len(x); i++) q *= x[i] * 0.5 + 1.0;
    return q;
}
double minus(double[] x, double h) {
    double s = 3.0;
    for (int i = 0; i < len(x); i++) s -= x[i] * h;
    return s;
}
double two(double[] x, double[] y) {
    double s = 0.0;
    double t = 1.0;
    for (int i = 0; i < len(x); i++) { s += x[i]; t += x[i] * y[i]; }
    return s * 1000.0 + t;
}
void prefix(double[] x, out double[] y) {
    double s = 0.0;
    for (int i = 0; i < len(x); i++) { s += x[i]; y[i] = s; }
}
double twice(double[] x) {
    double s = 0.0;
    for (int i = 0; i < len(x); i++) { s += x[i]; s *= 0.5; }
    return s;
}
[autodiff_reverse(dscale, Const, Active, Active)]
double scale(double[] x, double w) {
    double s = 0.0;
    for (int i = 0; i < len(x); i++) s += w * x[i] * x[i];
    return s;
}
";

fn scalar(j: &adc::JitModule, name: &str, args: &mut [ArgValue]) -> f64 {
    support::floats(j, name, args)[0]
}

fn same_bits(got: f64, want: f64, what: &str) {
    assert!(
        got.to_bits() == want.to_bits(),
        "{what}: got {got:?}, want {want:?}"
    );
}

#[test]
fn vector_reductions_keep_the_scalar_order_of_primal_sums() {
    let j = support::jit(REDUCTIONS);
    for n in 0..=13usize {
        let mut x = data(n, 0.7, 0.1);
        let y = data(n, 1.3, 0.4);
        // Large and small terms: any reassociation changes the sum's bits.
        for (i, v) in x.iter_mut().enumerate() {
            if i % 3 == 1 {
                *v *= 1e12;
            }
        }
        for d in [1usize, 3, 4, 5, 8, 9] {
            let (c, p) = (data(3 * d, 0.9, 0.3), data(2 * d, 1.1, 0.7));
            let mut args = [
                arr(&c),
                arr(&p),
                ArgValue::Scalar(adc::Constant::I64(2)),
                ArgValue::Scalar(adc::Constant::I64(1)),
                ArgValue::Scalar(adc::Constant::I64(d as i64)),
            ];
            let mut want = 0.0;
            for r in 0..d {
                let e = c[2 * d + r] - p[d + r];
                want += e * e;
            }
            same_bits(scalar(&j, "dist", &mut args), want, &format!("dist d={d}"));
        }
        let want = (0..n).fold(0.5, |s, i| x[i] * y[i] + s);
        same_bits(
            scalar(&j, "dot", &mut [arr(&x), arr(&y)]),
            want,
            &format!("dot n={n}"),
        );
        let want = (0..n).fold(1.0, |q, i| q * (x[i] * 0.5 + 1.0));
        same_bits(
            scalar(&j, "prod", &mut [arr(&x)]),
            want,
            &format!("prod n={n}"),
        );
        let want = (0..n).fold(3.0, |s, i| s - x[i] * 0.3);
        same_bits(
            scalar(&j, "minus", &mut [arr(&x), support::d(0.3)]),
            want,
            &format!("minus n={n}"),
        );
        let (s, t) = (0..n).fold((0.0, 1.0), |(s, t), i| (s + x[i], t + x[i] * y[i]));
        same_bits(
            scalar(&j, "two", &mut [arr(&x), arr(&y)]),
            s * 1000.0 + t,
            &format!("two n={n}"),
        );
        let want = (0..n).fold(0.0, |s, i| (s + x[i]) * 0.5);
        same_bits(
            scalar(&j, "twice", &mut [arr(&x)]),
            want,
            &format!("twice n={n}"),
        );
        let mut args = [arr(&x), arr(&vec![0.0; n])];
        j.call("prefix", &mut args).expect("prefix runs");
        let want: Vec<f64> = x
            .iter()
            .scan(0.0, |s, v| {
                *s += v;
                Some(*s)
            })
            .collect();
        assert!(same(&got(&args[1]), &want), "prefix n={n}");
        // The reverse sweep's adjoint of `w` sums x[i] * x[i]: derivative
        // contributions, added as a tree (chains.rs' free-order sums).
        // Terms of many magnitudes: the sum is that of the terms to
        // rounding (a dropped, doubled or misplaced term is far off), and
        // a NaN term makes it NaN.
        let x: Vec<f64> = (0..n)
            .map(|i| (i as f64 * 1.7 + 0.2).sin() * 10f64.powi(i as i32 % 5 - 2))
            .collect();
        let mut with_nan = x.clone();
        if n > 5 {
            with_nan[5] = f64::NAN;
        }
        for v in [&x, &with_nan] {
            let got = support::floats(
                &j,
                "dscale",
                &mut [arr(v), support::d(0.7), support::d(1.0)],
            );
            let want = (0..n).rev().fold(0.0, |s, i| s + v[i] * v[i]);
            let last = *got.last().expect("dscale returns the adjoint of w");
            if n == 8 && v.iter().all(|a| a.is_finite()) {
                // Counting down, four copies a pass: (t6 + t4) + (t7 + t5)
                // added to the running sum, then (t2 + t0) + (t3 + t1).
                let t: Vec<f64> = v.iter().map(|x| x * x).collect();
                let first = 0.0 + ((t[6] + t[4]) + (t[7] + t[5]));
                let tree = first + ((t[2] + t[0]) + (t[3] + t[1]));
                same_bits(last, tree, "dscale's tree at n=8");
            }
            let size: f64 = v.iter().map(|t| t * t).sum();
            let near = (last - want).abs() <= 4.0 * f64::EPSILON * size;
            assert!(
                near || (last.is_nan() && want.is_nan()),
                "dscale n={n}: got {last:?}, want {want:?}"
            );
        }
    }
}
