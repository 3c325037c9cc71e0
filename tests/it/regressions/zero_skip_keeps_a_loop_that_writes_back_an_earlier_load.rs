use crate::support::{d, floats, jit};
use adc::{ArgValue, Constant};

/// `zero-skip` once skipped a loop whose store wrote back a value loaded
/// before the loop (`a[0] = v + t` with `v = a[0]` read before `a[0] = 5`):
/// with the tangent `t` zero, the loop is not a no-op, it restores `v`.
#[test]
fn zero_skip_keeps_a_loop_that_writes_back_an_earlier_load() {
    let j = jit("[autodiff_forward(dsq, Dual, Dual)]
double sq(double x) { return x * x; }
double f(double x, double y, int n) {
    double a[2];
    if (n > 0) { a[0] = x; }
    double v = a[0];
    a[0] = 5.0;
    for (int i = 0; i < n; i++) {
        auto [p, t] = dsq(x + double(i), y);
        a[0] = v + t;
    }
    return a[0];
}");
    let n = ArgValue::Scalar(Constant::I64(2));
    // a[0] = v + t with v = x and, last, t = 2 (x + 1) y: x when y is zero.
    assert_eq!(floats(&j, "f", &mut [d(3.0), d(0.0), n.clone()]), vec![3.0]);
    assert_eq!(
        floats(&j, "f", &mut [d(3.0), d(0.5), n]),
        vec![3.0 + 2.0 * 4.0 * 0.5]
    );
}
