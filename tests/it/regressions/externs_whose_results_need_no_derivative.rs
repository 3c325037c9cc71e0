//! Found by an independent reading of the language (docs/) in a
//! conformance run of 2026-11-26: behaviour it expected and adc did not
//! give.

use crate::support::{d, floats, jit};

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
