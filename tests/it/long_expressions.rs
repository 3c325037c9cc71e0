//! One long expression under the matrix derivatives (code from symbolic
//! tools: a `return` of thousands of terms): the IR after every stage grows
//! linearly with the number of terms, and the Hessian and the Jacobian are
//! right. Compile time itself is not asserted here (docs/performance.md,
//! "Compile time"); `opt::dce`'s unit test counts its rounds, which grew
//! with the terms (a 10,000-term Hessian took 26 s to compile).

use crate::support::{arg_floats, arr, assert_close, d, jit};
use adc::{driver, CompileOptions, Stage};

/// `main(x)`: `x*x + x*x + ...`, `n` terms, under `attribute`.
fn source(n: usize, attribute: &str) -> String {
    let terms = vec!["x*x"; n].join("+");
    format!("{attribute}\ndouble main(double x) {{ return {terms}; }}\n")
}

/// The instructions of every function after `stage`.
fn insts_after(source: &str, stage: Stage) -> usize {
    let mut m = driver::frontend("long.ad", source, &CompileOptions::default())
        .unwrap_or_else(|f| panic!("does not compile:\n{f}"));
    driver::run_stages(&mut m, stage).expect("stages run");
    m.funcs
        .iter()
        .flat_map(|f| f.layout.iter().map(|&b| f.dfg.block(b).insts.len()))
        .sum()
}

#[test]
fn ir_grows_linearly_with_the_terms() {
    for attribute in ["[hessian(H)]", "[jacobian(J)]"] {
        for &(name, stage) in Stage::ALL {
            let [small, large] = [400, 800].map(|n| insts_after(&source(n, attribute), stage));
            // Twice the terms, at most twice the instructions (and a few
            // more for what does not depend on them: seeds, lanes, loops).
            assert!(
                large <= 2 * small + 100,
                "{attribute} after {name}: {small} instructions at 400 terms, {large} at 800"
            );
        }
    }
}

#[test]
fn hessian_and_jacobian_of_a_long_sum() {
    let n = 3000;
    let x = 1.5;
    for (attribute, name) in [("[hessian(H)]", "H"), ("[jacobian(J)]", "J")] {
        let j = jit(&source(n, attribute));
        let mut args = [d(x), arr(&[0.0])];
        let r = j.call(name, &mut args).expect("runs");
        let value = crate::support::number(&r[0]);
        assert_close(value, n as f64 * x * x, 1e-12, &format!("{name}'s value"));
        // d/dx of n x^2 is 2 n x; its derivative, 2 n.
        let want = if name == "H" {
            2.0 * n as f64
        } else {
            2.0 * n as f64 * x
        };
        assert_close(arg_floats(&args[1])[0], want, 1e-12, name);
    }
}
