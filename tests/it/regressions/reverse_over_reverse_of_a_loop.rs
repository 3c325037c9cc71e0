use crate::support::{d, floats, jit};

/// Reverse over reverse (was the compile error E0401): `dg`'s own tape
/// moves to tape 1 in `dh`, which tapes on tape 0. g = 3x², so g' = 6x and
/// g'' = 6.
#[test]
fn reverse_over_reverse_of_a_loop() {
    let j = jit("[autodiff_reverse(dg, Active, Active)]
double g(double x) { double s = 0.0; for (int i = 0; i < 3; i++) s += x * x * double(i); return s; }
[autodiff_reverse(dh, Active, Active)]
double gp(double x) { auto [y, d] = dg(x, 1.0); return d; }");
    assert_eq!(floats(&j, "dh", &mut [d(1.5), d(1.0)]), vec![9.0, 6.0]);
}
