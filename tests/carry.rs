//! `carry` keeps neighbouring array elements in block parameters across loop
//! iterations. These loops run through the JIT (after `opt`, so after
//! `carry`) on arrays of every length from 0 to 9, so that loops that run
//! zero times, once and many times are all covered, against the same loops
//! written in Rust. The operations are the same in the same order, so the
//! results must be bitwise equal. (Reverse sweeps, whose loops count down,
//! are covered by the gradient tests of the examples.)

use adc::driver;
use adc::{ArgValue, ArrayValue};

const SOURCE: &str = "
    void smooth(double[] a, inout double[] b) {
        for (int i = 1; i < len(a) - 1; i++) b[i] = a[i - 1] + 2.0 * a[i] + a[i + 1];
    }
    void relax(inout double[] a) {
        for (int i = 1; i < len(a) - 1; i++) a[i] = 0.5 * (a[i - 1] + a[i + 1]);
    }
    void gap(inout double[] a) {
        for (int i = 2; i < len(a); i++) a[i] = a[i - 2] * 0.5 + a[i];
    }
    double pairs(inout double[] a) {
        double s = 0.0;
        for (int i = 1; i < len(a); i++) {
            s += a[i - 1] * a[i];
            a[i - 1] = s;
        }
        return s;
    }
";

fn smooth(a: &[f64], b: &mut [f64]) {
    for i in 1..a.len().saturating_sub(1) {
        b[i] = a[i - 1] + 2.0 * a[i] + a[i + 1];
    }
}

fn relax(a: &mut [f64]) {
    for i in 1..a.len().saturating_sub(1) {
        a[i] = 0.5 * (a[i - 1] + a[i + 1]);
    }
}

fn gap(a: &mut [f64]) {
    for i in 2..a.len() {
        a[i] += a[i - 2] * 0.5;
    }
}

fn pairs(a: &mut [f64]) -> f64 {
    let mut s = 0.0;
    for i in 1..a.len() {
        s += a[i - 1] * a[i];
        a[i - 1] = s;
    }
    s
}

/// A loop in Rust: changes its array in place, maybe returns a result.
type Kernel = fn(&mut [f64]) -> Option<f64>;

fn array(v: &[f64]) -> ArgValue {
    ArgValue::Array(ArrayValue::F64(v.to_vec()))
}

fn back(arg: &ArgValue) -> Vec<f64> {
    match arg {
        ArgValue::Array(ArrayValue::F64(v)) => v.clone(),
        other => panic!("expected a double array, got {other:?}"),
    }
}

#[test]
fn carried_loops_compute_what_the_loops_did() {
    // The pass must fire on every one of these loops, or this tests nothing.
    let mut module = driver::frontend("carry.ad", SOURCE, false).unwrap_or_else(|f| panic!("{f}"));
    for f in &mut module.funcs {
        adc_passes::optimize_function(f);
        assert!(
            adc_passes::carry::run(f),
            "`carry` leaves `{}` alone:\n{f}",
            f.name
        );
    }
    adc_ir::verify(&module).unwrap_or_else(|e| panic!("{e}\n{module}"));
    let jit = driver::compile_jit("carry.ad", SOURCE, false).unwrap_or_else(|f| panic!("{f}"));
    for n in 0..10 {
        let input: Vec<f64> = (0..n).map(|i| ((i * 7 + 3) % 11) as f64 - 4.5).collect();
        let mut want_b = vec![0.25; n];
        smooth(&input, &mut want_b);
        let mut args = [array(&input), array(&[0.25].repeat(n))];
        jit.call("smooth", &mut args).expect("smooth runs");
        assert_eq!(back(&args[1]), want_b, "smooth, n = {n}");

        let kernels: [(&str, Kernel); 3] = [
            ("relax", |a| {
                relax(a);
                None
            }),
            ("gap", |a| {
                gap(a);
                None
            }),
            ("pairs", |a| Some(pairs(a))),
        ];
        for (name, reference) in kernels {
            let mut want = input.clone();
            let want_result = reference(&mut want);
            let mut args = [array(&input)];
            let got = jit.call(name, &mut args).expect("runs");
            assert_eq!(back(&args[0]), want, "{name}, n = {n}");
            if let Some(w) = want_result {
                assert_eq!(got, vec![adc::Constant::F64(w)], "{name}'s result, n = {n}");
            }
        }
    }
}
