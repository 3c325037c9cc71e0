//! Call overhead of the Rust API: `JitModule::call` with `ArgValue`s
//! against a `TypedFunc` with slices, on a small function (16 doubles).
//! Prints a table; the two run side by side in one process.

use std::time::Instant;

fn best_of<F: FnMut()>(reps: usize, calls: usize, mut f: F) -> f64 {
    let mut best = f64::INFINITY;
    for _ in 0..reps {
        let start = Instant::now();
        for _ in 0..calls {
            f();
        }
        best = best.min(start.elapsed().as_secs_f64() / calls as f64);
    }
    best * 1e9
}

fn main() {
    let src = "double norm2(double[] xs) { double s = 0.0; for (int i = 0; i < len(xs); i++) s += xs[i] * xs[i]; return s; }";
    let jit = adc::compile_jit("calls.ad", src, &adc::CompileOptions::default()).expect("compiles");
    let xs: Vec<f64> = (0..16).map(|i| i as f64).collect();
    let mut args = [adc::ArgValue::Array(adc::ArrayValue::F64(xs.clone()))];
    let typed: adc::TypedFunc<(&[f64],), f64> = jit.typed("norm2").expect("signature");
    let (reps, calls) = (7, 200_000);
    let dynamic = best_of(reps, calls, || {
        std::hint::black_box(jit.call("norm2", &mut args).expect("runs"));
    });
    let with_copy = best_of(reps, calls, || {
        let mut fresh = [adc::ArgValue::Array(adc::ArrayValue::F64(xs.clone()))];
        std::hint::black_box(jit.call("norm2", &mut fresh).expect("runs"));
    });
    let fast = best_of(reps, calls, || {
        std::hint::black_box(typed.call((std::hint::black_box(&xs[..]),)).expect("runs"));
    });
    println!("| call of norm2 over 16 doubles | ns per call |");
    println!("|---|---|");
    println!("| JitModule::call, ArgValue reused | {dynamic:.0} |");
    println!("| JitModule::call, ArgValue built per call (a copy of the array) | {with_copy:.0} |");
    println!("| TypedFunc::call, slice in place | {fast:.0} |");
}
