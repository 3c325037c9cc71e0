//! Register promotion of accumulated array elements (`opt/promote.rs`):
//! benches/ad/matmul.ad's product against one computed here, and the
//! gradient of a matrix-product loss (whose reverse sweep accumulates into
//! shadow elements the same way) against forward mode.

use crate::support::f64s;
use adc::{ArgValue, ArrayValue, Constant};

fn arr(x: &[f64]) -> ArgValue {
    ArgValue::Array(ArrayValue::F64(x.to_vec()))
}

#[test]
fn promoted_matmul_matches_a_direct_product() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/benches/ad/matmul.ad");
    let src = std::fs::read_to_string(path).expect("read matmul.ad");
    let j = adc::compile_jit("matmul.ad", &src, &adc::CompileOptions::default()).expect("compiles");
    for n in [0usize, 1, 3, 7] {
        let a: Vec<f64> = (0..n * n).map(|i| (0.3 * i as f64).sin()).collect();
        let b: Vec<f64> = (0..n * n).map(|i| (0.7 * i as f64).cos()).collect();
        let mut args = [
            arr(&a),
            arr(&b),
            arr(&vec![9.0; n * n]),
            ArgValue::Scalar(Constant::I64(n as i64)),
        ];
        let sum = f64s(&j.call("matmul", &mut args).expect("runs"))[0];
        let ArgValue::Array(ArrayValue::F64(o)) = &args[2] else {
            panic!("o is not a double array")
        };
        let mut total = 0.0;
        for i in 0..n {
            for k in 0..n {
                let mut s = 0.0;
                for p in 0..n {
                    s += a[i * n + p] * b[p * n + k];
                }
                assert_eq!(o[i * n + k], s, "o[{i}, {k}] for n = {n}");
                total += s;
            }
        }
        assert!(
            (sum - total).abs() <= 1e-12 * total.abs().max(1.0),
            "sum for n = {n}"
        );
    }
}

const LOSS: &str = "
[autodiff_reverse(df, Duplicated, Active)]
[autodiff_forward(tf, Dual, Dual)]
double f(double[] x) {
    int n = 4;
    double o[16];
    for (int i = 0; i < n; i++) {
        for (int j = 0; j < n; j++) {
            o[i * n + j] = 0.0;
            for (int p = 0; p < n; p++) o[i * n + j] += sin(x[i * n + p]) * x[16 + p * n + j];
        }
    }
    double s = 0.0;
    for (int i = 0; i < 16; i++) s += o[i] * o[i];
    return s;
}
";

#[test]
fn gradient_through_promoted_loops_matches_forward_mode() {
    let j = adc::compile_jit("loss.ad", LOSS, &adc::CompileOptions::default()).expect("compiles");
    let x: Vec<f64> = (0..32).map(|i| 0.1 + (0.37 * i as f64).sin()).collect();
    let mut args = [
        arr(&x),
        arr(&[0.0; 32]),
        ArgValue::Scalar(Constant::F64(1.0)),
    ];
    j.call("df", &mut args).expect("df runs");
    let ArgValue::Array(ArrayValue::F64(g)) = &args[1] else {
        panic!("shadow is not a double array")
    };
    for k in [0usize, 5, 17, 31] {
        let mut v = vec![0.0; 32];
        v[k] = 1.0;
        let t = f64s(&j.call("tf", &mut [arr(&x), arr(&v)]).expect("tf runs"))[1];
        assert!(
            (t - g[k]).abs() <= 1e-12 * t.abs().max(1.0),
            "d/dx{k}: forward {t}, reverse {}",
            g[k]
        );
    }
}

/// A state machine in `s[0..3]`, read and written under branches, with a
/// second exit (`break`): `promote-fixed` keeps the elements in registers
/// through the loop and stores them back at each exit.
const STATE: &str = "
int runs(double[] x, inout int[] s, int stop) {
    s[0] = 0;
    s[1] = -1;
    s[2] = 0;
    int i;
    for (i = 0; i < len(x); i++) {
        if (i == stop) { break; }
        if (s[0] == 0) {
            s[0] = 1;
            s[1] = i;
        } else if (x[i] > x[i - 1]) {
            s[2] = s[2] + 1;
        } else if (s[1] != i - 2) {
            s[0] = 2;
            s[1] = i;
        }
    }
    return i + s[2];
}
";

fn runs_model(x: &[f64], stop: i64) -> ([i64; 3], i64) {
    let mut s = [0i64, -1, 0];
    let mut i = 0;
    while (i as usize) < x.len() {
        if i == stop {
            break;
        }
        let k = i as usize;
        if s[0] == 0 {
            s[0] = 1;
            s[1] = i;
        } else if x[k] > x[k - 1] {
            s[2] += 1;
        } else if s[1] != i - 2 {
            s[0] = 2;
            s[1] = i;
        }
        i += 1;
    }
    (s, i + s[2])
}

#[test]
fn state_kept_in_registers_through_branches_matches_a_model() {
    let j = adc::compile_jit("runs.ad", STATE, &adc::CompileOptions::default()).expect("compiles");
    for n in 0..12usize {
        let x: Vec<f64> = (0..n)
            .map(|i| ((1.7 * i as f64).sin() * 3.0).round())
            .collect();
        for stop in [-1i64, 0, 1, 3, n as i64 - 1] {
            let mut args = [
                arr(&x),
                ArgValue::Array(ArrayValue::I64(vec![7, 7, 7, 7])),
                ArgValue::Scalar(Constant::I64(stop)),
            ];
            let got = j.call("runs", &mut args).expect("runs");
            let (s, r) = runs_model(&x, stop);
            assert_eq!(got, vec![Constant::I64(r)], "n = {n}, stop = {stop}");
            let ArgValue::Array(ArrayValue::I64(out)) = &args[1] else {
                panic!("s is not an int array")
            };
            assert_eq!(out[..], [s[0], s[1], s[2], 7], "n = {n}, stop = {stop}");
        }
    }
    // The loop reads no element of `s`: the one load left is the
    // return's `s[2]`, after the loop (without `promote-fixed`, 4).
    let mut m = adc::driver::frontend("runs.ad", STATE, &adc::CompileOptions::default())
        .unwrap_or_else(|f| panic!("{f}"));
    adc::driver::run_stages(&mut m, adc::Stage::Final).expect("stages run");
    let text = m.to_string();
    let loads = text.lines().filter(|l| l.contains("i64 = load")).count();
    assert_eq!(loads, 1, "{text}");
}
