//! Every example: lowered and optimised IR snapshots (which must verify and
//! round-trip), and `main`'s JIT result against an independent reference
//! computed here in Rust.

use crate::support;

use adc::driver::{self, Stage};
use adc_ir::Constant;

fn main_result(file: &str) -> Constant {
    let path = support::root().join("examples").join(file);
    let source = support::read(&path);
    let jit = driver::compile_jit(file, &source, &adc::CompileOptions::default())
        .unwrap_or_else(|f| panic!("{f}"));
    let result = jit
        .call("main", &mut [])
        .unwrap_or_else(|e| panic!("{file}: {e}"));
    assert_eq!(result.len(), 1, "{file}: main returns one value");
    result[0]
}

fn main_f64(file: &str) -> f64 {
    match main_result(file) {
        Constant::F64(x) => x,
        other => panic!("{file}: expected a double, got {other:?}"),
    }
}

#[test]
fn example_ir_snapshots() {
    let _in = support::snapshots_in("examples/snapshots").bind_to_scope();
    for path in support::files("examples", "ad") {
        let name = support::name(&path);
        let source = support::read(&path);
        let mut module = driver::frontend(&name, &source, &adc::CompileOptions::default())
            .unwrap_or_else(|f| panic!("{f}"));
        let lowered = module.to_string();
        support::assert_round_trips(&lowered);
        insta::assert_snapshot!(format!("lower__{name}"), lowered);
        driver::run_stages(&mut module, Stage::Opt).expect("stages run");
        adc_ir::verify(&module)
            .unwrap_or_else(|e| panic!("{name}: optimised IR does not verify:\n{e}"));
        let optimised = module.to_string();
        support::assert_round_trips(&optimised);
        insta::assert_snapshot!(format!("opt__{name}"), optimised);
    }
}

#[test]
fn slang_f_matches_hand_formula() {
    let f = |a: f64, b: f64| {
        if a > 0.0 {
            a + b + 2.0 * a * b
        } else {
            a.sqrt()
        }
    };
    support::assert_close(
        main_f64("slang_f.ad"),
        f(1.5, -2.0) + f(0.0, 3.0),
        1e-15,
        "slang_f",
    );
}

#[test]
fn horner_matches_direct_polynomial() {
    let x: f64 = 1.25;
    let want = 2.0 * x.powi(3) - 3.0 * x.powi(2) + 0.5 * x + 7.0;
    support::assert_close(main_f64("horner.ad"), want, 1e-15, "horner");
}

#[test]
fn bessel_matches_tabulated_value() {
    // J_1(2.5) from Abramowitz & Stegun, table 9.1.
    support::assert_close(
        main_f64("bessel.ad"),
        0.497_094_102_464_274,
        1e-13,
        "bessel",
    );
}

#[test]
fn logsumexp_cross_entropy_matches_naive_formula() {
    let z: [f64; 4] = [1.0, 2.5, -0.5, 0.25];
    let want = z.iter().map(|v| v.exp()).sum::<f64>().ln() - z[1];
    support::assert_close(main_f64("logsumexp.ad"), want, 1e-14, "logsumexp");
}

#[test]
fn lstm_matches_reference() {
    let (hs, xs) = (2usize, 3usize);
    let cols = xs + hs;
    let w: Vec<f64> = (0..4 * hs * cols).map(|i| 0.1 * (i as f64).sin()).collect();
    let b: Vec<f64> = (0..4 * hs).map(|i| 0.05 * i as f64 - 0.2).collect();
    let x = [0.5, -1.0, 2.0];
    let h = [0.1, -0.3];
    let c = [0.7, 0.2];
    let sig = |v: f64| 1.0 / (1.0 + (-v).exp());
    let mut want = 0.0;
    for (k, c_k) in c.iter().enumerate() {
        let gate: Vec<f64> = (0..4)
            .map(|g| {
                let row = g * hs + k;
                let input: f64 = (0..xs).map(|j| w[row * cols + j] * x[j]).sum();
                let hidden: f64 = (0..hs).map(|j| w[row * cols + xs + j] * h[j]).sum();
                b[row] + input + hidden
            })
            .collect();
        let c_new = sig(gate[1]) * c_k + sig(gate[0]) * gate[2].tanh();
        let h_new = sig(gate[3]) * c_new.tanh();
        want += h_new + 0.5 * c_new;
    }
    support::assert_close(main_f64("lstm.ad"), want, 1e-13, "lstm");
}

#[test]
fn gmm_matches_direct_density() {
    let x: [f64; 5] = [-1.2, 0.3, 0.8, 2.5, 3.1];
    let (w, mu, sigma): ([f64; 2], [f64; 2], [f64; 2]) = ([0.4, 0.6], [0.0, 2.5], [1.0, 0.7]);
    let want: f64 = x
        .iter()
        .map(|xn| {
            (0..2)
                .map(|k| {
                    let z = (xn - mu[k]) / sigma[k];
                    w[k] * (-0.5 * z * z).exp() / (sigma[k] * (2.0 * std::f64::consts::PI).sqrt())
                })
                .sum::<f64>()
                .ln()
        })
        .sum();
    support::assert_close(main_f64("gmm.ad"), want, 1e-13, "gmm");
}

#[test]
fn pairs_matches_direct_sum() {
    let x = [0.0, 0.4, 1.1, 1.3, 2.0, 3.5];
    let mut want = 0.0;
    for i in 0..x.len() {
        for xj in &x[i + 1..] {
            let d: f64 = x[i] - xj;
            want += (-d * d / 0.8).exp() / (1.0 + d * d);
        }
    }
    support::assert_close(main_f64("pairs.ad"), want, 1e-14, "pairs");
}

#[test]
fn heat_matches_reference_stepping() {
    let mut u: Vec<f64> = vec![0.0, 0.2, 0.9, 1.0, 0.6, 0.3, 0.1, 0.0];
    for _ in 0..20 {
        let prev = u.clone();
        for i in 1..u.len() - 1 {
            u[i] = prev[i] + 0.25 * (prev[i - 1] - 2.0 * prev[i] + prev[i + 1]);
        }
    }
    let want: f64 = u.iter().map(|v| v * v).sum();
    support::assert_close(main_f64("heat.ad"), want, 1e-14, "heat");
}

#[test]
fn sort_weighted_matches_sorted_sum() {
    let mut v: Vec<f64> = vec![3.5, -1.0, 2.25, 0.0, 7.0, -4.5];
    v.sort_by(|a, b| a.total_cmp(b));
    let want: f64 = v.iter().enumerate().map(|(i, x)| (i + 1) as f64 * x).sum();
    support::assert_close(main_f64("sort_weighted.ad"), want, 1e-15, "sort");
}

#[test]
fn newton_finds_cube_root() {
    support::assert_close(main_f64("newton.ad"), 10f64.cbrt(), 1e-15, "newton");
}

#[test]
fn mlp_matches_reference() {
    let w: [f64; 6] = [0.1, -0.2, 0.3, 0.4, 0.5, -0.6];
    let b: [f64; 2] = [0.01, -0.02];
    let x = [1.0, 2.0, -1.0];
    let t = [0.5, -0.5];
    let mut want = 0.0;
    for o in 0..2 {
        let y = (b[o] + (0..3).map(|i| w[o * 3 + i] * x[i]).sum::<f64>()).tanh();
        want += 0.5 * (y - t[o]) * (y - t[o]);
    }
    support::assert_close(main_f64("mlp.ad"), want, 1e-14, "mlp");
}

#[test]
fn ints_follow_c_semantics() {
    // -7 / 2 == -3 and -7 % 2 == -1 in C; int(-2.75) == -2; gcd(84, -36) == 12.
    assert_eq!(
        main_result("ints.ad"),
        Constant::I64(-3 * 1000 - 100 - 2 + 12)
    );
}

#[test]
fn jit_agrees_with_interpreter_on_every_example() {
    for path in support::files("examples", "ad") {
        let name = support::name(&path);
        let source = support::read(&path);
        let jit_result = main_result(&name);
        // Derivatives exist from `transpose` on; before, `main` cannot run.
        let has_derivatives = source.contains("[autodiff_");
        for stage in [Stage::Lower, Stage::Transpose, Stage::Opt] {
            if stage == Stage::Lower && has_derivatives {
                continue;
            }
            let mut module = driver::frontend(&name, &source, &adc::CompileOptions::default())
                .unwrap_or_else(|f| panic!("{f}"));
            driver::run_stages(&mut module, stage).expect("stages run");
            let interp = adc_ir::interp::call(&module, "main", &mut [], 100_000_000)
                .unwrap_or_else(|e| panic!("{name}: {e:?}"));
            let (a, b) = match (interp[0], jit_result) {
                (Constant::F64(a), Constant::F64(b)) => (a, b),
                (Constant::I64(a), Constant::I64(b)) => (a as f64, b as f64),
                other => panic!("{name}: result kinds differ: {other:?}"),
            };
            support::assert_close(
                a,
                b,
                1e-13,
                &format!("{name} at {stage:?}: interpreter vs JIT"),
            );
        }
    }
}

#[test]
fn derivative_examples_match_hand_derivatives() {
    // f(a, b) = a + b + 2ab at a = 1.5, b = -2: (1 + 2b) + (1 + 2a) + (1 + 2b).
    support::assert_close(
        main_f64("slang_grad.ad"),
        -3.0 + 4.0 - 3.0,
        1e-15,
        "slang_grad",
    );
    // p = x^2 + 2x + 3 at x = 2: p' = 6, dp/dc0 = 4.
    support::assert_close(main_f64("poly_grad.ad"), 6.0 + 4.0, 1e-15, "poly_grad");
}

#[test]
fn spring_gradient_matches_dual_numbers() {
    // The same explicit integration on (value, d/dk) pairs.
    let (k, dk) = (2.0_f64, 1.0_f64);
    let (mut x, mut dx, mut v, mut dv) = (1.0_f64, 0.0_f64, 0.0_f64, 0.0_f64);
    let dt = 0.01;
    for _ in 0..1000 {
        let a = -k * x - 0.1 * v;
        let da = -dk * x - k * dx - 0.1 * dv;
        v += dt * a;
        dv += dt * da;
        x += dt * v;
        dx += dt * dv;
    }
    let de = 0.5 * (dk * x * x + 2.0 * k * x * dx + 2.0 * v * dv);
    support::assert_close(main_f64("spring.ad"), de, 1e-12, "spring");
}

/// `adc tape` on every example with a reverse derivative: what each one
/// stores, per entry and per loop iteration.
#[test]
fn example_tape_reports() {
    let _in = support::snapshots_in("examples/snapshots").bind_to_scope();
    for path in support::files("examples", "ad") {
        let name = support::name(&path);
        let source = support::read(&path);
        if !source.contains("autodiff_reverse") {
            continue;
        }
        let reports = driver::tape_reports(&name, &source, &adc::CompileOptions::default())
            .unwrap_or_else(|f| panic!("{f}"));
        insta::assert_snapshot!(
            format!("tape__{name}"),
            adc::tape_report::render_text(&reports)
        );
    }
}

/// The module after each stage of the pipeline, for the two derivative
/// examples: the snapshots show what each pass does.
#[test]
fn derivative_stage_snapshots() {
    let _in = support::snapshots_in("examples/snapshots").bind_to_scope();
    for name in ["slang_grad.ad", "poly_grad.ad"] {
        let source = support::read(&support::root().join("examples").join(name));
        for (stage_name, stage) in Stage::ALL {
            let mut module = driver::frontend(name, &source, &adc::CompileOptions::default())
                .unwrap_or_else(|f| panic!("{f}"));
            driver::run_stages(&mut module, *stage).expect("stages run");
            adc_ir::verify(&module).unwrap_or_else(|e| panic!("{name} after {stage_name}:\n{e}"));
            let text = module.to_string();
            support::assert_round_trips(&text);
            insta::assert_snapshot!(format!("stage_{stage_name}__{name}"), text);
        }
    }
}

/// Loops that `copy-loops` turns into a `memmove`, and loops it must leave
/// alone, run through the JIT against results worked out by hand.
#[test]
fn copy_loops_keep_loop_semantics() {
    let source = "
        double run(int n) {
            double a[n];
            for (int i = 0; i < n; i++) a[i] = double(i + 1);
            double b[n];
            for (int i = 0; i < len(a); i++) b[i] = a[i];
            for (int i = 0; i < len(a) - 1; i++) a[i] = a[i + 1];
            for (int i = 1; i < len(b); i++) b[i] = b[i - 1];
            double c[n];
            int k = 0;
            while (k < len(c)) {
                c[k] = a[k];
                k++;
            }
            double s = double(k) * 1e9 + c[4] * 1e10;
            for (int i = 0; i < len(a); i++) s += a[i] * pow(10.0, double(i));
            double t = 0.0;
            for (int i = 0; i < len(b); i++) t += b[i];
            return s + 1e6 * t;
        }
        // With the length a constant, `unroll` would take these loops first.
        double main() { return run(5); }";
    let jit = driver::compile_jit("copies.ad", source, &adc::CompileOptions::default())
        .unwrap_or_else(|f| panic!("{f}"));
    let got = match jit.call("main", &mut []).expect("runs")[0] {
        Constant::F64(x) => x,
        other => panic!("expected a double, got {other:?}"),
    };
    // a shifts left by one (its last element stays): 2 3 4 5 5.
    let s = 2.0 + 30.0 + 400.0 + 5000.0 + 50000.0;
    // b copies a, then each element copies the one before: 1 1 1 1 1.
    let t = 5.0;
    // c copies the shifted a; the while loop's counter ends at 5.
    let s = s + 5.0 * 1e9 + 5.0 * 1e10;
    assert_eq!(got, s + 1e6 * t);
    let mut module = driver::frontend("copies.ad", source, &adc::CompileOptions::default())
        .unwrap_or_else(|f| panic!("{f}"));
    driver::run_stages(&mut module, Stage::Opt).expect("stages run");
    let run = module
        .funcs
        .iter()
        .find(|f| f.name == "run")
        .expect("run is defined");
    let copies = run.to_string().matches("copyrange").count();
    assert_eq!(
        copies, 3,
        "the copies and the shift become copyrange:\n{module}"
    );
}
