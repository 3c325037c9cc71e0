//! `jam` runs two iterations of an outer loop with their inner loops side
//! by side. These nests run through the JIT (the whole pipeline, so after
//! `jam` and `unroll-inner`) for every outer trip count from 0 to 7 and
//! every inner one from 0 to 6 (odd and even outer counts, inner loops
//! that never run, run once, or run past `unroll-inner`'s four), against
//! the same loops written in Rust: the operations are the same in the same
//! order, so the results must be bitwise equal.

use adc::{driver, ArgValue, ArrayValue};

const SOURCE: &str = "
// GradBench llsq: the inner chain `r -= x[j] * p; p *= t`.
double llsq(double[] x, int n) {
    double sum = 0.0;
    for (int i = 0; i < n; i++) {
        double t = -1.0 + double(i) * 2.0 / double(n - 1);
        double r = t > 0.0 ? 1.0 : -1.0;
        double p = 1.0;
        for (int j = 0; j < len(x); j++) {
            r -= x[j] * p;
            p *= t;
        }
        sum += r * r;
    }
    return 0.5 * sum;
}
// The nearest of `k` centres (a running minimum and its index), the outer
// counter in the inner loop's addresses.
double nearest(double[] c, double[] x, int k) {
    int m = len(x);
    double best = 1e300;
    int at = -1;
    for (int i = 0; i < k; i++) {
        double d = 0.0;
        for (int j = 0; j < m; j++) {
            double e = c[i * m + j] - x[j];
            d += e * e;
        }
        if (d < best) { best = d; at = i; }
    }
    return best + double(at);
}
// An inner loop from 1, and a counter weighting the outer sum.
double weighted(double[] a, int n) {
    double s = 0.0;
    for (int i = 2; i < n; i++) {
        double q = 1.0;
        for (int j = 1; j < len(a); j++) q = q * a[j] + double(i);
        s = s * 0.5 + q;
    }
    return s;
}
";

fn llsq(x: &[f64], n: i64) -> f64 {
    let mut sum = 0.0;
    for i in 0..n {
        let t = -1.0 + i as f64 * 2.0 / (n - 1) as f64;
        let mut r = if t > 0.0 { 1.0 } else { -1.0 };
        let mut p = 1.0;
        for xj in x {
            r -= xj * p;
            p *= t;
        }
        sum += r * r;
    }
    0.5 * sum
}

fn nearest(c: &[f64], x: &[f64], k: i64) -> f64 {
    let m = x.len();
    let (mut best, mut at) = (1e300, -1i64);
    for i in 0..k.max(0) as usize {
        let mut d = 0.0;
        for j in 0..m {
            let e = c[i * m + j] - x[j];
            d += e * e;
        }
        if d < best {
            best = d;
            at = i as i64;
        }
    }
    best + at as f64
}

fn weighted(a: &[f64], n: i64) -> f64 {
    let mut s = 0.0;
    for i in 2..n {
        let mut q = 1.0;
        for aj in a.iter().skip(1) {
            q = q * aj + i as f64;
        }
        s = s * 0.5 + q;
    }
    s
}

fn array(v: &[f64]) -> ArgValue {
    ArgValue::Array(ArrayValue::F64(v.to_vec()))
}

fn int(n: i64) -> ArgValue {
    ArgValue::Scalar(adc::Constant::I64(n))
}

fn result(j: &adc::JitModule, name: &str, args: &mut [ArgValue]) -> f64 {
    match j.call(name, args) {
        Ok(r) if r.len() == 1 => crate::support::number(&r[0]),
        other => panic!("{name}: {other:?}"),
    }
}

#[test]
fn jam_finds_the_nests() {
    // What `jam` sees in the pipeline: the passes before it, and every
    // function here has a nest it takes (or the other test tests nothing).
    let opts = adc::CompileOptions::default();
    let mut module = driver::frontend("jam.ad", SOURCE, &opts).unwrap_or_else(|f| panic!("{f}"));
    adc_passes::opt::optimize_except(&mut module, &["jam", "unroll-inner"]);
    for f in &mut module.funcs {
        assert!(adc_passes::opt::jam::run(f), "`jam` leaves `{}`", f.name);
    }
    adc_ir::verify(&module).unwrap_or_else(|e| panic!("{e}"));
}

#[test]
fn jammed_nests_compute_what_the_loops_did() {
    let j = crate::support::jit(SOURCE);
    for m in 0..=6usize {
        let x: Vec<f64> = (0..m).map(|k| 0.3 - 0.11 * k as f64).collect();
        for n in 0..=7i64 {
            let mut args = [array(&x), int(n)];
            let got = result(&j, "llsq", &mut args);
            assert_eq!(got.to_bits(), llsq(&x, n).to_bits(), "llsq m={m} n={n}");
            let c: Vec<f64> = (0..n.max(0) as usize * m)
                .map(|k| ((k * 7) % 5) as f64 * 0.25 - 0.4)
                .collect();
            let mut args = [array(&c), array(&x), int(n)];
            let got = result(&j, "nearest", &mut args);
            assert_eq!(
                got.to_bits(),
                nearest(&c, &x, n).to_bits(),
                "nearest m={m} k={n}"
            );
            let mut args = [array(&x), int(n)];
            let got = result(&j, "weighted", &mut args);
            assert_eq!(
                got.to_bits(),
                weighted(&x, n).to_bits(),
                "weighted m={m} n={n}"
            );
        }
    }
}
