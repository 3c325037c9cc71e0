use crate::support::{assert_close, d, floats, jit};

/// Inlining has a budget per caller: in a chain of functions that each
/// call the next one twice, every caller used to grow up to 64 inlined
/// bodies (300 such functions took 74 s and 800 MB to differentiate).
/// Every function of the final module stays under 850 instructions
/// (940 without the budget at this depth), and the gradient is still right.
#[test]
fn inlining_a_doubling_call_chain_stays_bounded() {
    let mut src = String::from("double f0(double x) { return sin(x); }\n");
    for i in 1..20 {
        src.push_str(&format!(
            "double f{i}(double x) {{ if (x > 0.0) return f{}(x) * 1.01; return f{}(x + 0.1); }}\n",
            i - 1,
            i - 1
        ));
    }
    src.push_str("[autodiff_reverse(dg, Active, Active)]\ndouble g(double x) { return f19(x); }\n");
    let mut module =
        adc::driver::frontend("chain.ad", &src, &adc::CompileOptions::default()).expect("compiles");
    adc::driver::run_stages_for(
        &mut module,
        adc::Stage::Final,
        "chain.ad",
        &src,
        &adc::CompileOptions::default(),
    )
    .expect("differentiates");
    let largest = module
        .funcs
        .iter()
        .map(|f| {
            f.layout
                .iter()
                .map(|b| f.dfg.block(*b).insts.len())
                .sum::<usize>()
        })
        .max()
        .unwrap_or(0);
    eprintln!("largest function: {largest} instructions");
    assert!(largest < 850, "a function of {largest} instructions");
    let j = jit(&src);
    let got = floats(&j, "dg", &mut [d(0.5), d(1.0)]);
    // f19(x) = sin(x) * 1.01^19 for x > 0.
    let scale = 1.01f64.powi(19);
    assert_close(got[0], 0.5f64.sin() * scale, 1e-12, "value");
    assert_close(got[1], 0.5f64.cos() * scale, 1e-12, "derivative");
}
