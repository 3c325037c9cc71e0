//! Found by an independent reading of the language (docs/) in a
//! conformance run of 2026-11-26: behaviour it expected and adc did not
//! give.

use crate::support::{d, floats, jit};

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
