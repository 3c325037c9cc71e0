use crate::support::{d, floats, jit};

/// fmod's partial in its second argument is minus the quotient fmod itself
/// used: `fmod(1, 0.1)` is 1 - 9 * 0.1, but the rounded 1 / 0.1 is 10, and
/// the derivative said -10 (a review's finding).
#[test]
fn fmod_partial_uses_fmods_own_quotient() {
    let j = jit("[autodiff_reverse(df, Active, Active, Active)]
[autodiff_forward(tf, Dual, Dual, Dual)]
double f(double x, double y) { return fmod(x, y); }");
    assert_eq!(
        floats(&j, "df", &mut [d(1.0), d(0.1), d(1.0)])[1..],
        [1.0, -9.0]
    );
    assert_eq!(
        floats(&j, "tf", &mut [d(1.0), d(0.0), d(0.1), d(1.0)])[1],
        -9.0
    );
    assert_eq!(
        floats(&j, "df", &mut [d(-7.5), d(2.0), d(1.0)])[1..],
        [1.0, 3.0]
    );
}
