//! Textual IR: canonical files round-trip exactly and verify; invalid IR is
//! rejected by the verifier with the errors in the snapshot.

mod support;

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
    for path in support::files("tests/ir/verifier", "adir") {
        let name = support::name(&path);
        let m = adc_ir::parse_module(&support::read(&path)).unwrap_or_else(|e| panic!("{name}: {e}"));
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
