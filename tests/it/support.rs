//! Helpers shared by the integration tests.

use std::path::{Path, PathBuf};

pub fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Insta settings that keep snapshots in `dir` (relative to the workspace
/// root, beside what they snapshot), each file named by its assertion's
/// name alone. Bind them around the assertions:
/// `let _in = support::snapshots_in("examples/snapshots").bind_to_scope();`.
pub fn snapshots_in(dir: &str) -> insta::Settings {
    let mut settings = insta::Settings::clone_current();
    settings.set_snapshot_path(root().join(dir));
    settings.set_prepend_module_to_snapshot(false);
    settings
}

pub fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()))
}

/// Files in `dir` (relative to the workspace root) with extension `ext`, sorted.
pub fn files(dir: &str, ext: &str) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = std::fs::read_dir(root().join(dir))
        .unwrap_or_else(|e| panic!("cannot list {dir}: {e}"))
        .map(|e| e.expect("directory entry").path())
        .filter(|p| p.extension().and_then(|e| e.to_str()) == Some(ext))
        .collect();
    out.sort();
    out
}

pub fn name(path: &Path) -> String {
    path.file_name()
        .and_then(|n| n.to_str())
        .expect("utf-8 file name")
        .to_string()
}

/// Asserts `print(parse(text)) == text` for an IR dump.
pub fn assert_round_trips(text: &str) {
    let parsed = adc_ir::parse_module(text)
        .unwrap_or_else(|e| panic!("IR dump does not parse: {e}\n{text}"));
    assert_eq!(parsed.to_string(), text, "IR dump does not round-trip");
}

/// A constant as a double (a bool as 0 or 1), as the interpreter
/// oracles compare results.
pub fn number(c: &adc::Constant) -> f64 {
    match c {
        adc::Constant::F64(v) => *v,
        adc::Constant::F32(v) => *v as f64,
        adc::Constant::I64(v) => *v as f64,
        adc::Constant::Bool(b) => *b as i64 as f64,
    }
}

/// The doubles of a call's results; anything else is a test failure.
pub fn f64s(cs: &[adc::Constant]) -> Vec<f64> {
    cs.iter()
        .map(|c| match c {
            adc::Constant::F64(v) => *v,
            other => panic!("not a double: {other:?}"),
        })
        .collect()
}

pub fn assert_close(got: f64, want: f64, rel: f64, what: &str) {
    let scale = want.abs().max(1.0);
    assert!(
        (got - want).abs() <= rel * scale,
        "{what}: got {got:?}, want {want:?}"
    );
}

/// Compiles `source` and calls its reverse derivative `df` on `args`: the
/// float results, then the shadow at `args[shadow]` after the call.
pub fn gradient_with_shadow(source: &str, args: &mut [adc::ArgValue], shadow: usize) -> Vec<f64> {
    use adc::{ArgValue, ArrayValue, Constant};
    // Callers check one source at several sizes: compiled once.
    let j = jit_once(source);
    let out = j
        .call("df", args)
        .unwrap_or_else(|e| panic!("{e}\n{source}"));
    let mut g: Vec<f64> = out
        .iter()
        .map(|c| match c {
            Constant::F64(v) => *v,
            other => panic!("not a double: {other:?}"),
        })
        .collect();
    let ArgValue::Array(ArrayValue::F64(d)) = &args[shadow] else {
        panic!("argument {shadow} is not a double array")
    };
    g.extend(d);
    g
}

/// A module JIT-compiled from `source` (a panic with the diagnostics when
/// it does not compile).
pub fn jit(source: &str) -> adc::JitModule {
    adc::compile_jit("test.ad", source, &adc::CompileOptions::default())
        .unwrap_or_else(|f| panic!("does not compile:\n{f}"))
}

/// `jit(source)`, compiled once per test thread: tests that check one
/// source at several sizes share its module (a second-order module takes
/// seconds to compile in a debug build).
pub fn jit_once(source: &str) -> std::rc::Rc<adc::JitModule> {
    use std::cell::RefCell;
    use std::collections::HashMap;
    use std::rc::Rc;
    thread_local! {
        static COMPILED: RefCell<HashMap<String, Rc<adc::JitModule>>> = RefCell::new(HashMap::new());
    }
    COMPILED.with(|c| {
        Rc::clone(
            c.borrow_mut()
                .entry(source.to_string())
                .or_insert_with(|| Rc::new(jit(source))),
        )
    })
}

/// A `double` argument.
pub fn d(x: f64) -> adc::ArgValue {
    adc::ArgValue::Scalar(adc::Constant::F64(x))
}

/// A `double[]` argument.
pub fn arr(xs: &[f64]) -> adc::ArgValue {
    adc::ArgValue::Array(adc::ArrayValue::F64(xs.to_vec()))
}

/// The doubles an argument holds (after a call, what it wrote): an
/// array's elements, or a scalar; anything else is a test failure.
pub fn arg_floats(a: &adc::ArgValue) -> Vec<f64> {
    match a {
        adc::ArgValue::Array(adc::ArrayValue::F64(v)) => v.clone(),
        adc::ArgValue::Scalar(adc::Constant::F64(x)) => vec![*x],
        other => panic!("not doubles: {other:?}"),
    }
}

/// The results of calling `name`, all `double`s.
pub fn floats(j: &adc::JitModule, name: &str, args: &mut [adc::ArgValue]) -> Vec<f64> {
    j.call(name, args)
        .unwrap_or_else(|e| panic!("{name}: {e}"))
        .iter()
        .map(|c| match c {
            adc::Constant::F64(x) => *x,
            other => panic!("not a double: {other:?}"),
        })
        .collect()
}
