//! Benchmark (not a test): a sparse Jacobian (`[jacobian(NAME, sparse)]`)
//! of a tridiagonal map of 10^5 inputs, the discretised Bratu problem
//! `y[i] = x[i-1] - 2 x[i] + x[i+1] + h^2 exp(x[i])`, against its primal, in
//! one run: the whole Jacobian (sweep, coloring, compressed evaluation)
//! and `NAME_nnz` (the sweep alone). Its cost must grow with the number of
//! colors (3), not with n: the ratio stays the same as n grows.
//!
//! Run: `cargo bench --bench sparse_jacobian` (the JIT, wall-clock time);
//! `benches/sparse.sh jac` times the same function compiled to an object
//! and called from C, in thread CPU time.

mod common;

use common::best_of;

const SOURCE: &str = include_str!("ad/bratu.ad");

fn main() {
    let jit =
        adc::compile_jit("sparse.ad", SOURCE, &adc::CompileOptions::default()).expect("compiles");
    // SAFETY: the C ABI of docs/embedding.md#the-c-signature-of-a-function
    // for these signatures; `jit` outlives the calls and the slices are
    // valid for them.
    type Primal = extern "C" fn(*const f64, i64, *mut f64, i64);
    type Nnz = extern "C" fn(*const f64, i64, *mut f64, i64) -> i64;
    type Jac =
        extern "C" fn(*const f64, i64, *mut f64, i64, *mut f64, i64, *mut i64, i64, *mut i64, i64);
    let primal: Primal =
        unsafe { std::mem::transmute(jit.raw_function("bratu").expect("defined")) };
    let nnz: Nnz =
        unsafe { std::mem::transmute(jit.raw_function("bratu_jac_nnz").expect("defined")) };
    let jac: Jac = unsafe { std::mem::transmute(jit.raw_function("bratu_jac").expect("defined")) };
    println!("| n | primal (ms) | sparse Jacobian (ms) | Jacobian / primal | NAME_nnz (ms) | NAME_nnz / primal |");
    println!("|---|---|---|---|---|---|");
    for n in [10_000usize, 100_000, 1_000_000] {
        let x: Vec<f64> = (0..n).map(|i| (i as f64 * 0.37).sin() * 0.5).collect();
        let mut y = vec![0.0; n];
        let k = nnz(x.as_ptr(), n as i64, y.as_mut_ptr(), n as i64);
        assert_eq!(k as usize, 3 * n - 2);
        let (mut vals, mut cols, mut rows) =
            (vec![0.0; 3 * n], vec![0i64; 3 * n], vec![0i64; n + 1]);
        let reps = (2_000_000 / n).max(1);
        let t_primal = best_of(reps * 10, || {
            primal(x.as_ptr(), n as i64, y.as_mut_ptr(), n as i64)
        });
        let t_jac = best_of(reps, || {
            jac(
                x.as_ptr(),
                n as i64,
                y.as_mut_ptr(),
                n as i64,
                vals.as_mut_ptr(),
                vals.len() as i64,
                cols.as_mut_ptr(),
                cols.len() as i64,
                rows.as_mut_ptr(),
                rows.len() as i64,
            )
        });
        let t_nnz = best_of(reps, || {
            std::hint::black_box(nnz(x.as_ptr(), n as i64, y.as_mut_ptr(), n as i64));
        });
        // Row 1: columns 0, 1, 2 with 1, -2 + h^2 exp(x[1]), 1.
        let h2 = 1.0 / ((n as f64 + 1.0) * (n as f64 + 1.0));
        assert_eq!(&rows[..3], &[0, 2, 5]);
        assert_eq!(&cols[2..5], &[0, 1, 2]);
        assert_eq!(vals[2], 1.0);
        assert!((vals[3] - (-2.0 + h2 * x[1].exp())).abs() < 1e-12);
        println!(
            "| {n} | {:.3} | {:.3} | {:.1} | {:.3} | {:.1} |",
            t_primal * 1e3,
            t_jac * 1e3,
            t_jac / t_primal,
            t_nnz * 1e3,
            t_nnz / t_primal
        );
    }
}
