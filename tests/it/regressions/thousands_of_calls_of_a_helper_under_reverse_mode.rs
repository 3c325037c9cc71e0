use crate::support::{assert_close, d, floats, jit};

/// Thousands of calls of a tiny helper in a row (robust5 F4): past the
/// first 64 inlined calls they stayed calls, and register allocation of the
/// reverse derivative took memory growing with calls times values (2,000
/// calls 612 MB, 8,000 an abort). Tiny callees that call nothing are now
/// inlined wherever they are called, in one pass; a larger helper called
/// as often compiles with the single-pass register allocator.
#[test]
fn thousands_of_calls_of_a_helper_under_reverse_mode() {
    for (helper, dg) in [
        ("return x * 1.0001;", "1.0001"),
        // Branches: stays within the inlining budget (each inlined copy
        // splits the caller's block: inlining all 8,000 took 12 s).
        ("if (x < 0.0) { return -x; } return x * 1.0001;", "1.0001"),
        ("double a = x * 1.0001; double b = a * 0.5 + 0.25 * x * x; return a + 0.001 * b - 0.001 * (a * 0.5 + 0.25 * x * x) + 0.0 * sin(a) * cos(b);", ""),
    ] {
        let n = 3000;
        let src = format!(
            "double g(double x) {{ {helper} }}\n[autodiff_reverse(df, Active, Active)]\ndouble f(double x) {{ double y = x; {} return y; }}",
            "y = g(y); ".repeat(n)
        );
        let j = jit(&src);
        let out = floats(&j, "df", &mut [d(0.5), d(1.0)]);
        if dg.is_empty() {
            assert!(out[1].is_finite(), "{out:?}");
        } else {
            let want = 1.0001f64.powi(n as i32);
            assert_close(out[1], want, 1e-12, "d/dx");
        }
    }
}
