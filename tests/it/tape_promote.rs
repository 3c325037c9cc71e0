//! `tape-promote` (`opt/tape_promote.rs`) turns the tape values of a
//! reverse derivative's code outside loops into stack slots when following
//! the tape along every path pairs each pop with one push. Each program's
//! reverse gradient (`df`) must equal its forward-mode tangents (`tf`, no
//! tape), and its reverse-over-reverse gradient (`dg`) the forward-over-
//! reverse tangents (`tg`) of the same weighted gradient `g`, at points
//! that take each branch. Entry `f0(double x, double y, double[] a)`.

use crate::support::{self, arr, d};

const PROGRAMS: &[(&str, &str)] = &[
    // Nested `if`s with early returns, `?:`, conditions tested again.
    ("nested_ifs_early_returns", "double f0(double x, double y, double[] a) {
            double t = x * y;
            if (x > 0.5) {
                if (y < a[0]) { t = sin(t) * x; if (t > 0.1) return t * y; }
                else t = t * t;
            } else t = cos(t) + y;
            double u = x > y ? t * x : t / y;
            if (x > 0.5) u = u * exp(x);
            if (a[1] > y) { u = u * a[1]; if (x > 0.5) u = sin(u); }
            return u * t; }"),
    // `min`, `max`, `abs` next to loops, one with a data-dependent exit.
    ("min_max_abs_next_to_loops", "double f0(double x, double y, double[] a) {
            double m = max(x * y, sin(x));
            double s = 0.0;
            for (int i = 0; i < len(a); i++) s += a[i] * m;
            double n = min(abs(s - y), x * x);
            if (a[1] > 0.0) n = n * s;
            double k = 0.0; int j = 0;
            while (k < 2.0 && j < 50) { k += abs(x) + 0.1; j++; }
            double r = n * m + abs(x - y) * s;
            if (j > 3) r = r * sin(r);
            return r * max(y, a[2] * x); }"),
    // Conditions counted from an array, kept in a `bool`, a small loop.
    ("conditions_from_arrays", "double f0(double x, double y, double[] a) {
            int n = len(a); int k = 0;
            for (int i = 0; i < n; i++) if (a[i] > x) k++;
            double t = x;
            if (k == 0) t = t * y;
            else if (k == 1) { t = sin(t * y); if (a[0] > 0.0) t = t * a[0]; }
            else t = exp(t) * y;
            bool c = t > y;
            if (c) t = t * t;
            double u = c ? t * x : t + y;
            if (!c && k > 1) u = u * u * x;
            for (int i = 0; i < 3; i++) u = u * 0.5 + sin(u) * a[i];
            return u; }"),
    // `[checkpoint]` callees with branches, called on both arms.
    ("checkpointed_callees", "[checkpoint]
        double c(double x, double y) { double t = x * y;
            if (t > 1.0) { t = sin(t); if (x > 0.0) return t * x; } return t * t + y; }
        double f0(double x, double y, double[] a) {
            double s = c(x, y);
            if (s > a[0]) s = c(s, x) * y; else s = abs(s - a[1]) * x;
            double z = min(s, y) * max(s, x);
            return z + c(z, a[2]); }"),
    // Recursion (a call that stays a call) and an index read from data.
    ("recursion_and_data_indices", "double p(double x, int n) {
            if (n == 0) return x * x;
            double t = sin(x);
            if (t > 0.0) return p(t * x, n - 1) * t;
            return cos(p(x + t, n - 1)); }
        double f0(double x, double y, double[] a) {
            int n = len(a); int k = int(abs(x) * 7.0) % n;
            double b[3];
            b[0] = a[k] * x; b[1] = a[(k + 1) % n] * y; b[2] = b[0] * b[1];
            for (int i = 0; i < 3; i++) { if (b[i] > x) b[i] = sin(b[i]) * y; else b[i] = b[i] * b[i]; }
            double s = p(x * y, 3) * b[k];
            if (k == 1) { b[2] = b[2] * s; s = s + b[2]; }
            b[k] = b[k] * s;
            return s * b[0] + b[1] * b[2] + abs(b[k]); }"),
];

const HARNESS: &str = "
[autodiff_reverse(df, Active, Active, Duplicated, Active)]
double f(double x, double y, double[] a) { return f0(x, y, a); }
[autodiff_forward(tf, Dual, Dual, Dual, DualOnly)]
double h(double x, double y, double[] a) { return f0(x, y, a); }
double g(double x, double y, double[] a) {
    double da[len(a)];
    for (int i = 0; i < len(a); i++) da[i] = 0.0;
    auto [r, dx, dy] = df(x, y, a, da, 1.0);
    return dx * 0.7 + dy * 1.3 + da[1] * 0.4 + r * 0.1; }
[autodiff_reverse(dg, Active, Active, Duplicated, Active)]
double g2(double x, double y, double[] a) { return g(x, y, a); }
[autodiff_forward(tg, Dual, Dual, Dual, DualOnly)]
double g3(double x, double y, double[] a) { return g(x, y, a); }
";

/// The reverse gradient `rev` (`x`, `y`, then `a`'s shadow) and the
/// forward tangents `fwd` along each input, at `(x, y, a)`.
fn both(
    j: &adc::JitModule,
    rev: &str,
    fwd: &str,
    x: f64,
    y: f64,
    a: &[f64],
) -> (Vec<f64>, Vec<f64>) {
    let zeros = vec![0.0; a.len()];
    let mut args = [d(x), d(y), arr(a), arr(&zeros), d(1.0)];
    let mut grad = support::floats(j, rev, &mut args)[1..].to_vec();
    grad.extend(support::arg_floats(&args[3]));
    let mut tangents = Vec::new();
    for k in 0..2 + a.len() {
        let unit = |i: usize| if i == k { 1.0 } else { 0.0 };
        let mut da = zeros.clone();
        if k >= 2 {
            da[k - 2] = 1.0;
        }
        let mut args = [d(x), d(unit(0)), d(y), d(unit(1)), arr(a), arr(&da)];
        tangents.extend(support::floats(j, fwd, &mut args));
    }
    (grad, tangents)
}

#[test]
fn promoted_tapes_give_the_forward_mode_derivatives() {
    let points = [
        (-0.7, -0.4),
        (0.3, 0.6),
        (0.8, 1.7),
        (1.3, 0.6),
        (1.3, -0.4),
    ];
    let arrays: [&[f64]; 3] = [&[0.9, -0.2, 0.5], &[-0.3, 0.85, -1.1], &[1.5, 1.2, 0.1]];
    let mut failures = Vec::new();
    for (name, program) in PROGRAMS {
        let j = support::jit(&format!("{program}\n{HARNESS}"));
        for &(x, y) in &points {
            for a in arrays {
                for (rev, fwd) in [("df", "tf"), ("dg", "tg")] {
                    let (grad, tangents) = both(&j, rev, fwd, x, y, a);
                    let close = grad.len() == tangents.len()
                        && grad
                            .iter()
                            .zip(&tangents)
                            .all(|(g, t)| (g - t).abs() <= 1e-10 * t.abs().max(1.0));
                    if !close {
                        failures.push(format!(
                            "{name} {rev} at {x}, {y}, {a:?}: {grad:?} vs {tangents:?}"
                        ));
                    }
                }
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// The pass applies: the reverse derivatives (first and second order) of
/// the programs without loops that tape keep no tape.
#[test]
fn their_derivatives_keep_no_tape() {
    for k in [0, 3] {
        let (name, program) = PROGRAMS[k];
        let src = format!("{program}\n{HARNESS}");
        let mut m = adc::driver::frontend("tp.ad", &src, &adc::CompileOptions::default())
            .unwrap_or_else(|f| panic!("{f}"));
        adc::driver::run_stages(&mut m, adc::Stage::Final).expect("stages run");
        let text = m.to_string();
        for func in ["func @df(", "func @dg("] {
            let body = &text[text.find(func).expect("the derivative")..];
            let body = &body[..body.find("\n}").expect("its end")];
            assert!(!body.contains("tape."), "{name}:\n{body}");
        }
    }
}
