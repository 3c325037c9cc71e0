//! Textual IR: canonical files round-trip exactly and verify; invalid IR is
//! rejected by the verifier with the errors in the snapshot.

use crate::support;

#[test]
fn parser_files_round_trip() {
    for path in support::files("tests/ir/parser", "adir") {
        let text = support::read(&path);
        support::assert_round_trips(&text);
        let m = adc_ir::parse_module(&text).expect("parses");
        adc_ir::verify(&m).unwrap_or_else(|e| panic!("{}: {e}", support::name(&path)));
    }
}

#[test]
fn verifier_rejects_invalid_ir() {
    let _in = support::snapshots_in("tests/ir/verifier/snapshots").bind_to_scope();
    for path in support::files("tests/ir/verifier", "adir") {
        let name = support::name(&path);
        let m =
            adc_ir::parse_module(&support::read(&path)).unwrap_or_else(|e| panic!("{name}: {e}"));
        let errors = adc_ir::verify(&m).expect_err("invalid IR must not verify");
        insta::assert_snapshot!(format!("verify__{name}"), errors.to_string());
    }
}

#[test]
fn parse_errors_have_locations() {
    for (text, want) in [
        ("func @f() {\nblock0():\n    v1: f64 = frob v0\n}\n", "3:15: unknown instruction `frob`"),
        ("func @f() {\nblock0():\n    v1: f64 = const 1.0\n    v1: f64 = const 2.0\n    return\n}\n", "value `v1` defined twice"),
        ("func @f( {", "expected a name"),
        ("func @f() {\nblock0():\n    call @g()\n    return\n}\n", "unknown function `@g`"),
    ] {
        let e = adc_ir::parse_module(text).expect_err("invalid");
        assert!(e.to_string().contains(want), "{e} should contain {want}");
    }
}

/// Runs the passes named in the `; test:` header, verifying after each.
fn run_filetest(name: &str, text: &str) -> String {
    let header = text
        .lines()
        .find_map(|l| l.strip_prefix("; test:"))
        .unwrap_or_else(|| panic!("{name}: no `; test:` line"));
    let mut module = adc_ir::parse_module(text).unwrap_or_else(|e| panic!("{name}: {e}"));
    adc_ir::verify(&module).unwrap_or_else(|e| panic!("{name}: input does not verify:\n{e}"));
    for pass in header.split_whitespace() {
        adc_passes::run_pass(pass, &mut module)
            .unwrap_or_else(|| panic!("{name}: unknown pass `{pass}`"))
            .unwrap_or_else(|e| panic!("{name}: `{pass}` failed: {e}"));
        adc_ir::verify(&module)
            .unwrap_or_else(|e| panic!("{name}: output of `{pass}` does not verify:\n{e}"));
    }
    let out = module.to_string();
    support::assert_round_trips(&out);
    out
}

#[test]
fn pass_filetests() {
    // Every directory of `tests/ir` but the parser's and the verifier's
    // is named after the pass its files test.
    let mut passes: Vec<String> = std::fs::read_dir("tests/ir")
        .expect("tests/ir exists")
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .filter(|n| n != "parser" && n != "verifier")
        .collect();
    passes.sort();
    for pass in &passes {
        let _in = support::snapshots_in(&format!("tests/ir/{pass}/snapshots")).bind_to_scope();
        for path in support::files(&format!("tests/ir/{pass}"), "adir") {
            let name = support::name(&path);
            let out = run_filetest(&name, &support::read(&path));
            insta::assert_snapshot!(format!("pass__{pass}__{name}"), out);
        }
    }
}
