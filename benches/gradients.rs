//! Benchmark (not a test): reverse-mode gradient time over primal time for
//! example kernels (the cheap-gradient bound asks for at most about 4x),
//! and compile latency with the derivative generated.
//!
//! Run: `cargo bench --bench gradients`.

mod common;

use adc::derivs::{add_request, derivative_args, Request};
use adc::driver::{self, Stage};
use adc::{ArgValue, Constant};
use common::{best_of, f64s};

struct Case {
    file: &'static str,
    func: &'static str,
    args: Vec<ArgValue>,
    reps: usize,
}

fn main() {
    let (n, k, hs, xs, hn) = (100_000usize, 8usize, 64usize, 64usize, 1000usize);
    let cases = vec![
        Case {
            file: "gmm.ad",
            func: "gmm_loglik",
            args: vec![
                f64s(n, |i| (i as f64).sin() * 3.0),
                f64s(k, |_| 1.0 / k as f64),
                f64s(k, |j| j as f64 - 4.0),
                f64s(k, |j| 0.5 + 0.1 * j as f64),
            ],
            reps: 3,
        },
        Case {
            file: "lstm.ad",
            func: "lstm_loss",
            args: vec![
                f64s(4 * hs * (xs + hs), |i| 0.01 * (i as f64).sin()),
                f64s(4 * hs, |i| 0.001 * i as f64),
                f64s(xs, |i| (i as f64).cos()),
                f64s(hs, |i| 0.1 * (i as f64).sin()),
                f64s(hs, |i| 0.2 * (i as f64).cos()),
            ],
            reps: 100,
        },
        Case {
            file: "bessel.ad",
            func: "bessel_j",
            args: vec![
                ArgValue::Scalar(Constant::I64(3)),
                ArgValue::Scalar(Constant::F64(7.5)),
            ],
            reps: 20_000,
        },
        Case {
            file: "heat.ad",
            func: "heat_energy",
            args: vec![
                f64s(hn, |i| (0.01 * i as f64).sin()),
                ArgValue::Scalar(Constant::F64(0.25)),
                ArgValue::Scalar(Constant::I64(200)),
            ],
            reps: 3,
        },
    ];
    println!(
        "| kernel | primal (ms) | gradient (ms) | gradient / primal | compile with gradient (ms) |"
    );
    println!("|---|---|---|---|---|");
    for case in cases {
        let path = format!("{}/examples/{}", env!("CARGO_MANIFEST_DIR"), case.file);
        let source = std::fs::read_to_string(&path).expect("read example");
        let mut compiled = None;
        let compile = best_of(1, || {
            let mut m = driver::frontend(case.file, &source, false).expect("compiles");
            let name = add_request(&mut m, case.func, &Request::Grad).expect("request");
            let src = m.func(m.find(case.func).expect("exists")).clone();
            driver::run_stages(&mut m, Stage::Final).expect("derivative");
            let jit = adc_codegen::jit(&m, &|_| String::new(), &[]).expect("JIT");
            compiled = Some((jit, src, name));
        });
        let (jit, src, name) = compiled.expect("compiled once");
        let primal = best_of(case.reps, || {
            let mut a = case.args.clone();
            jit.call(case.func, &mut a).expect("primal runs");
        });
        let (dargs, _) = derivative_args(&src, &case.args, &Request::Grad).expect("args");
        let grad = best_of(case.reps, || {
            let mut a = dargs.clone();
            jit.call(&name, &mut a).expect("gradient runs");
        });
        println!(
            "| {} | {:.4} | {:.4} | {:.2} | {:.2} |",
            case.func,
            primal * 1e3,
            grad * 1e3,
            grad / primal,
            compile * 1e3
        );
    }
}
