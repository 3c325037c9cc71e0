use crate::support::{d, floats, jit};

use super::{compiles, seed_passes};

/// A reverse derivative of code calling a forward derivative whose tangent
/// only feeds a comparison, an `int` cast or nothing: `linearize` kept the
/// internal `__adc_jvp_g` call primal (its `deriv` mark is cleared once it
/// is generated), which later passes take for a derivative call: a panic in
/// `unzip` or E0999 (a review of the `needless` analysis).
#[test]
fn forward_derivative_results_unused_under_reverse_mode() {
    let g = "double g(double x, int n) {
    if (n <= 0) { return x * x; }
    return g(x, n - 1) * 1.5;
}
[autodiff_forward(df, Dual, Const, Dual)]
double f(double x, int n) { return g(x, n) + x; }
";
    for (body, want) in [
        ("auto [p, t] = df(x, 1.0, 3); double y = x * x; if (t > 100.0) { y = y * 2.0; } return y;", 2.0 * 1.5),
        ("auto [p, t] = df(x, 1.0, 3); return x * x + double(int(t));", 2.0 * 1.5),
        ("auto [p, t] = df(x, 1.0, 1); return x * x;", 2.0 * 1.5),
    ] {
        let src = format!("{g}[autodiff_reverse(dh, Active, Active)]\ndouble h(double x) {{ {body} }}\n");
        let j = jit(&src);
        let got = floats(&j, "dh", &mut [d(1.5), d(1.0)]);
        assert_eq!(got[1], want, "{body}");
    }
}

/// Campaign of f263ab6, seed 240006378 (shrunk): reverse over forward of a
/// function whose forward derivative's results feed nothing that needs a
/// derivative; `needless` kept the `__adc_jvp_` call primal and `unzip`
/// panicked (the review's N1, same root).
#[test]
fn needless_kept_a_forward_derivative_call_primal() {
    compiles(include_str!(
        "needless_kept_a_forward_derivative_call_primal.ad"
    ));
    seed_passes(240006378);
}
