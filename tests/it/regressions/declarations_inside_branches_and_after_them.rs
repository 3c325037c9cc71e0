//! The fuzzer's first finding (`fuzz/`, docs/testing.md): a variable declared
//! inside a branch, then another declared after it (the second got the id
//! of a value slot the branch had dropped).

use adc::{ArgValue, Constant};

/// The fuzzer's input compiles to a module or to diagnostics, never a
/// panic.
#[test]
fn fuzz_finding_gives_diagnostics_not_a_panic() {
    let name = "declarations_inside_branches_and_after_them.ad";
    let source = include_str!("declarations_inside_branches_and_after_them.ad");
    // A panic fails the test; either outcome is fine otherwise.
    if let Ok(mut m) = adc::driver::frontend(name, source, &adc::CompileOptions::default()) {
        adc::driver::run_stages(&mut m, adc::Stage::Final).expect("stages");
    }
}

/// The finding as a valid program, run.
#[test]
fn declarations_inside_branches_and_after_them() {
    let source = "double f(double x) {
    if (x > 0.0) { double t = x; x = t * 2.0; } else { double u = -x; double w = u; x = w; }
    double v = x > 1.0 ? x : 1.0;
    for (int i = 0; i < 2; i++) { if (i == 1) { double z = v; v = z + 1.0; } }
    double after = v + x;
    return after;
}";
    let jit = adc::compile_jit("branches.ad", source, &adc::CompileOptions::default())
        .unwrap_or_else(|f| panic!("does not compile:\n{f}"));
    for (x, expected) in [(1.5, 3.0 + 1.0 + 3.0), (-0.5, 1.0 + 1.0 + 0.5)] {
        let r = jit
            .call("f", &mut [ArgValue::Scalar(Constant::F64(x))])
            .expect("runs");
        assert_eq!(r, vec![Constant::F64(expected)], "f({x})");
    }
}
