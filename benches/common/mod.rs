//! Helpers shared by the benchmark binaries.

use adc::{ArgValue, ArrayValue};
use std::time::Instant;

// Each bench binary compiles this module; not every one uses every helper.
#[allow(dead_code)]
pub fn f64s(n: usize, f: impl Fn(usize) -> f64) -> ArgValue {
    ArgValue::Array(ArrayValue::F64((0..n).map(f).collect()))
}

/// Seconds per run of `run`, the best of 5 batches of `reps` runs.
#[allow(dead_code)]
pub fn best_of(reps: usize, mut run: impl FnMut()) -> f64 {
    let mut best = f64::MAX;
    for _ in 0..5 {
        let t = Instant::now();
        for _ in 0..reps {
            run();
        }
        best = best.min(t.elapsed().as_secs_f64() / reps as f64);
    }
    best
}
