//! Found by an independent reading of the language (docs/) in a
//! conformance run of 2026-11-26: behaviour it expected and adc did not
//! give.

use crate::support::{d, floats, jit};
use adc::{ArgValue, Constant};

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
