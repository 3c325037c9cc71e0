//! Every program in `tests/diagnostics/` must be rejected; the rendered
//! diagnostics (no colour) are snapshots, and each names a source line.

use crate::support;

#[test]
fn invalid_programs_are_reported() {
    let files = support::files("tests/diagnostics", "ad");
    assert!(files.len() >= 15, "want at least 15 invalid programs");
    let _in = support::snapshots_in("tests/diagnostics/snapshots").bind_to_scope();
    for path in files {
        let name = support::name(&path);
        let source = support::read(&path);
        let compiled = adc::driver::frontend(&name, &source, &adc::CompileOptions::default())
            .and_then(|mut m| {
                adc::driver::run_stages_for(
                    &mut m,
                    adc::Stage::Final,
                    &name,
                    &source,
                    &adc::CompileOptions::default(),
                )
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
    let f = adc::driver::frontend(
        "several_syntax_errors.ad",
        &support::read(&path),
        &adc::CompileOptions::default(),
    )
    .expect_err("invalid");
    assert!(f.diagnostics.len() >= 2, "{f}");
}

/// Programs that compile get warnings for names never read (W0001:
/// variables, by-value parameters and read-only arrays; writes alone do not
/// count, `_` prefixes opt out, `inout`/`out` parameters are exempt) and
/// for expression statements whose value is dropped (W0002). A program
/// with errors gets no warnings.
#[test]
fn warnings_for_unused_names_and_values() {
    let src =
        "double f(double x, double y, double[] a, inout double r, out double[] o, double _z) {
    double unused = 2.0;
    int count = 0;
    for (int i = 0; i < 3; i++) count += 1;
    auto [p, _q] = g(x);
    double w[2];
    x + 1.0;
    r = x;
    return x + p;
}
(double, double) g(double x) { return (x, x); }";
    let warnings = adc::driver::warnings("w.ad", src);
    let got: Vec<(&str, String)> = warnings
        .iter()
        .map(|d| (d.code, d.message.clone()))
        .collect();
    let want = [
        ("W0001", "unused parameter `y`"),
        ("W0001", "unused parameter `a`"),
        ("W0001", "unused variable `unused`"),
        ("W0001", "unused variable `count`"),
        ("W0001", "unused variable `w`"),
        ("W0002", "this expression's value is never used"),
    ];
    let want: Vec<(&str, String)> = want.iter().map(|(c, m)| (*c, m.to_string())).collect();
    assert_eq!(got, want);
    assert!(warnings
        .iter()
        .all(|d| !d.is_error() && d.span.is_defined()));
    let with_error = format!("{src}\ndouble h(double v) {{ return nope; }}");
    assert!(adc::driver::warnings("w.ad", &with_error).is_empty());
}
