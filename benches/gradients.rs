//! Benchmark (not a test): reverse-mode gradient time over primal time for
//! example kernels (the cheap-gradient bound asks for at most about 4x),
//! and compile latency with the derivative generated.
//!
//! Both sides are called through their C-ABI entry points (docs/embedding.md#the-c-signature-of-a-function),
//! so the times are the compiled code's, without the checked-call layer's
//! argument copies. The gradient is `--grad`'s: every float parameter
//! `Active` or `Duplicated`, seed 1, shadows zeroed once (they accumulate
//! over repetitions, which changes no control flow).
//!
//! Run: `cargo bench --bench gradients`.

mod common;

use adc::derivs::{add_request, Request};
use adc::driver::{self, Stage};
use common::best_of;

/// An array argument: `T *x, int64_t x_len` (two C parameters; a
/// `repr(C)` pair of two 8-byte integers is passed the same way, in two
/// registers or two stack slots, as long as pairs never straddle the last
/// register, which holds for these signatures: 6 integer registers, 3 pairs).
#[repr(C)]
#[derive(Clone, Copy)]
struct Arr(*mut f64, i64);

fn arr(v: &mut [f64]) -> Arr {
    Arr(v.as_mut_ptr(), v.len() as i64)
}

fn vec_of(n: usize, f: impl Fn(usize) -> f64) -> Vec<f64> {
    (0..n).map(f).collect()
}

#[repr(C)]
#[derive(Clone, Copy)]
struct Pair(f64, f64);

/// Compiles `file` with a `--grad` request for `func`; returns the JIT and
/// the compile time (source text to callable gradient, ms).
fn compile(file: &str, func: &str) -> (adc_codegen::JitModule, f64) {
    let path = format!("{}/examples/{file}", env!("CARGO_MANIFEST_DIR"));
    let source = std::fs::read_to_string(&path).expect("read example");
    let mut jit = None;
    let t = best_of(1, || {
        let mut m =
            driver::frontend(file, &source, &adc::CompileOptions::default()).expect("compiles");
        add_request(&mut m, func, &Request::Grad).expect("request");
        driver::run_stages(&mut m, Stage::Final).expect("derivative");
        jit = Some(adc_codegen::jit(&m, &|_| String::new(), &[]).expect("JIT"));
    });
    (jit.expect("compiled once"), t * 1e3)
}

fn raw(jit: &adc_codegen::JitModule, name: &str) -> *const u8 {
    jit.raw_function(name).expect("function exists")
}

fn row(kernel: &str, primal: f64, grad: f64, compile_ms: f64) {
    println!(
        "| {kernel} | {:.4} | {:.4} | {:.2} | {:.2} |",
        primal * 1e3,
        grad * 1e3,
        grad / primal,
        compile_ms
    );
}

fn main() {
    let (n, k, hs, xs, hn) = (100_000usize, 8usize, 64usize, 64usize, 1000usize);
    println!(
        "| kernel | primal (ms) | gradient (ms) | gradient / primal | compile with gradient (ms) |"
    );
    println!("|---|---|---|---|---|");

    // SAFETY (every transmute below): the function types are the C ABI of
    // docs/embedding.md#the-c-signature-of-a-function for the example's signature and for `--grad`'s activities.
    {
        let (jit, ms) = compile("gmm.ad", "gmm_loglik");
        let mut x = vec_of(n, |i| (i as f64).sin() * 3.0);
        let mut w = vec_of(k, |_| 1.0 / k as f64);
        let mut mu = vec_of(k, |j| j as f64 - 4.0);
        let mut sigma = vec_of(k, |j| 0.5 + 0.1 * j as f64);
        let (mut dx, mut dw, mut dmu, mut dsigma) =
            (vec![0.0; n], vec![0.0; k], vec![0.0; k], vec![0.0; k]);
        type P = extern "C" fn(Arr, Arr, Arr, Arr) -> f64;
        type G = extern "C" fn(Arr, Arr, Arr, Arr, Arr, Arr, Arr, Arr, f64) -> f64;
        let p: P = unsafe { std::mem::transmute(raw(&jit, "gmm_loglik")) };
        let g: G = unsafe { std::mem::transmute(raw(&jit, "__adc_cli_grad")) };
        let tp = best_of(3, || {
            p(arr(&mut x), arr(&mut w), arr(&mut mu), arr(&mut sigma));
        });
        let tg = best_of(3, || {
            g(
                arr(&mut x),
                arr(&mut dx),
                arr(&mut w),
                arr(&mut dw),
                arr(&mut mu),
                arr(&mut dmu),
                arr(&mut sigma),
                arr(&mut dsigma),
                1.0,
            );
        });
        row("gmm_loglik", tp, tg, ms);
    }
    {
        let (jit, ms) = compile("pairs.ad", "energy");
        let mut x = vec_of(2000, |i| (i as f64 * 0.37).sin() * 10.0);
        let mut dx = vec![0.0; x.len()];
        type P = extern "C" fn(Arr, f64) -> f64;
        type G = extern "C" fn(Arr, Arr, f64, f64) -> Pair;
        let p: P = unsafe { std::mem::transmute(raw(&jit, "energy")) };
        let g: G = unsafe { std::mem::transmute(raw(&jit, "__adc_cli_grad")) };
        let tp = best_of(5, || {
            p(arr(&mut x), 0.8);
        });
        let tg = best_of(5, || {
            g(arr(&mut x), arr(&mut dx), 0.8, 1.0);
        });
        row("pairs energy (triangular nest)", tp, tg, ms);
    }
    {
        let (jit, ms) = compile("lstm.ad", "lstm_loss");
        let mut a = [
            vec_of(4 * hs * (xs + hs), |i| 0.01 * (i as f64).sin()),
            vec_of(4 * hs, |i| 0.001 * i as f64),
            vec_of(xs, |i| (i as f64).cos()),
            vec_of(hs, |i| 0.1 * (i as f64).sin()),
            vec_of(hs, |i| 0.2 * (i as f64).cos()),
        ];
        let mut d: Vec<Vec<f64>> = a.iter().map(|v| vec![0.0; v.len()]).collect();
        type P = extern "C" fn(Arr, Arr, Arr, Arr, Arr) -> f64;
        type G = extern "C" fn(Arr, Arr, Arr, Arr, Arr, Arr, Arr, Arr, Arr, Arr, f64) -> f64;
        let p: P = unsafe { std::mem::transmute(raw(&jit, "lstm_loss")) };
        let g: G = unsafe { std::mem::transmute(raw(&jit, "__adc_cli_grad")) };
        let tp = best_of(200, || {
            let [w, b, x, h, c] = &mut a;
            p(arr(w), arr(b), arr(x), arr(h), arr(c));
        });
        let tg = best_of(200, || {
            let [w, b, x, h, c] = &mut a;
            let [dw, db, dx, dh, dc] = &mut d[..] else {
                unreachable!("five shadows")
            };
            g(
                arr(w),
                arr(dw),
                arr(b),
                arr(db),
                arr(x),
                arr(dx),
                arr(h),
                arr(dh),
                arr(c),
                arr(dc),
                1.0,
            );
        });
        row("lstm_loss", tp, tg, ms);
    }
    {
        let (jit, ms) = compile("bessel.ad", "bessel_j");
        type P = extern "C" fn(i64, f64) -> f64;
        type G = extern "C" fn(i64, f64, f64) -> Pair;
        let p: P = unsafe { std::mem::transmute(raw(&jit, "bessel_j")) };
        let g: G = unsafe { std::mem::transmute(raw(&jit, "__adc_cli_grad")) };
        let tp = best_of(20_000, || {
            std::hint::black_box(p(std::hint::black_box(3), std::hint::black_box(7.5)));
        });
        let tg = best_of(20_000, || {
            std::hint::black_box(g(std::hint::black_box(3), std::hint::black_box(7.5), 1.0));
        });
        row("bessel_j", tp, tg, ms);
    }
    {
        let (jit, ms) = compile("heat.ad", "heat_energy");
        let init = vec_of(hn, |i| (0.01 * i as f64).sin());
        let mut u = init.clone();
        let mut du = vec![0.0; hn];
        type P = extern "C" fn(Arr, f64, i64) -> f64;
        type G = extern "C" fn(Arr, Arr, f64, i64, f64) -> Pair;
        let p: P = unsafe { std::mem::transmute(raw(&jit, "heat_energy")) };
        let g: G = unsafe { std::mem::transmute(raw(&jit, "__adc_cli_grad")) };
        // `u` is `inout`: each run starts from the same state.
        let tp = best_of(5, || {
            u.copy_from_slice(&init);
            p(arr(&mut u), 0.25, 200);
        });
        let tg = best_of(5, || {
            u.copy_from_slice(&init);
            du.fill(0.0);
            g(arr(&mut u), arr(&mut du), 0.25, 200, 1.0);
        });
        row("heat_energy", tp, tg, ms);
    }
}
