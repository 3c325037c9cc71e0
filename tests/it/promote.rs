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
