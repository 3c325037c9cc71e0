//! Benchmark (not a test): a sparse Hessian (`[hessian(NAME, sparse)]`)
//! of a banded objective of n inputs, the chained Rosenbrock function
//! `sum (1 - x[i])^2 + 100 (x[i+1] - x[i]^2)^2` (tridiagonal Hessian, lower
//! triangle 2n - 1 entries), against its primal, in one run: the whole
//! Hessian and `NAME_nnz` (the sweep alone). Its cost must grow with the
//! number of colors, not with n.
//!
//! Run: `cargo bench --bench sparse_hessian`.

mod common;

use common::best_of;

const SOURCE: &str = r#"
[hessian(rosen_hess, sparse)]
double rosen(double[] x) {
    double s = 0.0;
    for (int i = 0; i + 1 < len(x); i++) {
        double a = 1.0 - x[i];
        double b = x[i + 1] - x[i] * x[i];
        s += a * a + 100.0 * b * b;
    }
    return s;
}
"#;

fn main() {
    let jit =
        adc::compile_jit("sparse.ad", SOURCE, &adc::CompileOptions::default()).expect("compiles");
    // SAFETY: the C ABI of docs/embedding.md#the-c-signature-of-a-function
    // for these signatures; `jit` outlives the calls and the slices are
    // valid for them.
    type Primal = extern "C" fn(*const f64, i64) -> f64;
    type Nnz = extern "C" fn(*const f64, i64) -> i64;
    type Hess = extern "C" fn(*const f64, i64, *mut f64, i64, *mut i64, i64, *mut i64, i64) -> f64;
    let primal: Primal =
        unsafe { std::mem::transmute(jit.raw_function("rosen").expect("defined")) };
    let nnz: Nnz =
        unsafe { std::mem::transmute(jit.raw_function("rosen_hess_nnz").expect("defined")) };
    let hess: Hess =
        unsafe { std::mem::transmute(jit.raw_function("rosen_hess").expect("defined")) };
    println!("| n | primal (ms) | sparse Hessian (ms) | Hessian / primal | NAME_nnz (ms) | NAME_nnz / primal |");
    println!("|---|---|---|---|---|---|");
    for n in [10_000usize, 100_000] {
        let x: Vec<f64> = (0..n).map(|i| (i as f64 * 0.37).sin() * 0.5).collect();
        let k = nnz(x.as_ptr(), n as i64);
        assert_eq!(k as usize, 2 * n - 1);
        let (mut vals, mut cols, mut rows) =
            (vec![0.0; 2 * n], vec![0i64; 2 * n], vec![0i64; n + 1]);
        let reps = (2_000_000 / n).max(1);
        let t_primal = best_of(reps * 10, || {
            std::hint::black_box(primal(x.as_ptr(), n as i64));
        });
        let t_hess = best_of(reps, || {
            std::hint::black_box(hess(
                x.as_ptr(),
                n as i64,
                vals.as_mut_ptr(),
                vals.len() as i64,
                cols.as_mut_ptr(),
                cols.len() as i64,
                rows.as_mut_ptr(),
                rows.len() as i64,
            ));
        });
        let t_nnz = best_of(reps, || {
            std::hint::black_box(nnz(x.as_ptr(), n as i64));
        });
        // Row 1: columns 0 and 1, -400 x[0] and 202 + 1200 x[1]^2 - 400 x[2].
        assert_eq!(&rows[..3], &[0, 1, 3]);
        assert_eq!(&cols[1..3], &[0, 1]);
        assert!((vals[1] + 400.0 * x[0]).abs() < 1e-9);
        assert!((vals[2] - (202.0 + 1200.0 * x[1] * x[1] - 400.0 * x[2])).abs() < 1e-9);
        println!(
            "| {n} | {:.3} | {:.3} | {:.1} | {:.3} | {:.1} |",
            t_primal * 1e3,
            t_hess * 1e3,
            t_hess / t_primal,
            t_nnz * 1e3,
            t_nnz / t_primal
        );
    }
}
