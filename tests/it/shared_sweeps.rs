//! The rows of a Jacobian block computed as GradBench's per-row tools do
//! (plain ba's `ba_jacobian`): a loop of two trips seeding one output each and
//! calling one tape-free reverse derivative with the same primal arguments.
//! `unroll-region`, `inline-untaped`, `cse` and `diamond-cse` make the two
//! calls share one primal sweep (one `sin` left); the rows must equal the
//! forward-mode tangents at points taking each arm of the branch, in a loop
//! over points whose views change from one iteration to the next.

use crate::support::{self, arr};

const PROGRAM: &str = "
[autodiff_reverse(f_b, Duplicated, Duplicated, Duplicated)]
[autodiff_forward(f_t, Dual, Dual, Dual)]
static void f(double[] p, double[] q, out double[] e) {
    double s = p[0] * p[0] + p[1] * p[1];
    double a[2];
    if (s != 0.0) {
        double t = sqrt(s);
        a[0] = sin(t) * q[0];
        a[1] = cos(t) / t * q[1];
    } else {
        a[0] = q[0] - p[1];
        a[1] = p[0] * q[1];
    }
    e[0] = a[0] * p[1] + q[1];
    e[1] = a[1] * a[0] + p[0] * q[0];
}

// J[8 i + 4 r + k]: row r, column k (p then q) of point i.
void rows(double[] P, double[] Q, out double[] J) {
    double dp[2]; double dq[2]; double e[2]; double de[2];
    for (int i = 0; i < len(P) / 2; i++) {
        for (int r = 0; r < 2; r++) {
            dp[0] = 0.0; dp[1] = 0.0; dq[0] = 0.0; dq[1] = 0.0;
            de[0] = r == 0 ? 1.0 : 0.0;
            de[1] = r == 1 ? 1.0 : 0.0;
            f_b(P[2 * i..2 * i + 2], dp, Q[2 * i..2 * i + 2], dq, e, de);
            J[8 * i + 4 * r + 0] = dp[0]; J[8 * i + 4 * r + 1] = dp[1];
            J[8 * i + 4 * r + 2] = dq[0]; J[8 * i + 4 * r + 3] = dq[1];
        }
    }
}

void columns(double[] P, double[] Q, out double[] J) {
    double dp[2]; double dq[2]; double e[2]; double de[2];
    for (int i = 0; i < len(P) / 2; i++) {
        for (int k = 0; k < 4; k++) {
            dp[0] = k == 0 ? 1.0 : 0.0; dp[1] = k == 1 ? 1.0 : 0.0;
            dq[0] = k == 2 ? 1.0 : 0.0; dq[1] = k == 3 ? 1.0 : 0.0;
            f_t(P[2 * i..2 * i + 2], dp, Q[2 * i..2 * i + 2], dq, e, de);
            J[8 * i + k] = de[0]; J[8 * i + 4 + k] = de[1];
        }
    }
}
";

#[test]
fn rows_sharing_a_primal_sweep_give_the_forward_mode_jacobian() {
    let j = support::jit(PROGRAM);
    // Points 1 and 3 take the `else` arm (s == 0).
    let p = [0.3, -1.2, 0.0, 0.0, 2.1, 0.4, 0.0, 0.0, -0.7, -0.5];
    let q = [1.5, 0.2, -0.4, 0.9, 0.6, -1.3, 2.2, 0.1, 0.8, 0.35];
    let mut got = Vec::new();
    for f in ["rows", "columns"] {
        let mut args = [arr(&p), arr(&q), arr(&[0.0; 40])];
        j.call(f, &mut args).unwrap_or_else(|e| panic!("{f}: {e}"));
        got.push(support::arg_floats(&args[2]));
    }
    for (k, (r, c)) in got[0].iter().zip(&got[1]).enumerate() {
        support::assert_close(*r, *c, 1e-12, &format!("J[{k}]"));
    }
}

/// The passes apply: the rows' loop computes `sin` once per point.
#[test]
fn the_two_rows_share_one_primal_sweep() {
    let mut m = adc::driver::frontend("rows.ad", PROGRAM, &adc::CompileOptions::default())
        .unwrap_or_else(|f| panic!("{f}"));
    adc::driver::run_stages(&mut m, adc::Stage::Final).expect("stages run");
    let text = m.to_string();
    let body = &text[text.find("func @rows(").expect("rows")..];
    let body = &body[..body.find("\n}").expect("its end")];
    assert!(!body.contains("call"), "{body}");
    assert_eq!(body.matches("math sin").count(), 1, "{body}");
}
