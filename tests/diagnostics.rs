//! Every program in `tests/diagnostics/` must be rejected; the rendered
//! diagnostics (no colour) are snapshots, and each names a source line.

mod support;

#[test]
fn invalid_programs_are_reported() {
    let files = support::files("tests/diagnostics", "ad");
    assert!(files.len() >= 15, "want at least 15 invalid programs");
    for path in files {
        let name = support::name(&path);
        let source = support::read(&path);
        let compiled = adc::driver::frontend(&name, &source, false).and_then(|mut m| {
            adc::driver::run_stages_for(&mut m, adc::Stage::Final, &name, &source, false)
        });
        let failure = match compiled {
            Ok(_) => panic!("{name}: should not compile"),
            Err(f) => f,
        };
        assert!(!failure.diagnostics.is_empty(), "{name}: no diagnostics");
        for d in &failure.diagnostics {
            assert!(
                d.span.is_defined(),
                "{name}: diagnostic without a span: {}",
                d.message
            );
        }
        assert!(
            failure.rendered.contains(&format!("{name}:")),
            "{name}: no file:line:col"
        );
        insta::assert_snapshot!(format!("diag__{name}"), failure.rendered);
    }
}

#[test]
fn several_errors_in_one_file_are_all_reported() {
    let path = support::root().join("tests/diagnostics/several_syntax_errors.ad");
    let f = adc::driver::frontend("several_syntax_errors.ad", &support::read(&path), false)
        .expect_err("invalid");
    assert!(f.diagnostics.len() >= 2, "{f}");
}
