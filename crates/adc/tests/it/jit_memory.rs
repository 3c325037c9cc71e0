//! JIT modules keep their code and data within reach of 32-bit
//! PC-relative offsets whatever other threads map meanwhile.

use adc::{ArgValue, ArrayValue, Constant};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

/// Another thread maps and unmaps 3 GiB blocks (address space only) while
/// this one compiles modules: with cranelift-jit's default memory, a
/// module's code and its constants (the messages of bounds checks) could
/// land on either side of such a block, more than 2 GiB apart, and
/// finalizing the module panicked.
#[test]
fn jit_modules_survive_big_mappings_in_other_threads() {
    let stop = Arc::new(AtomicBool::new(false));
    let mapper = {
        let stop = stop.clone();
        std::thread::spawn(move || {
            // Two blocks in turn, so one is always mapped somewhere new.
            let mut held: Vec<Vec<u8>> = Vec::new();
            while !stop.load(Ordering::Relaxed) {
                held.push(Vec::with_capacity(3 << 30));
                std::hint::black_box(&held);
                if held.len() > 1 {
                    held.remove(0);
                }
                std::thread::sleep(std::time::Duration::from_micros(200));
            }
        })
    };
    let src = "double f(double[] a, int k) {
    double s = 0.0;
    for (int i = 0; i < len(a); i++) s += a[i] * double(k);
    return s + a[k % len(a)];
}";
    for k in 0..200 {
        let jit =
            adc::compile_jit("reach.ad", src, &adc::CompileOptions::default()).expect("compiles");
        let mut args = [
            ArgValue::Array(ArrayValue::F64(vec![1.0, 2.0, 3.0])),
            ArgValue::Scalar(Constant::I64(k)),
        ];
        let got = jit.call("f", &mut args).expect("runs");
        let want = 6.0 * k as f64 + [1.0, 2.0, 3.0][(k % 3) as usize];
        assert_eq!(got, vec![Constant::F64(want)]);
    }
    stop.store(true, Ordering::Relaxed);
    mapper.join().expect("mapper thread");
}
