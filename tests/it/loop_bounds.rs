//! Counted loops whose exit test compares the counter with a bound the
//! reverse sweep can see (a constant or a value defined once per call) are
//! reversed from a counter computed from that bound (`transpose`'s
//! `counter_from_bound`), not from a taped one. Every form of test and
//! step it handles, on trip counts 0 to 7: the gradient (reverse mode)
//! must equal the forward tangents along each input (exact up to
//! rounding), and the reverse derivative must tape no `i64` at all.

use crate::support::f64s;
use adc::{ArgValue, ArrayValue, Constant};

const SOURCE: &str = "
[autodiff_reverse(df, Active, Duplicated, Const, Active)]
[autodiff_forward(tf, Dual, Dual, Const, Dual)]
double f(double x, double[] a, int n) {
    double s = x;
    for (int i = 1; i <= n; i += 2) s = s * a[i] + x;
    for (int j = n; j > 0; j -= 3) s = sin(s) + a[j];
    for (int k = n; k >= 1; k--) s = s * 0.9 + a[k] * x;
    for (int p = 0; p != n; p++) s = s + a[p] * s * 0.1;
    for (int q = 2; n + 1 > q; q++) s = s * 1.1 - a[q];
    for (int r = 0; !(r >= n); r += 4) s = s * x;
    for (int t = 0; t < 3; t++) s = s + a[t] * 0.5;
    return s;
}
";

fn d(x: f64) -> ArgValue {
    ArgValue::Scalar(Constant::F64(x))
}

#[test]
fn counters_computed_from_their_bound_give_the_forward_gradient() {
    let j = adc::compile_jit("bounds.ad", SOURCE, &adc::CompileOptions::default())
        .unwrap_or_else(|f| panic!("{f}"));
    let a = [0.7, -0.4, 1.2, 0.3, -0.9, 0.5, -0.2, 0.8, 1.1];
    let x = 0.6;
    for n in 0..8i64 {
        let mut args = [
            d(x),
            ArgValue::Array(ArrayValue::F64(a.to_vec())),
            ArgValue::Array(ArrayValue::F64(vec![0.0; a.len()])),
            ArgValue::Scalar(Constant::I64(n)),
            d(1.0),
        ];
        let r = f64s(&j.call("df", &mut args).expect("df runs"));
        let ArgValue::Array(ArrayValue::F64(da)) = &args[2] else {
            panic!("shadow")
        };
        let mut grad = vec![r[1]];
        grad.extend(da);
        // Forward mode along x, then along each a[k].
        for dir in 0..=a.len() {
            let mut ta = vec![0.0; a.len()];
            if dir > 0 {
                ta[dir - 1] = 1.0;
            }
            let mut args = [
                d(x),
                d(if dir == 0 { 1.0 } else { 0.0 }),
                ArgValue::Array(ArrayValue::F64(a.to_vec())),
                ArgValue::Array(ArrayValue::F64(ta)),
                ArgValue::Scalar(Constant::I64(n)),
            ];
            let t = f64s(&j.call("tf", &mut args).expect("tf runs"));
            assert!(
                (r[0] - t[0]).abs() <= 1e-12 * t[0].abs().max(1.0),
                "n = {n}: values"
            );
            assert!(
                (grad[dir] - t[1]).abs() <= 1e-12 * t[1].abs().max(1.0),
                "n = {n}, direction {dir}: reverse {} forward {}",
                grad[dir],
                t[1]
            );
        }
    }
}

#[test]
fn counters_with_a_visible_bound_are_not_taped() {
    let reports = adc::driver::tape_reports("bounds.ad", SOURCE, &adc::CompileOptions::default())
        .unwrap_or_else(|f| panic!("{f}"));
    let df = reports
        .iter()
        .find(|r| r.function == "df")
        .expect("df's report");
    let counters: Vec<_> = df.entries.iter().filter(|e| e.ty == "i64").collect();
    assert!(
        counters.is_empty(),
        "taped counters: {:?}",
        counters.iter().map(|e| &e.location).collect::<Vec<_>>()
    );
    assert!(!df.entries.is_empty(), "the loops' values are taped");
}
