use crate::support::{d, floats, jit};

/// A loop that overwrites `y` without reading it: the adjoint reaching the
/// loop exit belongs to the last iteration's `b` alone. `mem2reg` once left
/// the loop header out of its own dominance frontier, so the slot holding
/// that adjoint was never seen to be reset and `b` got it twice, `x` too.
#[test]
fn loop_that_overwrites_a_variable_without_reading_it() {
    let j = jit("[autodiff_reverse(df, Active, Active, Active)]
double f(double x, double b) {
    double y = x * x;
    for (int i = 0; i < 2; i++) y = b;
    return y;
}");
    assert_eq!(
        floats(&j, "df", &mut [d(3.0), d(2.0), d(1.0)]),
        vec![2.0, 0.0, 1.0]
    );
}
