//! Element addresses of unchecked accesses in loops (codegen's
//! `split_elem_addr`): `a[x + k]` with a constant `k` (through a chain of
//! constant `add`s and `sub`s: `x[i + 3 - 1 - 4]`) folds `k` into the
//! access, and `a[outer + inner]` in a one-block loop adds the invariant
//! `outer` to the array's address once, outside the loop. Every shape,
//! negative constants and views included, must read and write the same
//! elements as before: values computed here in Rust are the oracle. The
//! row lengths also cover `unroll-inner`'s paths: no unrolled iteration,
//! one or two of them, with and without a remainder.

use crate::support::f64s;
use adc::{ArgValue, ArrayValue, Constant};

const SOURCE: &str = "
double stencil(double[] a) {
    double s = 0.0;
    for (int i = 0; i < len(a) - 2; i++) s += a[i + 2] * 3.0 - a[i] + a[i + 1] * a[i + 1];
    for (int i = 1; i < len(a); i++) s += a[i - 1] * 0.5;
    return s;
}
double rows(double[] p, double[] c, int d) {
    double total = 0.0;
    for (int i = 0; i < len(p) / d; i++) {
        for (int j = 0; j < len(c) / d; j++) {
            double dist = 0.0;
            for (int r = 0; r < d; r++) { double e = c[j * d + r] - p[i * d + r]; dist += e * e; }
            for (int r = 0; r < d - 1; r++) dist += c[j * d + r + 1] * p[i * d + (r + 1)];
            total += dist * double(j + 1);
        }
    }
    return total;
}
void scale_rows(double[] a, int d, out double[] b) {
    for (int k = 0; k < len(a) / d; k++) {
        for (int r = 0; r < d; r++) b[k * d + r] = a[k * d + r] * double(k + 2) + a[(k * d + r + 1) % len(a)];
    }
}
double tail(double[] p) {
    double s = 0.0;
    for (int i = 0; i < len(p) - 2; i++) s += p[i + 2] * double(i + 1) - p[i];
    return s;
}
double views(double[] a) { return tail(a[1..]) + 2.0 * tail(a[3..len(a) - 1]); }
void chains(double[] x, out double[] z) {
    for (int i = 2; i < len(x); i++) z[i - 1] = x[i + 3 - 1 - 4] * 2.0 + x[(i + 2) - 3] - x[i - 2 + 2];
}
";

fn arr(v: &[f64]) -> ArgValue {
    ArgValue::Array(ArrayValue::F64(v.to_vec()))
}

fn tail(p: &[f64]) -> f64 {
    (0..p.len().saturating_sub(2))
        .map(|i| p[i + 2] * (i + 1) as f64 - p[i])
        .sum()
}

#[test]
fn split_addresses_read_and_write_the_same_elements() {
    let j = adc::compile_jit("addressing.ad", SOURCE, &adc::CompileOptions::default())
        .unwrap_or_else(|f| panic!("{f}"));
    let a: Vec<f64> = (0..23)
        .map(|k| ((k * 7 % 11) as f64 - 5.0) * 0.37)
        .collect();
    let call = |name: &str, args: &mut [ArgValue]| f64s(&j.call(name, args).expect("runs"))[0];

    let want: f64 = (1..a.len() - 1)
        .map(|i| a[i + 1] * 3.0 - a[i - 1] + a[i] * a[i])
        .sum();
    assert_eq!(call("stencil", &mut [arr(&a)]), want);

    for d in [1usize, 3, 4, 7, 8, 9] {
        let (p, c) = (&a[..(a.len() / d) * d], &a[2..2 + (12 / d) * d]);
        let mut want = 0.0;
        for i in 0..p.len() / d {
            for jj in 0..c.len() / d {
                let mut dist = 0.0;
                for r in 0..d {
                    let e = c[jj * d + r] - p[i * d + r];
                    dist += e * e;
                }
                for r in 0..d - 1 {
                    dist += c[jj * d + r + 1] * p[i * d + (r + 1)];
                }
                want += dist * (jj + 1) as f64;
            }
        }
        let got = call(
            "rows",
            &mut [arr(p), arr(c), ArgValue::Scalar(Constant::I64(d as i64))],
        );
        assert_eq!(got, want, "rows, d = {d}");

        let mut args = [
            arr(p),
            ArgValue::Scalar(Constant::I64(d as i64)),
            arr(&vec![0.0; p.len()]),
        ];
        j.call("scale_rows", &mut args).expect("runs");
        let ArgValue::Array(ArrayValue::F64(b)) = &args[2] else {
            panic!("out array")
        };
        for k in 0..p.len() / d {
            for r in 0..d {
                let q = k * d + r;
                assert_eq!(
                    b[q],
                    p[q] * (k + 2) as f64 + p[(q + 1) % p.len()],
                    "scale_rows, d = {d}, element {q}"
                );
            }
        }
    }

    let want = tail(&a[1..]) + 2.0 * tail(&a[3..a.len() - 1]);
    assert_eq!(call("views", &mut [arr(&a)]), want);

    // Indices through chains of constant `add`s and `sub`s (codegen's
    // `constant_offset`), on lengths with and without unrolled iterations.
    for n in 0..14 {
        let x = &a[..n];
        let mut args = [arr(x), arr(&vec![0.0; n])];
        j.call("chains", &mut args).expect("runs");
        let ArgValue::Array(ArrayValue::F64(z)) = &args[1] else {
            panic!("out array")
        };
        let mut want = vec![0.0; n];
        for i in 2..n {
            want[i - 1] = x[i - 2] * 2.0 + x[i - 1] - x[i];
        }
        assert_eq!(z, &want, "chains, n = {n}");
    }
}

/// `unroll-inner`'s entry and exit tests (`i < N - 3`, `L + 3 < i`, with
/// the limit's wrap-around checked) on trip counts 0 to 13 and bounds at
/// the ends of `int`'s range, counting up with `<` and `!=` and down with
/// `!=`: every loop runs exactly the iterations the source says.
#[test]
fn unrolled_loops_run_every_iteration_at_the_ends_of_the_range() {
    let src = "
double up(int lo, int hi) { double s = 0.0; for (int i = lo; i < hi; i++) s += double(i % 7) * 0.5 + 1.0; return s; }
double upne(int lo, int hi) { double s = 0.0; for (int i = lo; i != hi; i++) s = s * 0.75 + double(i % 3); return s; }
double dn(int hi, int lo) { double s = 0.0; int i = hi; while (i != lo) { i = i - 1; s = s * 0.5 + double(i % 5); } return s; }
";
    let j = adc::compile_jit("unroll.ad", src, &adc::CompileOptions::default())
        .unwrap_or_else(|f| panic!("{f}"));
    let call = |name: &str, a: i64, b: i64| {
        let mut args = [
            ArgValue::Scalar(Constant::I64(a)),
            ArgValue::Scalar(Constant::I64(b)),
        ];
        f64s(&j.call(name, &mut args).expect("runs"))[0]
    };
    let (max, min) = (i64::MAX, i64::MIN);
    let mut ranges: Vec<(i64, i64)> = (0..14).map(|n| (-2, n - 2)).collect();
    ranges.extend([
        (max - 10, max),
        (max - 4, max),
        (max - 3, max),
        (min, min + 9),
        (min, min + 3),
        (5, 2),
    ]);
    for &(lo, hi) in &ranges {
        let want: f64 = (lo..hi).map(|i| (i % 7) as f64 * 0.5 + 1.0).sum();
        assert_eq!(call("up", lo, hi), want, "up({lo}, {hi})");
        if lo <= hi {
            let want = (lo..hi).fold(0.0, |s, i| s * 0.75 + (i % 3) as f64);
            assert_eq!(call("upne", lo, hi), want, "upne({lo}, {hi})");
            let want = (lo..hi).rev().fold(0.0, |s, i| s * 0.5 + (i % 5) as f64);
            assert_eq!(call("dn", hi, lo), want, "dn({hi}, {lo})");
        }
    }
    let mut m = adc::driver::frontend("unroll.ad", src, &adc::CompileOptions::default())
        .unwrap_or_else(|f| panic!("{f}"));
    adc::driver::run_stages(&mut m, adc::Stage::Final).expect("stages run");
    let text = m.to_string();
    assert_eq!(
        text.matches("const 4\n").count() + text.matches("const -4\n").count(),
        3,
        "{text}"
    );
}
