//! Found by an independent reading of the language (docs/) in a
//! conformance run of 2026-11-26: behaviour it expected and adc did not
//! give.

use crate::support::{floats, jit};
use adc::{ArgValue, Constant};

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
