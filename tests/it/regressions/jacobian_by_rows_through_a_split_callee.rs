//! Difftest seeds 89 and 149 failed the dense Jacobian oracle (wrong
//! entries) and seed 133 crashed it, once `[jacobian]` took rows (reverse
//! vector mode) for the oracle's `g`, which calls `f` twice. Their `f` is
//! too big to inline, so it runs in split mode, and passes a local to a
//! `[checkpoint]` function's `inout` scalar in a loop: the rows, run lane
//! by lane through a width-1 reverse derivative, met the shadow slot that
//! `f`'s reverse half wrote into its forward half's dead frame (the bug and
//! its fix: `split_callee_passing_a_local_to_a_checkpointed_function_in_a_loop`).

use super::seed_passes;
use crate::support::{arg_floats, arr, d, jit};
use adc::{ArgValue, Constant};

#[test]
fn seeds_89_133_and_149_pass() {
    for seed in [89, 133, 149] {
        seed_passes(seed);
    }
}

/// The reduced program: the Jacobian by rows equals the one by columns.
#[test]
fn jacobian_by_rows_through_a_split_callee() {
    let src = "[checkpoint]
void acc(inout double s, double u) { s = tanh(s * u); }
double f(double x, double y, int n) {
    if (n > 0) return f(y, x, n - 1);
    for (int k = 0; k < 2; k++) { if (x > 0.0) acc(y, x + 0.1 * k); }
    return y;
}
[jacobian(jr, reverse)]
[jacobian(jc, forward)]
double g(double x, double y, int n, inout double[] o) {
    o[0] = o[0] * f(y, x, n);
    return f(x, y, n) * f(y, x, n);
}";
    let j = jit(src);
    let run = |name: &str| {
        let mut args = [
            d(0.5),
            d(0.7),
            ArgValue::Scalar(Constant::I64(0)),
            arr(&[1.5]),
            arr(&[0.0; 6]),
        ];
        let r = j
            .call(name, &mut args)
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        (r, arg_floats(&args[3]), arg_floats(&args[4]))
    };
    let (rows, cols) = (run("jr"), run("jc"));
    assert_eq!(rows.0, cols.0, "the result");
    assert_eq!(rows.1, cols.1, "the write to o");
    for (k, (a, b)) in rows.2.iter().zip(&cols.2).enumerate() {
        assert!(
            (a - b).abs() <= 1e-12 * (1.0 + b.abs()),
            "entry {k}: rows {a}, columns {b}"
        );
    }
    assert!(cols.2.iter().all(|x| x.is_finite()) && cols.2[0] != 0.0);
}
