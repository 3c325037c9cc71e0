//! Review of the band pattern (`ad::band`, docs/jacobians.md#sparse-hessians)
//! on shapes `band_pattern.rs` does not cover: one base in several blocks
//! (a branch on the index choosing different nonlinear operations), nested
//! loops with the base `i * m + j`, bases `i / 2` and `i + k`, loops run
//! zero times or once, `break` and `return` inside the loop, carried values
//! through `abs`, `min`, quotients by constants and products by `Const`
//! elements (linear: the pattern serves), two-operand built-ins. Each
//! shape: `S` against the dense Hessian (`sparse_hessian::check`), the
//! dense Hessian against central differences of the gradient, and whether
//! the band pattern served (`S__hband`, `S__hbsize`) as expected; shapes
//! the analysis must refuse (carried values in products, quotients, `pow`,
//! choices of loads, `fmod`, `floor`, `no_diff`, a recursive call, a
//! decreasing loop, a `continue`, a base `i % 3`) fall back, still right.

use crate::sparse_hessian::check;
use crate::support::{arr, jit, jit_once};
use adc::{ArgValue, ArrayValue, Constant, JitModule};

/// Whether the band pattern of `S` serves at `args` with `n` columns (the
/// stub filled and every block run in order).
fn served(j: &JitModule, args: &[ArgValue], n: usize) -> bool {
    let mut info = vec![0i64; adc_ir::ad::BAND_INFO_LEN];
    info[0] = -1;
    let mut a = args.to_vec();
    a.push(ArgValue::Array(ArrayValue::I64(info)));
    j.call("S__hband", &mut a).expect("S__hband");
    let mut b = [
        a[args.len()].clone(),
        ArgValue::Scalar(Constant::I64(n as i64)),
    ];
    let r = j.call("S__hbsize", &mut b).expect("S__hbsize");
    r[0] != Constant::I64(-1)
}

/// The gradient of `f` at `x`, by `G`.
fn gradient(j: &JitModule, x: &[f64]) -> Vec<f64> {
    let mut a = [
        arr(x),
        arr(&vec![0.0; x.len()]),
        ArgValue::Scalar(Constant::F64(1.0)),
    ];
    j.call("G", &mut a).expect("G");
    match &a[1] {
        ArgValue::Array(ArrayValue::F64(g)) => g.clone(),
        other => panic!("not floats: {other:?}"),
    }
}

/// `double f(double[] x) { body }` at `x`: `S` against `H`, `H` against
/// central differences of the gradient; returns whether the band served.
fn review(body: &str, x: &[f64]) -> bool {
    let src = format!(
        "[hessian(H)]\n[hessian(S, sparse)]\n[autodiff_reverse(G, Duplicated, Active)]\n\
         double f(double[] x) {{\n{body}\n}}\n\
         double rec(double[] x, int i) {{ if (i == 0) {{ return x[0]; }} return x[i] * rec(x, i - 1); }}\n"
    );
    let j = jit_once(&src);
    let n = x.len();
    check(&j, "f", &[arr(x)], n);
    let mut h = [arr(x), arr(&vec![0.0; n * n])];
    j.call("H", &mut h).expect("H");
    let ArgValue::Array(ArrayValue::F64(dense)) = &h[1] else {
        panic!("H writes floats")
    };
    // `no_diff`'s argument is a constant to `H` and `G`, not to central
    // differences.
    let e = 1e-6;
    for c in (0..n).filter(|_| !body.contains("no_diff")) {
        let (mut up, mut down) = (x.to_vec(), x.to_vec());
        up[c] += e;
        down[c] -= e;
        let (gu, gd) = (gradient(&j, &up), gradient(&j, &down));
        for r in 0..n {
            let fd = (gu[r] - gd[r]) / (2.0 * e);
            let want = dense[r * n + c];
            assert!(
                (fd - want).abs() <= 1e-5 * (1.0 + want.abs()),
                "H({r}, {c}) = {want}, central differences {fd}:\n{src}"
            );
        }
    }
    served(&j, &[arr(x)], n)
}

fn xs(n: usize) -> Vec<f64> {
    (0..n).map(|i| 0.35 * ((i * 7) % 5) as f64 - 0.45).collect()
}

const SERVED: [&str; 11] = [
    // One base, two blocks: a branch on the index picks the operation.
    "double s = 0.0;
     for (int i = 0; i + 2 < len(x); i++) {
         if (i < 3) { s += x[i] * x[i + 2]; } else { s += sin(x[i + 1]) * x[i]; }
     }
     return s;",
    // Nested loops, the base i * m + j running in order.
    "double s = 0.0;
     int m = 2;
     for (int i = 0; i < len(x) / m; i++) {
         for (int j = 0; j < m; j++) { double t = x[i * m + j]; s += t * t * t; }
     }
     return s;",
    // The base i / 2: each value twice.
    "double s = 0.0;
     for (int i = 0; i + 2 < 2 * len(x) - 2; i++) { s += x[i / 2] * exp(x[i / 2 + 1]); }
     return s;",
    // break: a prefix of the loop.
    "double s = 0.0;
     for (int i = 0; i + 1 < len(x); i++) {
         if (i == 3) { break; }
         s += cos(x[i] - x[i + 1]);
     }
     return s;",
    // return from inside the loop, with a product of its own.
    "double s = 0.0;
     for (int i = 0; i + 2 < len(x); i++) {
         if (i == 2) { return s + x[i] * x[i + 2]; }
         s += x[i + 1] * x[i + 1] * x[i];
     }
     return s;",
    // The carried sum through abs, a quotient by a constant and min.
    "double s = 0.0;
     for (int i = 0; i + 1 < len(x); i++) {
         s = abs(s) / 2.0 + x[i] * x[i + 1];
         s = min(s, 1.0 - x[i] * x[i]);
     }
     return s;",
    // Two-operand built-ins at three offsets.
    "double s = 0.0;
     for (int i = 0; i + 2 < len(x); i++) {
         s += atan2(x[i], 2.0 + x[i + 2]) + hypot(x[i + 1], x[i]) + pow(1.5 + x[i + 2], x[i]);
     }
     return s;",
    // Constant indices in a block of their own, then a loop.
    "double s = exp(x[0] - x[1]) * x[2];
     for (int i = 1; i < len(x); i++) { s += x[i - 1] / (3.0 + x[i]); }
     return s;",
    // Two loops of one shape, the second from 2.
    "double s = 0.0;
     for (int i = 0; i + 1 < len(x); i++) { s += x[i] * x[i + 1]; }
     for (int i = 2; i + 1 < len(x); i++) { s += x[i] * x[i + 1] * x[i - 2]; }
     return s;",
    // A carried value scaled by an index-dependent constant.
    "double s = 0.0;
     for (int i = 0; i < len(x); i++) { s = s * (1.0 + 0.1 * i) + tanh(x[i]); }
     return s;",
    // The base from i with a negative offset, loops one after another.
    "double s = 0.0;
     for (int i = 2; i < len(x); i++) { s += x[i - 2] * x[i - 1] - x[i]; }
     return s;",
];

#[test]
fn band_shapes_serve_and_are_right() {
    for (k, body) in SERVED.iter().enumerate() {
        for n in [3, 4, 8] {
            assert!(
                review(body, &xs(n)),
                "shape {k} at n = {n} fell back:\n{body}"
            );
        }
    }
}

const FALLBACK: [&str; 11] = [
    // A carried product through a choice.
    "double s = 1.0;
     for (int i = 0; i < len(x); i++) { s = (i % 2 == 0) ? s * x[i] : s + x[i]; }
     return s;",
    // Quotients with the carried value.
    "double s = 1.0;
     for (int i = 0; i < len(x); i++) { s = s / (2.0 + x[i]) + x[i] / (3.0 + s); }
     return s;",
    // pow of the carried value.
    "double s = 0.5;
     for (int i = 0; i < len(x); i++) { s = pow(s, 2.0) * 0.5 + x[i]; }
     return s;",
    // A choice of two loads in a product.
    "double s = 0.0;
     for (int i = 0; i + 1 < len(x); i++) { double t = i < 2 ? x[i] : x[i + 1]; s += t * t; }
     return s;",
    // fmod, floor to an index, no_diff.
    "double s = 0.0;
     for (int i = 0; i + 1 < len(x); i++) { s += fmod(x[i] * x[i + 1], 0.7); }
     return s;",
    "double s = 0.0;
     for (int i = 0; i + 1 < len(x); i++) {
         int k = int(floor(abs(x[i]) * 2.0)) % len(x);
         s += x[k] * x[i + 1];
     }
     return s;",
    "double s = 0.0;
     for (int i = 0; i + 1 < len(x); i++) { s += no_diff(x[i]) * x[i] * x[i + 1]; }
     return s;",
    // A recursive call.
    "return rec(x, len(x) - 1) + x[0] * x[1];",
    // A decreasing loop.
    "double s = 0.0;
     for (int i = len(x) - 2; i >= 0; i--) { s += x[i] * x[i + 1]; }
     return s;",
    // continue: a gap in the bases.
    "double s = 0.0;
     for (int i = 0; i + 1 < len(x); i++) {
         if (i == 1) { continue; }
         s += x[i] * x[i + 1];
     }
     return s;",
    // The base i % 3: out of order once it wraps.
    "double s = 0.0;
     for (int i = 0; i < len(x); i++) { s += x[i % 3] * x[i % 3 + 1]; }
     return s;",
];

#[test]
fn shapes_out_of_the_band_fall_back_and_are_right() {
    for (k, body) in FALLBACK.iter().enumerate() {
        assert!(!review(body, &xs(6)), "shape {k} served:\n{body}");
    }
}

#[test]
fn loops_run_once_or_never_serve() {
    // A decreasing loop run once, a loop run never (only constant
    // indices interact).
    let once = "double s = 0.0;
        for (int i = len(x) - 2; i >= 0; i--) { s += x[i] * x[i + 1]; }
        return s;";
    assert!(review(once, &xs(2)));
    let never = "double s = x[0] * x[1];
        for (int i = 2; i < len(x); i++) { s += x[i] * x[i - 1]; }
        return s;";
    assert!(review(never, &xs(2)));
}

#[test]
fn the_dual_array_after_a_const_one() {
    // Columns are `x`'s, the second parameter; `c` is read at the same
    // base.
    let src = "[hessian(H, Const, Dual)]\n[hessian(S, Const, Dual, sparse)]\n\
        double f(double[] c, double[] x) {
            double s = 0.0;
            for (int i = 0; i + 1 < len(x); i++) { s += c[i] * x[i] * sin(x[i + 1]) + c[i + 1] * x[i]; }
            return s;
        }";
    let j = jit(src);
    for n in [2, 5] {
        let args = [arr(&vec![1.5; n]), arr(&xs(n))];
        let p = check(&j, "f", &args, n);
        assert!(served(&j, &args, n));
        // x[i] sin(x[i + 1]): row r > 0 holds r - 1 and r, row 0 nothing.
        let want: Vec<Vec<i64>> = (0..n as i64)
            .map(|r| if r == 0 { vec![] } else { vec![r - 1, r] })
            .collect();
        assert_eq!(p, want);
    }
}
