use crate::support::{assert_close, d, floats, jit};
use adc::{ArgValue, ArrayValue, Constant};

/// Loops whose start is computed from the counters of the loops around
/// them: the reverse sweep computes the start again from those counters'
/// slots instead of reading it from the tape (`transpose`'s
/// `remade_start`); a start from data still comes off the tape. Reverse
/// mode against forward mode, coordinate by coordinate, and against
/// central differences.
#[test]
fn loop_starts_computed_again_in_the_reverse_sweep() {
    let body = "(double[] x, int m) {
    int n = len(x);
    double s = 0.0;
    for (int i = 0; i < n; i++) {
        for (int j = i + 1; j < n; j++) s += x[i] * x[j];
        for (int j = (i * (i + 1) / 2) % 3; j < n; j += 2) s += sin(x[j]) * x[i];
        for (int k = 0; k < i; k++) for (int j = i + k; j < n; j++) s += x[j] * x[k] * 0.5;
        int q = int(x[i] * 0.0) + m;
        for (int j = q; j < n; j++) s += x[j] * x[i] * x[i];
        for (int j = n - 1; j > i; j--) s += cos(x[j]) * x[i];
    }
    return s;
}";
    let j = jit(&format!(
        "[autodiff_reverse(rev, Duplicated, Const, ActiveOnly)]\ndouble f{body}
[autodiff_forward(fwd, Dual, Const, DualOnly)]\ndouble g{body}"
    ));
    let x = [0.3, -1.1, 0.7, 1.9, -0.4, 0.25];
    let n = x.len();
    let arr = |v: Vec<f64>| ArgValue::Array(ArrayValue::F64(v));
    let mut args = [
        arr(x.to_vec()),
        arr(vec![0.0; n]),
        ArgValue::Scalar(Constant::I64(1)),
        d(1.0),
    ];
    floats(&j, "rev", &mut args);
    let ArgValue::Array(ArrayValue::F64(grad)) = &args[1] else {
        panic!("shadow")
    };
    let grad = grad.clone();
    for k in 0..n {
        let mut e = vec![0.0; n];
        e[k] = 1.0;
        let t = floats(
            &j,
            "fwd",
            &mut [arr(x.to_vec()), arr(e), ArgValue::Scalar(Constant::I64(1))],
        );
        assert_close(
            grad[k],
            t[0],
            1e-13,
            &format!("reverse against forward, x{k}"),
        );
        let h = 1e-6;
        let at = |dx: f64| {
            let mut y = x.to_vec();
            y[k] += dx;
            floats(&j, "g", &mut [arr(y), ArgValue::Scalar(Constant::I64(1))])[0]
        };
        assert_close(
            grad[k],
            (at(h) - at(-h)) / (2.0 * h),
            1e-7,
            &format!("differences, x{k}"),
        );
    }
}
