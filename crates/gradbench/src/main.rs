//! `adc-gradbench`: a GradBench tool for adc. It speaks GradBench's
//! protocol on standard input and output (one JSON message per line):
//! `start`, `define` (compiles `gradbench/evals/MODULE.ad` with the JIT),
//! `evaluate` (runs the module's function on the input at least
//! `min_runs` times and for at least `min_seconds`, reporting one
//! `evaluate` timing per run). With `--plain` it is the tool `adc-plain`:
//! the plain ports of `gradbench/evals/plain/MODULE.ad` instead. See
//! docs/performance.md, "GradBench evals against `manual`".

mod evals;
mod ht;

use adc::JitModule;
use serde_json::{json, Value as Json};
use std::collections::BTreeMap;
use std::io::{BufRead, Write};
use std::time::Instant;

fn main() {
    let plain = std::env::args().skip(1).any(|a| a == "--plain");
    let stdin = std::io::stdin();
    let mut stdout = std::io::stdout().lock();
    let mut modules: BTreeMap<String, JitModule> = BTreeMap::new();
    for line in stdin.lock().lines() {
        let Ok(line) = line else { break };
        if line.trim().is_empty() {
            continue;
        }
        let reply = match serde_json::from_str::<Json>(&line) {
            Ok(msg) => respond(&msg, &mut modules, plain),
            Err(e) => json!({"id": null, "error": format!("not JSON: {e}")}),
        };
        // A closed pipe ends the session; nothing else can be done then.
        if writeln!(stdout, "{reply}")
            .and_then(|_| stdout.flush())
            .is_err()
        {
            break;
        }
    }
}

/// The response to one message; `plain`: the tool `adc-plain`.
pub fn respond(msg: &Json, modules: &mut BTreeMap<String, JitModule>, plain: bool) -> Json {
    let id = msg["id"].clone();
    let tool = if plain { "adc-plain" } else { "adc" };
    match msg["kind"].as_str() {
        Some("start") => json!({"id": id, "tool": tool}),
        Some("define") => {
            let module = msg["module"].as_str().unwrap_or("");
            let Some(src) = evals::source(module, plain) else {
                return json!({"id": id, "success": false,
                    "error": format!("{tool} does not implement `{module}`")});
            };
            let start = Instant::now();
            match adc::compile_jit(
                &format!("{module}.ad"),
                src,
                &adc::CompileOptions::default(),
            ) {
                Ok(jit) => {
                    let ns = start.elapsed().as_nanos() as u64;
                    modules.insert(module.to_string(), jit);
                    json!({"id": id, "success": true,
                        "timings": [{"name": "compile", "nanoseconds": ns}]})
                }
                Err(f) => json!({"id": id, "success": false, "error": f.to_string()}),
            }
        }
        Some("evaluate") => match evaluate(msg, modules) {
            Ok((output, timings)) => json!({"id": id, "success": true,
                "output": output, "timings": timings}),
            Err(e) => json!({"id": id, "success": false, "error": e}),
        },
        // `analysis` and anything newer need no answer but an empty one.
        _ => json!({"id": id}),
    }
}

fn evaluate(msg: &Json, modules: &BTreeMap<String, JitModule>) -> Result<(Json, Json), String> {
    let module = msg["module"].as_str().unwrap_or("");
    let function = msg["function"].as_str().unwrap_or("");
    let jit = modules
        .get(module)
        .ok_or(format!("module `{module}` is not defined"))?;
    let input = &msg["input"];
    let min_runs = input["min_runs"].as_u64().unwrap_or(1).max(1);
    let min_seconds = input["min_seconds"].as_f64().unwrap_or(0.0);
    let call = evals::call(module, function, input)?;
    let mut timings = Vec::new();
    let mut total = 0.0;
    let mut runs = 0;
    loop {
        // A fresh copy each run: shadows accumulate into their arguments.
        let mut args = call.args.clone();
        let start = Instant::now();
        let results = jit
            .call(call.function, &mut args)
            .map_err(|e| e.to_string())?;
        let elapsed = start.elapsed();
        timings.push(json!({"name": "evaluate", "nanoseconds": elapsed.as_nanos() as u64}));
        total += elapsed.as_secs_f64();
        runs += 1;
        if runs >= min_runs && total >= min_seconds {
            let output = (call.output)(&results, &args)?;
            return Ok((output, Json::Array(timings)));
        }
    }
}
