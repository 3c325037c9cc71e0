//! Found by an independent reading of the language (docs/) in a
//! conformance run of 2026-11-26: behaviour it expected and adc did not
//! give.

use crate::support::{floats, jit};

/// An `extern` of a math built-in's C name must have its C signature
/// (`extern float cos(double x);` read a double's low half as a float), and
/// a function takes one custom derivative per mode (a second one silently
/// won) (robust5 F3, F9).
#[test]
fn math_externs_and_custom_derivatives_are_checked() {
    let refused = [
        ("extern float cos(double x);\nfloat g() { return cos(0.0); }", "E0202"),
        ("extern double pow(double x);\ndouble g() { return pow(2.0); }", "E0202"),
        ("extern int cos(double x);\nint g() { return cos(0.0); }", "E0202"),
        ("extern double ldexp(double x, double e);\ndouble g() { return ldexp(1.5, 2.0); }", "E0202"),
        ("extern double ilogb(double x);\ndouble g() { return ilogb(1.5); }", "E0202"),
        (
            "double d1(double x, double s) { return s; }\ndouble d2(double x, double s) { return 2.0 * s; }\n[reverse_derivative(d1)]\n[reverse_derivative(d2)]\ndouble f(double x) { return x; }",
            "E0306",
        ),
    ];
    for (src, code) in refused {
        let err = adc::compile_jit("t.ad", src, &adc::CompileOptions::default())
            .err()
            .expect("refused");
        assert!(err.rendered.contains(code), "{src}\n{err}");
    }
    // The C signatures themselves are fine.
    let j = jit("extern double cos(double x);\nextern float powf(float x, float y);\ndouble g() { return cos(0.0) + double(powf(2.0, 3.0)); }");
    assert_eq!(floats(&j, "g", &mut []), vec![9.0]);
}
