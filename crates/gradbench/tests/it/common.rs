//! What the GradBench tool's tests share: running the tool on a recorded
//! protocol session, and comparing numbers.

use serde_json::{json, Value as Json};
use std::io::Write;
use std::process::{Command, Stdio};

/// Runs the tool on `messages`; its responses, one per message.
pub fn session(messages: &[Json]) -> Vec<Json> {
    session_with(&[], messages)
}

/// Runs the tool with `args` (`--plain`: the plain ports) on `messages`.
pub fn session_with(args: &[&str], messages: &[Json]) -> Vec<Json> {
    let mut child = Command::new(env!("CARGO_BIN_EXE_adc-gradbench"))
        .args(args)
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

/// The output of `function` of `module` on `input` (the tuned port). Where
/// a plain port exists (`--plain`), its output must equal the tuned one's
/// to 1e-9 relative, so every test of an eval checks its plain port too.
pub fn eval(module: &str, function: &str, input: Json) -> Json {
    let tuned = eval_with(&[], module, function, input.clone());
    if !matches!(module, "saddle" | "particle") {
        let plain = eval_with(&["--plain"], module, function, input);
        same_numbers(
            &plain,
            &tuned,
            &format!("{module} {function}: plain vs tuned"),
        );
    }
    tuned
}

/// The output of the tuned port alone (inputs GradBench's C++, and so the
/// plain port, cannot take).
pub fn eval_tuned(module: &str, function: &str, input: Json) -> Json {
    eval_with(&[], module, function, input)
}

fn eval_with(args: &[&str], module: &str, function: &str, input: Json) -> Json {
    let msgs = [
        json!({"id": 0, "kind": "start", "eval": module}),
        json!({"id": 1, "kind": "define", "module": module}),
        json!({"id": 2, "kind": "evaluate", "module": module, "function": function, "input": input}),
    ];
    let r = session_with(args, &msgs);
    assert_eq!(r.len(), 3, "{r:?}");
    assert_eq!(r[1]["success"], true, "{args:?} {}", r[1]);
    assert_eq!(r[2]["id"], 2);
    assert_eq!(r[2]["success"], true, "{args:?} {}", r[2]);
    r[2]["output"].clone()
}

/// `a` and `b` have the same shape and their numbers agree to 1e-9
/// relative (1e-13 absolute near zero).
fn same_numbers(a: &Json, b: &Json, what: &str) {
    match (a, b) {
        (Json::Array(x), Json::Array(y)) => {
            assert_eq!(x.len(), y.len(), "{what}: lengths");
            for (u, v) in x.iter().zip(y) {
                same_numbers(u, v, what);
            }
        }
        (Json::Object(x), Json::Object(y)) => {
            assert_eq!(x.len(), y.len(), "{what}: fields");
            for (k, u) in x {
                same_numbers(u, &y[k], &format!("{what}.{k}"));
            }
        }
        _ => match (a.as_f64(), b.as_f64()) {
            (Some(u), Some(v)) => assert!(
                (u - v).abs() <= 1e-9 * u.abs().max(v.abs()) || (u - v).abs() <= 1e-13,
                "{what}: {u} vs {v}"
            ),
            _ => assert_eq!(a, b, "{what}"),
        },
    }
}

pub fn vec_of(j: &Json) -> Vec<f64> {
    j.as_array()
        .expect("an array output")
        .iter()
        .map(|v| v.as_f64().expect("numbers"))
        .collect()
}

pub fn close(got: f64, want: f64, tol: f64) {
    assert!(
        (got - want).abs() <= tol * want.abs().max(1.0),
        "got {got}, want {want}"
    );
}
