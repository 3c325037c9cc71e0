//! Loops over the rows of a Jacobian block that call one tape-free reverse
//! derivative per row, and branches on a condition already branched on:
//! the shapes where the copies of one primal computation may be merged
//! (a loop of two constant trips copied, the derivative inlined, its loads
//! of read-only arrays and its diamonds merged with the first copy's). Each
//! against values derived by hand: an input written between the rows
//! (nothing to share), counters that step down, by 2, test with `!=` and
//! `<=`, a third trip, one trip; checks only the second copy makes.

use crate::support::{arr, assert_close, jit};
use adc::{ArgValue, Constant};

const ROWS: &str = "
[autodiff_reverse(f_b, Duplicated, Const, Duplicated)]
static void f(double[] p, int k, out double[] e) {
    double s = p[0] * p[1];
    if (s > 0.0) {
        e[0] = sin(s) * p[k];
        e[1] = s / p[1];
    } else {
        e[0] = s * s;
        e[1] = cos(p[0]);
    }
}
";

/// The body of a row loop: row `R` of `f` at `P` with index `K`, added to `J`.
fn row(r: &str, k: &str) -> String {
    format!(
        "{{ double dp[2]; double e[2]; double de[2]; dp[0] = 0.0; dp[1] = 0.0; \
         de[0] = ({r}) == 0 ? 1.0 : 0.0; de[1] = ({r}) == 1 ? 1.0 : 0.0; \
         f_b(P, dp, {k}, e, de); J[2 * ({r})] += dp[0]; J[2 * ({r}) + 1] += dp[1]; }}"
    )
}

/// Row 0 (`e[0]`'s gradient) and row 1 (`e[1]`'s) of `f` at `p`, `k`.
fn rows_by_hand(p: [f64; 2], k: usize) -> [[f64; 2]; 2] {
    let s = p[0] * p[1];
    if s > 0.0 {
        let (c, n) = (s.cos(), s.sin());
        [
            [
                c * p[1] * p[k] + if k == 0 { n } else { 0.0 },
                c * p[0] * p[k] + if k == 1 { n } else { 0.0 },
            ],
            [1.0, 0.0],
        ]
    } else {
        [[2.0 * s * p[1], 2.0 * s * p[0]], [-p[0].sin(), 0.0]]
    }
}

#[test]
fn row_loops_of_every_counted_shape_give_the_rows_by_hand() {
    // (name, loop, rows added: (row, offset of k) per trip)
    let shapes: [(&str, String, &[(usize, usize)]); 7] = [
        (
            "down",
            format!("for (int r = 1; r >= 0; r--) {}", row("r", "k")),
            &[(1, 0), (0, 0)],
        ),
        (
            "step2",
            format!("for (int r = 0; r < 3; r += 2) {}", row("r / 2", "k")),
            &[(0, 0), (1, 0)],
        ),
        (
            "ne",
            format!("for (int r = 0; r != 2; r++) {}", row("r", "k")),
            &[(0, 0), (1, 0)],
        ),
        (
            "le",
            format!(
                "for (int r = -1; r <= 0; r++) {}",
                row("r + 1", "k + r + 1")
            ),
            &[(0, 0), (1, 1)],
        ),
        (
            "three",
            format!("for (int r = 0; r < 3; r++) {}", row("r % 2", "k")),
            &[(0, 0), (1, 0), (0, 0)],
        ),
        (
            "once",
            format!("for (int r = 5; r < 6; r++) {}", row("1", "k")),
            &[(1, 0)],
        ),
        (
            "straight",
            format!("{} {}", row("0", "k"), row("1", "k")),
            &[(0, 0), (1, 0)],
        ),
    ];
    let mut src = ROWS.to_string();
    for (name, body, _) in &shapes {
        src += &format!("void {name}(double[] P, int k, inout double[] J) {{ {body} }}\n");
    }
    let j = jit(&src);
    for (p, k) in [
        ([0.6, 0.7], 0),
        ([0.6, 0.7], 1),
        ([0.6, -0.7], 0),
        ([0.6, -0.7], 1),
        ([0.6, -0.7], 2),
    ] {
        for (name, _, trips) in &shapes {
            let mut args = [
                arr(&p),
                ArgValue::Scalar(Constant::I64(k as i64)),
                arr(&[0.0; 4]),
            ];
            let got = j.call(name, &mut args);
            // s > 0 reads p[k] (the second trip of `le` p[k + 1]): out of
            // bounds past 1, as in the program run without sharing.
            let reads = |off: usize| p[0] * p[1] > 0.0 && k + off > 1;
            if trips.iter().any(|&(_, off)| reads(off)) {
                let err = got.expect_err(&format!("{name} at {p:?}, {k}: out of bounds"));
                assert!(
                    err.to_string().contains("index out of bounds"),
                    "{name}: {err}"
                );
                continue;
            }
            got.unwrap_or_else(|e| panic!("{name} at {p:?}, {k}: {e}"));
            let mut want = [0.0; 4];
            for &(r, off) in trips.iter() {
                let g = rows_by_hand(p, k + off)[r];
                want[2 * r] += g[0];
                want[2 * r + 1] += g[1];
            }
            let got = crate::support::arg_floats(&args[2]);
            for c in 0..4 {
                assert_close(
                    got[c],
                    want[c],
                    1e-12,
                    &format!("{name} at {p:?}, k = {k}: J[{c}]"),
                );
            }
        }
    }
}

#[test]
fn an_input_written_between_the_rows_is_read_again() {
    // P is written after each row: the second row's primal sweep runs at
    // (2 P[0], P[1]) and takes the other arm, nothing of the first's holds.
    let src = "
[autodiff_reverse(f_b, Duplicated, Duplicated, Duplicated)]
static void f(double[] p, double[] q, out double[] e) {
    double s = p[0] * p[0] + p[1] * p[1];
    if (s > 1.0) {
        e[0] = sin(s) * q[0];
        e[1] = cos(s) / s * q[1];
    } else {
        e[0] = q[0] - p[1];
        e[1] = p[0] * q[1];
    }
}
void rows(inout double[] P, double[] Q, out double[] J) {
    double dp[2]; double dq[2]; double e[2]; double de[2];
    for (int r = 0; r < 2; r++) {
        dp[0] = 0.0; dp[1] = 0.0; dq[0] = 0.0; dq[1] = 0.0;
        de[0] = r == 0 ? 1.0 : 0.0;
        de[1] = r == 1 ? 1.0 : 0.0;
        f_b(P[0..2], dp, Q[0..2], dq, e, de);
        J[4 * r + 0] = dp[0]; J[4 * r + 1] = dp[1];
        J[4 * r + 2] = dq[0]; J[4 * r + 3] = dq[1];
        P[0] = P[0] * 2.0;
    }
}";
    let j = jit(src);
    let (p, q) = ([0.6, 0.7], [1.5, 0.2]);
    let mut args = [arr(&p), arr(&q), arr(&[0.0; 8])];
    j.call("rows", &mut args)
        .unwrap_or_else(|e| panic!("rows: {e}"));
    let got = crate::support::arg_floats(&args[2]);
    // Row 0 at s = 0.85: e[0] = q0 - p1.
    let mut want = vec![0.0, -1.0, 1.0, 0.0];
    // Row 1 at p = (1.2, 0.7), s = 1.93: e[1] = cos(s) / s * q1.
    let (p0, p1) = (2.0 * p[0], p[1]);
    let s: f64 = p0 * p0 + p1 * p1;
    let gs = (-s.sin() * s - s.cos()) / (s * s);
    want.extend([q[1] * gs * 2.0 * p0, q[1] * gs * 2.0 * p1, 0.0, s.cos() / s]);
    for c in 0..8 {
        assert_close(got[c], want[c], 1e-12, &format!("J[{c}]"));
    }
    assert_eq!(crate::support::arg_floats(&args[0]), vec![2.4, 0.7]);
}

#[test]
fn a_check_only_the_second_branch_makes_still_runs() {
    // Two branches on one condition whose arms pass the join the same
    // values: `g`'s second then-arm reads `x[k + 1]` for the value, `h`'s
    // and `h2`'s only for the check (a load whose value is unused), in the
    // then-arm or the else-arm. Merged with the first branch, that check
    // would be lost: out of bounds must still stop the program.
    let src = "
double g(double[] x, int k) {
    bool c = x[0] > 0.0;
    double a;
    if (c) { a = sin(x[1]) * x[k]; } else { a = cos(x[1]); }
    double b;
    if (c) { b = sin(x[1]) * x[k + 1]; } else { b = cos(x[1]); }
    return a * b + a;
}
double h(double[] x, int k) {
    bool c = x[0] > 0.0;
    double a;
    if (c) { a = sin(x[1]) * x[k]; } else { a = cos(x[1]); }
    double b;
    if (c) { double t = x[k + 1]; b = sin(x[1]) * x[k]; } else { b = cos(x[1]); }
    return a * b + a;
}
double h2(double[] x, int k) {
    bool c = x[0] > 0.0;
    double a;
    if (c) { a = sin(x[1]) * x[k]; } else { a = cos(x[1]); }
    double b;
    if (c) { b = sin(x[1]) * x[k]; } else { double t = x[k + 1]; b = cos(x[1]); }
    return a * b + a;
}";
    let j = jit(src);
    let call = |f: &str, x0: f64, k: i64| {
        let mut args = [
            arr(&[x0, 0.5, 2.0, 3.0]),
            ArgValue::Scalar(Constant::I64(k)),
        ];
        j.call(f, &mut args).map(|r| crate::support::number(&r[0]))
    };
    let oob = |r: Result<f64, adc::CallError>| {
        r.is_err_and(|e| e.to_string().contains("index out of bounds"))
    };
    assert!(oob(call("g", 1.0, 3)), "g: x[4]");
    assert!(oob(call("h", 1.0, 3)), "h: x[4]");
    assert!(oob(call("h2", -1.0, 3)), "h2: x[4]");
    let (sn, cs) = (0.5f64.sin(), 0.5f64.cos());
    assert_close(
        call("g", 1.0, 2).unwrap(),
        sn * 2.0 * sn * 3.0 + sn * 2.0,
        1e-14,
        "g",
    );
    assert_close(call("g", -1.0, 3).unwrap(), cs * cs + cs, 1e-14, "g, else");
    assert_close(call("h", -1.0, 3).unwrap(), cs * cs + cs, 1e-14, "h, else");
    assert_close(
        call("h2", 1.0, 3).unwrap(),
        (sn * 3.0) * (sn * 3.0) + sn * 3.0,
        1e-14,
        "h2, then",
    );
}
