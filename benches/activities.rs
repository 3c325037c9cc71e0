//! Benchmark (not a test): callee derivatives specialised on the
//! activities at the call (issue 12). GradBench's kmeans `dir` (the Newton
//! direction: the forward derivative of the cost's reverse gradient along
//! ones, over the Hessian's diagonal), with the points `Const` (the call of
//! the reverse gradient gets `__adc_fwdcddcc_cost_gradient`: no shadow of
//! the points, no derivative arithmetic for them) and with the points
//! `Dual` under a zero tangent (the default derivative, what every call got
//! before). Both against a hand-written Rust `dir` (the closed form), in
//! one run.
//!
//! Run: `cargo bench --bench activities`.

mod common;

use common::best_of;

const SOURCE: &str = r#"
[autodiff_reverse(cost_gradient, Const, Duplicated, Const, ActiveOnly)]
double cost(double[] p, double[] c, int d) {
    int n = len(p) / d;
    int k = len(c) / d;
    double total = 0.0;
    for (int i = 0; i < n; i++) {
        double best = 1e300;
        for (int j = 0; j < k; j++) {
            double dist = 0.0;
            for (int r = 0; r < d; r++) {
                double e = c[j * d + r] - p[i * d + r];
                dist += e * e;
            }
            best = min(best, dist);
        }
        total += best;
    }
    return total;
}

[autodiff_forward(tangent_const_points, Const, Dual, Dual, Const)]
[autodiff_forward(tangent_dual_points, Dual, Dual, Dual, Const)]
void gradient(double[] p, double[] c, out double[] g, int d) {
    for (int q = 0; q < len(g); q++) g[q] = 0.0;
    cost_gradient(p, c, g, d, 1.0);
}

void dir_const(double[] p, double[] c, int d, out double[] direction) {
    int m = len(c);
    double ones[m];
    double g[m];
    double h[m];
    for (int q = 0; q < m; q++) ones[q] = 1.0;
    tangent_const_points(p, c, ones, g, h, d);
    for (int q = 0; q < m; q++) direction[q] = g[q] / h[q];
}

void dir_dual(double[] p, double[] c, int d, out double[] direction) {
    int m = len(c);
    double zeros[len(p)];
    double ones[m];
    double g[m];
    double h[m];
    for (int q = 0; q < m; q++) ones[q] = 1.0;
    tangent_dual_points(p, zeros, c, ones, g, h, d);
    for (int q = 0; q < m; q++) direction[q] = g[q] / h[q];
}
"#;

/// The closed form: each centroid minus the mean of its points, over 2 · 2
/// (the gradient is 2 Σ (c - p), the Hessian's diagonal 2 · count).
fn dir_rust(p: &[f64], c: &[f64], d: usize, direction: &mut [f64]) {
    let (n, k) = (p.len() / d, c.len() / d);
    let mut g = vec![0.0; c.len()];
    let mut count = vec![0.0; k];
    for i in 0..n {
        let (mut best, mut arg) = (f64::INFINITY, 0);
        for j in 0..k {
            let mut dist = 0.0;
            for r in 0..d {
                let e = c[j * d + r] - p[i * d + r];
                dist += e * e;
            }
            if dist < best {
                best = dist;
                arg = j;
            }
        }
        count[arg] += 1.0;
        for r in 0..d {
            g[arg * d + r] += 2.0 * (c[arg * d + r] - p[i * d + r]);
        }
    }
    for j in 0..k {
        for r in 0..d {
            direction[j * d + r] = g[j * d + r] / (2.0 * count[j]);
        }
    }
}

fn main() {
    let jit = adc::compile_jit("activities.ad", SOURCE, &adc::CompileOptions::default())
        .expect("compiles");
    println!("| n, k, d | cost (ms) | dir, points Const (ms) | dir, points Dual (ms) | Dual / Const | Const / Rust closed form | Rust closed form (ms) |");
    println!("|---|---|---|---|---|---|---|");
    for (n, k, d) in [
        (1000usize, 10usize, 8usize),
        (5000, 50, 8),
        (10000, 100, 20),
    ] {
        let p: Vec<f64> = (0..n * d)
            .map(|i| ((i as f64 * 12.9898).sin() * 43758.5453).fract() * 10.0)
            .collect();
        // Centroids: the first k points, so every centroid owns a point.
        let c: Vec<f64> = p[..k * d].to_vec();
        let (mut a, mut b, mut r) = (vec![0.0; k * d], vec![0.0; k * d], vec![0.0; k * d]);
        // SAFETY: the C ABI of docs/embedding.md#the-c-signature-of-a-function for these signatures; `jit` outlives
        // the calls and the slices are valid for them.
        type Dir = extern "C" fn(*const f64, i64, *const f64, i64, i64, *mut f64, i64);
        type Cost = extern "C" fn(*const f64, i64, *const f64, i64, i64) -> f64;
        let dir_const: Dir =
            unsafe { std::mem::transmute(jit.raw_function("dir_const").expect("defined")) };
        let dir_dual: Dir =
            unsafe { std::mem::transmute(jit.raw_function("dir_dual").expect("defined")) };
        let cost: Cost = unsafe { std::mem::transmute(jit.raw_function("cost").expect("defined")) };
        let (pl, cl, m) = (p.len() as i64, c.len() as i64, (k * d) as i64);
        let reps = (200_000 / (n * k / 10).max(1)).max(1);
        let t_cost = best_of(reps, || {
            std::hint::black_box(cost(p.as_ptr(), pl, c.as_ptr(), cl, d as i64));
        });
        let t_const = best_of(reps, || {
            dir_const(p.as_ptr(), pl, c.as_ptr(), cl, d as i64, a.as_mut_ptr(), m);
        });
        let t_dual = best_of(reps, || {
            dir_dual(p.as_ptr(), pl, c.as_ptr(), cl, d as i64, b.as_mut_ptr(), m);
        });
        let t_rust = best_of(reps, || dir_rust(&p, &c, d, &mut r));
        for q in 0..k * d {
            assert!(
                (a[q] - r[q]).abs() <= 1e-9 * (1.0 + r[q].abs()),
                "const {q}"
            );
            assert!((b[q] - r[q]).abs() <= 1e-9 * (1.0 + r[q].abs()), "dual {q}");
        }
        println!(
            "| {n}, {k}, {d} | {:.3} | {:.3} | {:.3} | {:.2} | {:.2} | {:.3} |",
            t_cost * 1e3,
            t_const * 1e3,
            t_dual * 1e3,
            t_dual / t_const,
            t_const / t_rust,
            t_rust * 1e3
        );
    }
}
