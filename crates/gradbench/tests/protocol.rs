//! The GradBench tool on recorded protocol sessions: each eval's primal
//! and gradient against values computed here independently (closed forms
//! and central differences of a direct implementation), and GradBench's
//! rules for timings, unknown modules and functions.

use serde_json::{json, Value as Json};
use std::io::Write;
use std::process::{Command, Stdio};

/// Runs the tool on `messages`; its responses, one per message.
fn session(messages: &[Json]) -> Vec<Json> {
    let mut child = Command::new(env!("CARGO_BIN_EXE_adc-gradbench"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("start the tool");
    let mut stdin = child.stdin.take().expect("piped stdin");
    for m in messages {
        writeln!(stdin, "{m}").expect("write a message");
    }
    drop(stdin);
    let out = child.wait_with_output().expect("tool output");
    assert!(out.status.success());
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).expect("one JSON response per line"))
        .collect()
}

fn eval(module: &str, function: &str, input: Json) -> Json {
    let msgs = [
        json!({"id": 0, "kind": "start", "eval": module}),
        json!({"id": 1, "kind": "define", "module": module}),
        json!({"id": 2, "kind": "evaluate", "module": module, "function": function, "input": input}),
    ];
    let r = session(&msgs);
    assert_eq!(r.len(), 3, "{r:?}");
    assert_eq!(r[1]["success"], true, "{}", r[1]);
    assert_eq!(r[2]["id"], 2);
    assert_eq!(r[2]["success"], true, "{}", r[2]);
    r[2]["output"].clone()
}

fn vec_of(j: &Json) -> Vec<f64> {
    j.as_array()
        .expect("an array output")
        .iter()
        .map(|v| v.as_f64().expect("numbers"))
        .collect()
}

fn close(got: f64, want: f64, tol: f64) {
    assert!(
        (got - want).abs() <= tol * want.abs().max(1.0),
        "got {got}, want {want}"
    );
}

#[test]
fn lse_primal_and_gradient() {
    let x = [0.3, -1.2, 2.5, 0.0, 1.7];
    let m = 2.5f64;
    let s: f64 = x.iter().map(|v| (v - m).exp()).sum();
    close(
        eval("lse", "primal", json!({"x": x})).as_f64().unwrap(),
        m + s.ln(),
        1e-14,
    );
    let g = vec_of(&eval("lse", "gradient", json!({"x": x})));
    for (gi, xi) in g.iter().zip(x) {
        close(*gi, (xi - m).exp() / s, 1e-14);
    }
}

fn llsq(x: &[f64], n: usize) -> f64 {
    let mut y = 0.0;
    for i in 0..n {
        let t = -1.0 + i as f64 * 2.0 / (n as f64 - 1.0);
        let mut r = if t > 0.0 {
            1.0
        } else if t < 0.0 {
            -1.0
        } else {
            0.0
        };
        for (j, xj) in x.iter().enumerate() {
            r -= xj * t.powi(j as i32);
        }
        y += r * r;
    }
    0.5 * y
}

#[test]
fn llsq_primal_and_gradient() {
    let x = [0.5, -0.25, 1.0, 0.125];
    let n = 11;
    let y = eval("llsq", "primal", json!({"x": x, "n": n}))
        .as_f64()
        .unwrap();
    close(y, llsq(&x, n), 1e-13);
    let g = vec_of(&eval("llsq", "gradient", json!({"x": x, "n": n})));
    for j in 0..x.len() {
        let h = 1e-6;
        let (mut xp, mut xm) = (x, x);
        xp[j] += h;
        xm[j] -= h;
        close(g[j], (llsq(&xp, n) - llsq(&xm, n)) / (2.0 * h), 1e-7);
    }
}

#[test]
fn det_primal_and_gradient() {
    // The gradient of det(A) is the matrix of cofactors.
    let a = [2.0, -1.0, 0.5, 1.0, 3.0, -2.0, 0.0, 4.0, 1.5];
    let det = |m: &[f64]| {
        m[0] * (m[4] * m[8] - m[5] * m[7]) - m[1] * (m[3] * m[8] - m[5] * m[6])
            + m[2] * (m[3] * m[7] - m[4] * m[6])
    };
    close(
        eval("det", "primal", json!({"A": a, "ell": 3}))
            .as_f64()
            .unwrap(),
        det(&a),
        1e-14,
    );
    let g = vec_of(&eval("det", "gradient", json!({"A": a, "ell": 3})));
    let (r, c) = (|k: usize| k / 3, |k: usize| k % 3);
    for k in 0..9 {
        let minor: Vec<f64> = (0..9)
            .filter(|&q| r(q) != r(k) && c(q) != c(k))
            .map(|q| a[q])
            .collect();
        let sign = if (r(k) + c(k)) % 2 == 0 { 1.0 } else { -1.0 };
        close(
            g[k],
            sign * (minor[0] * minor[3] - minor[1] * minor[2]),
            1e-14,
        );
    }
}

/// One `evaluate` timing per run, at least `min_runs` of them; unknown
/// modules and functions are failures with a message, not crashes.
#[test]
fn timings_and_failures_follow_the_protocol() {
    let r = session(&[
        json!({"id": 0, "kind": "start"}),
        json!({"id": 1, "kind": "define", "module": "lse"}),
        json!({"id": 2, "kind": "evaluate", "module": "lse", "function": "primal",
               "input": {"x": [1.0, 2.0], "min_runs": 4, "min_seconds": 0}}),
        json!({"id": 3, "kind": "evaluate", "module": "lse", "function": "hessian",
               "input": {"x": [1.0]}}),
        json!({"id": 4, "kind": "define", "module": "no-such-eval"}),
        json!({"id": 5, "kind": "analysis", "of": 2, "valid": true}),
    ]);
    assert_eq!(r[0]["tool"], "adc");
    let timings = r[2]["timings"].as_array().expect("timings");
    assert!(timings.len() >= 4);
    assert!(timings
        .iter()
        .all(|t| t["name"] == "evaluate" && t["nanoseconds"].is_u64()));
    assert_eq!(
        (r[3]["success"].clone(), r[3]["error"].is_string()),
        (json!(false), true)
    );
    assert_eq!(r[4]["success"], false);
    assert_eq!(r[5]["id"], 5);
}
