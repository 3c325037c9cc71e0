/// In a chain of one-line functions, each calling the next, `inline`
/// searched the call graph from every callee it considered (to rule out
/// recursion): each of the n callers considers up to 64 callees, each
/// search walks the rest of the chain, O(64 n^2) (1,000 functions took
/// 15 s to compile, 5,000 more than 120 s). The recursive functions now
/// come from one analysis of the module (`callgraph::Recursive`).
///
/// Bounded by the CPU time of this thread (not the wall clock: the bound
/// holds on a loaded machine): `inline` over a chain of 2,000 functions in
/// a debug build took 0.4 s of CPU; with the old search, 41 s.
#[test]
fn inlining_a_long_call_chain_takes_linear_time() {
    let n = 2000;
    let mut src = String::new();
    for i in 0..n {
        src += &format!("double f{i}(double x) {{ return f{}(x) + 1.0; }}\n", i + 1);
    }
    src += &format!("double f{n}(double x) {{ return x * x; }}\n");
    src += "double main() { return f0(1.5); }\n";
    let mut module =
        adc::driver::frontend("chain.ad", &src, &adc::CompileOptions::default()).expect("compiles");
    let before = thread_cpu_seconds();
    adc_passes::run_pass("inline", &mut module)
        .expect("a pass of that name")
        .expect("inlines");
    let spent = thread_cpu_seconds().zip(before).map(|(a, b)| a - b);
    eprintln!("inline over {n} functions: {spent:?} s of CPU");
    adc_ir::verify::verify(&module).expect("verifies");
    // f0 inlined 64 levels of the chain (the most calls inlined into one
    // function), and calls f65.
    let f0 = module.func(module.find("f0").expect("f0"));
    let calls: Vec<&str> = f0
        .layout
        .iter()
        .flat_map(|b| f0.dfg.block(*b).insts.iter())
        .filter_map(|i| match f0.dfg.inst(*i) {
            adc_ir::InstData::Call { func, .. } => Some(module.func(*func).name.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(calls, ["f65"]);
    if let Some(spent) = spent {
        assert!(
            spent < 6.0,
            "inline took {spent} s of CPU over {n} functions"
        );
    }
}

/// User and system time of the calling thread, from
/// `/proc/thread-self/stat` (Linux; `None` elsewhere), in seconds at the
/// usual 100 ticks per second.
fn thread_cpu_seconds() -> Option<f64> {
    let stat = std::fs::read_to_string("/proc/thread-self/stat").ok()?;
    // Fields after the command name in parentheses (which may hold
    // spaces): state is field 3, utime and stime fields 14 and 15.
    let rest = &stat[stat.rfind(')')? + 2..];
    let fields: Vec<&str> = rest.split_whitespace().collect();
    let ticks = |k: usize| fields.get(k - 3)?.parse::<f64>().ok();
    Some((ticks(14)? + ticks(15)?) / 100.0)
}
