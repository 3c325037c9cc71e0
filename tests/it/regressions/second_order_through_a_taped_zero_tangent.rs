use super::seed_passes;
use crate::support::{assert_close, d, floats, jit};
use adc::{ArgValue, ArrayValue};

/// Second derivatives of a loop that tapes a value with a zero tangent
/// (the sign of `abs`, a constant select): linearize pushed no tangent for
/// it but popped one, so forward over reverse read the tape out of step
/// (a wrong gradient, or a segfault) and reverse over reverse was wrong.
/// Found by the random-program tester (seed 9). f = (n |y|)^2 with n = 2:
/// f' = 8y, f'' = 8.
#[test]
fn second_order_through_a_taped_zero_tangent() {
    let j = jit("[autodiff_reverse(f_r2, Active, Const, Active)]
double f2(double y, double[] a) {
    double t9[2] = {y, 0.5};
    double s = 0.0;
    for (int i = 0; i < len(a); i++) s += abs(t9[0]);
    return s * s;
}
[autodiff_reverse(h_rr, Active, Const, Active)]
double gr(double y, double[] a) { auto [p, dy] = f_r2(y, a, 1.0); return dy; }
[autodiff_forward(h_fr, Dual, Const, Dual)]
double gr2(double y, double[] a) { auto [p, dy] = f_r2(y, a, 1.0); return dy; }");
    let a = || ArgValue::Array(ArrayValue::F64(vec![1.0, 2.0]));
    let rr = floats(&j, "h_rr", &mut [d(0.2), a(), d(1.0)]);
    let fr = floats(&j, "h_fr", &mut [d(0.2), d(1.0), a()]);
    for got in [rr, fr] {
        assert_close(got[0], 1.6, 1e-14, "f'");
        assert_close(got[1], 8.0, 1e-14, "f''");
    }
}

/// The seed that found it: running this killed the test process
/// (SIGSEGV in generated code).
#[test]
fn forward_over_reverse_crash_seed_9() {
    seed_passes(9);
}
