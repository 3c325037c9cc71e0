//! Behaviour an independent reading of the language (docs/) expected and adc did not
//! give (a conformance run of 2026-11-26): NaN in `min`/`max`, `float`
//! operands meeting double literals, derivatives of programs with externs
//! whose result needs none, and checkpointed loops whose local arrays
//! outlive an iteration.

use crate::support;

use crate::support::{d, floats, jit};
use adc::{ArgValue, Constant};

/// `min`/`max` are C's `fmin`/`fmax`: a NaN argument is ignored, in either
/// position (`min(1.0, NaN)` was 1.0 but `min(NaN, 1.0)` NaN), and the
/// derivative follows the argument returned, in both modes.
#[test]
fn min_and_max_ignore_nan() {
    let j = jit("
[autodiff_reverse(dmn, Active, Active, Active)]
[autodiff_forward(tmn, Dual, Dual, Dual)]
double mn(double a, double b) { return min(a, b); }
[autodiff_reverse(dmx, Active, Active, Active)]
double mx(double a, double b) { return max(a, b); }
");
    let nan = f64::NAN;
    for (name, f) in [("mn", f64::min as fn(f64, f64) -> f64), ("mx", f64::max)] {
        for (a, b) in [(nan, 1.0), (1.0, nan), (2.0, 1.0), (1.0, 2.0)] {
            assert_eq!(
                floats(&j, name, &mut [d(a), d(b)]),
                vec![f(a, b)],
                "{name}({a}, {b})"
            );
        }
        assert!(floats(&j, name, &mut [d(nan), d(nan)])[0].is_nan());
    }
    // The gradient goes to the argument that is not NaN.
    assert_eq!(
        floats(&j, "dmn", &mut [d(nan), d(1.0), d(1.0)])[1..],
        [0.0, 1.0]
    );
    assert_eq!(
        floats(&j, "dmn", &mut [d(1.0), d(nan), d(1.0)])[1..],
        [1.0, 0.0]
    );
    assert_eq!(
        floats(&j, "dmx", &mut [d(nan), d(1.0), d(1.0)])[1..],
        [0.0, 1.0]
    );
    assert_eq!(
        floats(&j, "tmn", &mut [d(nan), d(7.0), d(1.0), d(5.0)])[1],
        5.0
    );
    assert_eq!(
        floats(&j, "tmn", &mut [d(1.0), d(7.0), d(nan), d(5.0)])[1],
        7.0
    );
}

/// A `float` meeting an unsuffixed literal converts to `double` as in C,
/// unless the value is wanted as a `float` (`y + 1e-10` lost the `1e-10`
/// in `float` arithmetic, and `y == 0.1` was true).
#[test]
fn float_operands_meet_double_literals_in_double() {
    let j = jit("
double prod() { float y = 0.1f; double d = y * 0.1; return d; }
double sum() { float y = 0.1f; return y + 1e-10; }
bool same() { float y = 0.1f; return y == 0.1; }
float narrow(float y) { float z = y * 0.1; return z; }
float cast(float y) { return float(y * 0.1); }
");
    let y = 0.1f32 as f64;
    assert_eq!(floats(&j, "prod", &mut []), vec![y * 0.1]);
    assert_eq!(floats(&j, "sum", &mut []), vec![y + 1e-10]);
    assert_eq!(
        j.call("same", &mut []).expect("runs"),
        vec![Constant::Bool(false)]
    );
    // Wanted as a `float`: the literal adapts, no cast needed.
    let z = j
        .call("narrow", &mut [ArgValue::Scalar(Constant::F32(0.1))])
        .expect("runs");
    assert_eq!(z, vec![Constant::F32(0.1f32 * 0.1f32)]);
    // An explicit `float(...)` computes inside in `double` and rounds once,
    // as C's `(float)(y * 0.1)` (it computed in `float`: 0.25900003).
    let y = 2.590_000_2_f32;
    let c = j
        .call("cast", &mut [ArgValue::Scalar(Constant::F32(y))])
        .expect("runs");
    assert_eq!(c, vec![Constant::F32((y as f64 * 0.1) as f32)]);
    assert_ne!(
        (y as f64 * 0.1) as f32,
        y * 0.1f32,
        "a value where the two differ"
    );
}

/// An extern whose result needs no derivative (under `no_diff`, only
/// compared, cast to `int`, unused, or an `int`) needs no custom
/// derivative: these were E0401 in both modes.
#[test]
fn externs_whose_results_need_no_derivative() {
    let j = jit("
extern double j0(double x);
extern int ilogb(double x);
[autodiff_reverse(d1, Active, Active)]
[autodiff_forward(t1, Dual, Dual)]
double f1(double x) { return x + no_diff(j0(x)); }
[autodiff_reverse(d2, Active, Active)]
double f2(double x) { if (j0(x) > 0.0) { return x * 2.0; } return x; }
[autodiff_reverse(d3, Active, Active)]
double f3(double x) { return x * double(int(j0(x) * 10.0)); }
[autodiff_reverse(d4, Active, Active)]
double f4(double x) { double unused = j0(x); return x * x; }
[autodiff_reverse(d5, Active, Active)]
double f5(double x) { return x * double(ilogb(x)); }
");
    let j0 = |x: f64| floats(&j, "f1", &mut [d(x)])[0] - x;
    assert_eq!(
        floats(&j, "d1", &mut [d(1.5), d(1.0)]),
        vec![1.5 + j0(1.5), 1.0]
    );
    assert_eq!(
        floats(&j, "t1", &mut [d(1.5), d(2.0)]),
        vec![1.5 + j0(1.5), 2.0]
    );
    assert_eq!(floats(&j, "d2", &mut [d(1.5), d(1.0)])[1], 2.0); // j0(1.5) > 0
    assert_eq!(floats(&j, "d3", &mut [d(1.5), d(1.0)])[1], 5.0); // int(5.11)
    assert_eq!(floats(&j, "d4", &mut [d(1.5), d(1.0)])[1], 3.0);
    assert_eq!(floats(&j, "d5", &mut [d(5.0), d(1.0)])[1], 2.0); // ilogb(5) = 2
}

/// A checkpointed loop whose body declares a local array and leaves by
/// `break` or `return` after it was refused (E0401); it is differentiated
/// without checkpoints, with the derivative it has without the attribute.
#[test]
fn checkpointed_loops_whose_arrays_outlive_an_iteration() {
    let body = |attr: &str, leave: &str| {
        format!(
            "double f{attr_name}(double x, int n) {{
    double s = x;
    {attr} for (int i = 0; i < n; i++) {{
        double t[2];
        t[0] = s * 1.1; t[1] = sin(t[0]);
        if (t[1] > 0.99) {leave}
        s = t[0] + t[1];
    }}
    return s;
}}",
            attr_name = if attr.is_empty() { "_plain" } else { "_ckpt" },
        )
    };
    for leave in ["break;", "return s * t[1];"] {
        for attr in ["[checkpoint(2)]", "[checkpoint]"] {
            let src = format!(
                "[autodiff_reverse(dp, Active, Const, Active)]\n{}\n[autodiff_reverse(dc, Active, Const, Active)]\n{}\n",
                body("", leave),
                body(attr, leave)
            );
            let j = jit(&src);
            for x in [0.1, 0.3, 0.7] {
                let n = ArgValue::Scalar(Constant::I64(9));
                let plain = floats(&j, "dp", &mut [d(x), n.clone(), d(1.0)]);
                let ckpt = floats(&j, "dc", &mut [d(x), n, d(1.0)]);
                for (k, (c, p)) in ckpt.iter().zip(&plain).enumerate() {
                    support::assert_close(*c, *p, 1e-12, &format!("{leave} {attr} x={x} [{k}]"));
                }
            }
        }
    }
}

/// A checkpointed loop nested in another loop whose body declares a local
/// array (no `break`): its array was "passed back along an edge that also
/// leaves the loop" (E0401, an independent tester's G1); it is
/// differentiated like the plain loop.
#[test]
fn checkpointed_inner_loop_declaring_a_local_array() {
    let src = |attr: &str, name: &str| {
        format!(
            "[autodiff_reverse(d{name}, Active, Active)]
double {name}(double x) {{
    double v = x;
    for (int j = 0; j < 2; j++) {{
        {attr}
        for (int i = 0; i < 2; i++) {{ double t[1]; t[0] = v; v = sin(t[0]); }}
    }}
    return v;
}}\n"
        )
    };
    for attr in ["[checkpoint(3)]", "[checkpoint]"] {
        let j = jit(&(src("", "plain") + &src(attr, "ckpt")));
        let plain = floats(&j, "dplain", &mut [d(0.5), d(1.0)]);
        let ckpt = floats(&j, "dckpt", &mut [d(0.5), d(1.0)]);
        assert_eq!(plain[1], 0.6293345060012926, "{attr}");
        support::assert_close(ckpt[1], plain[1], 1e-12, attr);
    }
}

/// C's lexical habits: an upper-case `F` suffix, `f(void)`, a byte-order
/// mark, vertical tabs (each a syntax error before).
#[test]
fn c_lexical_habits() {
    let j =
        jit("\u{feff}float f(void) { return 1.5F + 2e1F; }\ndouble g() {\u{b} return 0.5f; }\n");
    assert_eq!(
        j.call("f", &mut []).expect("runs"),
        vec![Constant::F32(21.5)]
    );
    assert_eq!(floats(&j, "g", &mut []), vec![0.5]);
}

/// Math library functions with a C `int` in their signature (robust5 F7):
/// `ilogb`'s 32-bit result was read as 64 bits (`ilogb(0.5)` gave
/// 4294967295), `ldexp`'s and `jn`'s `int` arguments were passed as
/// 64-bit registers (right only while the value fits).
#[test]
fn math_functions_with_c_int_in_their_signature() {
    let j = jit("
extern int ilogb(double x);
extern double ldexp(double x, int e);
extern double jn(int n, double x);
int lg(double x) { return ilogb(x); }
double ld(double x, int e) { return ldexp(x, e); }
double bessel(int n, double x) { return jn(n, x); }
");
    let int = |v: i64| ArgValue::Scalar(Constant::I64(v));
    for (x, want) in [(0.5, -1), (1.0, 0), (1024.0, 10), (3e-300, -995)] {
        assert_eq!(
            j.call("lg", &mut [d(x)]).expect("runs"),
            vec![Constant::I64(want)],
            "ilogb({x})"
        );
    }
    assert_eq!(floats(&j, "ld", &mut [d(1.5), int(-2)]), vec![0.375]);
    assert_eq!(
        floats(&j, "ld", &mut [d(1.0), int(1000)]),
        vec![2f64.powi(1000)]
    );
    // J_2(x) = 2 J_1(x) / x - J_0(x).
    let j2 = floats(&j, "bessel", &mut [int(2), d(1.5)])[0];
    let (j0, j1) = (
        floats(&j, "bessel", &mut [int(0), d(1.5)])[0],
        floats(&j, "bessel", &mut [int(1), d(1.5)])[0],
    );
    assert!((j2 - (2.0 * j1 / 1.5 - j0)).abs() < 1e-15, "{j2} {j1} {j0}");
    assert!(j2 > 0.2 && j2 < 0.25, "{j2}");
}

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
        let err = adc::compile_jit("t.ad", src, false).err().expect("refused");
        assert!(err.rendered.contains(code), "{src}\n{err}");
    }
    // The C signatures themselves are fine.
    let j = jit("extern double cos(double x);\nextern float powf(float x, float y);\ndouble g() { return cos(0.0) + double(powf(2.0, 3.0)); }");
    assert_eq!(floats(&j, "g", &mut []), vec![9.0]);
}
