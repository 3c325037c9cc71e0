//! Benchmark (not a test): sparse Hessians (`[hessian(NAME, sparse)]`)
//! of two banded objectives of n inputs against their primals, in one
//! run: the whole Hessian and `NAME_nnz` (the sweep alone).
//!
//! - `rosen`, the chained Rosenbrock function `sum (1 - x[i])^2 + 100
//!   (x[i+1] - x[i]^2)^2`: a tridiagonal Hessian (3 colors, one run of the
//!   compressed evaluation), lower triangle 2n - 1 entries;
//! - `smooth`, `sum (x[i-1] - 2 x[i] + x[i+1])^2`: a pentadiagonal one (5
//!   colors, two runs of 4), lower triangle 3n - 3 entries.
//!
//! Their cost must grow with the number of colors, not with n.
//!
//! Run: `cargo bench --bench sparse_hessian` (the JIT, wall-clock time);
//! `benches/sparse.sh hess` times the same functions compiled to an object
//! and called from C, in thread CPU time.

mod common;

use common::best_of;

const SOURCE: &str = include_str!("ad/banded.ad");

type Primal = extern "C" fn(*const f64, i64) -> f64;
type Nnz = extern "C" fn(*const f64, i64) -> i64;
type Hess = extern "C" fn(*const f64, i64, *mut f64, i64, *mut i64, i64, *mut i64, i64) -> f64;

/// Times `name`, `name_hess` and `name_hess_nnz` at n inputs; checks the
/// number of entries (`nnz(n)`) and row 1 with `row1`.
fn measure(
    jit: &adc::JitModule,
    name: &str,
    n: usize,
    nnz_of: fn(usize) -> usize,
    row1: fn(&[f64], &[i64], &[i64], &[f64]),
) {
    // SAFETY: the C ABI of docs/embedding.md#the-c-signature-of-a-function
    // for these signatures; `jit` outlives the calls and the slices are
    // valid for them.
    let primal: Primal = unsafe { std::mem::transmute(jit.raw_function(name).expect("defined")) };
    let nnz: Nnz = unsafe {
        std::mem::transmute(
            jit.raw_function(&format!("{name}_hess_nnz"))
                .expect("defined"),
        )
    };
    let hess: Hess =
        unsafe { std::mem::transmute(jit.raw_function(&format!("{name}_hess")).expect("defined")) };
    let x: Vec<f64> = (0..n).map(|i| (i as f64 * 0.37).sin() * 0.5).collect();
    let k = nnz(x.as_ptr(), n as i64) as usize;
    assert_eq!(k, nnz_of(n));
    let (mut vals, mut cols, mut rows) = (vec![0.0; k], vec![0i64; k], vec![0i64; n + 1]);
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
    row1(&x, &rows, &cols, &vals);
    println!(
        "| `{name}` | {n} | {:.3} | {:.3} | {:.1} | {:.3} | {:.1} |",
        t_primal * 1e3,
        t_hess * 1e3,
        t_hess / t_primal,
        t_nnz * 1e3,
        t_nnz / t_primal
    );
}

fn main() {
    let jit =
        adc::compile_jit("sparse.ad", SOURCE, &adc::CompileOptions::default()).expect("compiles");
    println!("| objective | n | primal (ms) | sparse Hessian (ms) | Hessian / primal | NAME_nnz (ms) | NAME_nnz / primal |");
    println!("|---|---|---|---|---|---|---|");
    for n in [10_000usize, 100_000] {
        // Row 1: columns 0 and 1, -400 x[0] and 202 + 1200 x[1]^2 - 400 x[2].
        measure(
            &jit,
            "rosen",
            n,
            |n| 2 * n - 1,
            |x, rows, cols, vals| {
                assert_eq!(&rows[..3], &[0, 1, 3]);
                assert_eq!(&cols[1..3], &[0, 1]);
                assert!((vals[1] + 400.0 * x[0]).abs() < 1e-9);
                assert!((vals[2] - (202.0 + 1200.0 * x[1] * x[1] - 400.0 * x[2])).abs() < 1e-9);
            },
        );
        // Row 1: columns 0 and 1, -4 and 10 (x[1] is in two terms, -2 and 1).
        measure(
            &jit,
            "smooth",
            n,
            |n| 3 * n - 3,
            |_, rows, cols, vals| {
                assert_eq!(&rows[..3], &[0, 1, 3]);
                assert_eq!(&cols[1..3], &[0, 1]);
                assert_eq!(&vals[1..3], &[-4.0, 10.0]);
            },
        );
    }
}
