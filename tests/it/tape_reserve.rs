//! One tape capacity check per block (codegen's `tape_reserve`): loop
//! bodies of four copies (`unroll-inner`) whose pushes one check covers,
//! between calls that stay calls (split mode: the tape is lent and taken
//! back), over enough iterations that the tape grows many times at those
//! checks. A push stored past the room its check made would corrupt the
//! heap or the tape; the gradient must equal central differences along
//! random directions.

use crate::support;

const SOURCE: &str = "
double g(double x, int n) { if (n == 0) return sin(x); return g(x * 0.5, n - 1) * x; }
[autodiff_reverse(df, Duplicated, ActiveOnly)]
double f(double[] a) {
    int n = len(a);
    double y[n];
    double z[n];
    for (int i = 0; i < n; i++) y[i] = a[i];
    for (int k = 0; k < 3; k++) {
        for (int i = 0; i < n; i++) z[i] = a[i] * y[i];
        y[k] = g(y[k], k + 1);
        for (int i = 0; i < n; i++) y[i] = z[i] * y[i] * 0.5 + (a[i] > 0.005 ? a[i] : z[i]);
    }
    double s = 0.0;
    for (int i = 0; i < n; i++) s += y[i];
    return s;
}
";

#[test]
fn pushes_one_check_covers_grow_the_tape_and_keep_their_values() {
    let j = support::jit(SOURCE);
    let n = 20_000;
    let a: Vec<f64> = (0..n)
        .map(|i| ((i * 37 % 101) as f64 / 50.0 - 1.0) * 0.7)
        .collect();
    let mut call = [
        support::arr(&a),
        support::arr(&vec![0.0; n]),
        support::d(1.0),
    ];
    j.call("df", &mut call).expect("df runs");
    let grad = support::arg_floats(&call[1]);
    let f = |x: &[f64]| support::floats(&j, "f", &mut [support::arr(x)])[0];
    for seed in 1..4u64 {
        let v: Vec<f64> = (0..n)
            .map(|i| (((i as u64 * 7919 + seed * 104_729) % 1000) as f64 / 500.0) - 1.0)
            .collect();
        let h = 1e-6;
        let plus: Vec<f64> = a.iter().zip(&v).map(|(x, d)| x + h * d).collect();
        let minus: Vec<f64> = a.iter().zip(&v).map(|(x, d)| x - h * d).collect();
        let want = (f(&plus) - f(&minus)) / (2.0 * h);
        let got: f64 = grad.iter().zip(&v).map(|(g, d)| g * d).sum();
        support::assert_close(got, want, 1e-5, &format!("direction {seed}"));
    }
}
