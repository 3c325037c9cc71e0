//! What the GradBench tool's tests share: running the tool on a recorded
//! protocol session, and comparing numbers.

use serde_json::{json, Value as Json};
use std::io::Write;
use std::process::{Command, Stdio};

/// Runs the tool on `messages`; its responses, one per message.
pub fn session(messages: &[Json]) -> Vec<Json> {
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

pub fn eval(module: &str, function: &str, input: Json) -> Json {
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
