use crate::support::{d, floats, jit};
use adc::Constant;

/// Loops with huge constant bounds or steps: the trip count and the
/// counter's end, computed from the bounds, overflowed an i64. `unroll`
/// ran `for (i = -6e18; i < 6e18; i += 4e18)` zero times instead of three,
/// the reverse sweep of a loop that ran zero times (from -6e18 down to
/// 4e18) popped an empty tape (a segfault), and one with a step of -8.4e18
/// got a wrong gradient (independent tester's findings). Counted loops now
/// step by at most 2^20 (`loops::MAX_STEP`), trip counts are computed in
/// i128, and the distance to the bound is 0 when the loop did not run.
#[test]
fn loops_with_huge_bounds_or_steps() {
    let j = jit("int b1() {
    int s = 0;
    for (int i = -6000000000000000000; i < 6000000000000000000; i += 4000000000000000000) s = s * 10 + 1;
    return s;
}
[autodiff_reverse(d4, Active, Active)]
double b4(double x) {
    double s = x;
    for (int i = -6000000000000000000; i < 6000000000000000000; i += 4000000000000000000) s = s * x;
    return s;
}
[autodiff_reverse(dz1, Active, Active)]
double z1(double x) { double s = x; for (int i = -6000000000000000000; i >= 4000000000000000000; i -= 2) s = s * x; return s; }
[autodiff_reverse(dz3, Active, Active)]
double z3(double x) { double s = x; for (int i = 7000000000000000000; i >= 4; i -= 8400000000000000000) s = s * x; return s; }
[autodiff_reverse(dg, Active, Active)]
double g(double x) { double s = x; for (int i = 0; i < 10; i += 9223372036854775800) s = s * x; return s; }");
    assert_eq!(
        j.call("b1", &mut []).expect("runs"),
        vec![Constant::I64(111)]
    );
    assert_eq!(floats(&j, "d4", &mut [d(2.0), d(1.0)]), vec![16.0, 32.0]);
    assert_eq!(floats(&j, "dz1", &mut [d(2.0), d(1.0)]), vec![2.0, 1.0]);
    assert_eq!(floats(&j, "dz3", &mut [d(2.0), d(1.0)]), vec![4.0, 4.0]);
    assert_eq!(floats(&j, "dg", &mut [d(2.0), d(1.0)]), vec![4.0, 4.0]);
}
