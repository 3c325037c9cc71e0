/// A function whose closing `}` is missing, followed by another function,
/// gave two or three errors at the next function's head ("expected `;`,
/// found `(`", then "expected `(`, found identifier", or "expected a name,
/// found keyword `void`... rename it: `void_`"), none of them pointing at
/// the `{` left open: the `;` and keyword repairs took the head for a
/// statement. Found by a new user's program (2026-11-30). Now one error,
/// with a label at the open `{` (`repair::function_head`).
#[test]
fn missing_closing_brace_before_the_next_function() {
    let cases = [
        "double f(double x) {\n    if (x > 0.0) {\n        return x;\n    \n}\ndouble g(double y) { return y; }\n",
        "double f(double x) {\n    double y = 1.0;\n    for (int i = 0; i < 3; i++) {\n        y *= x;\n    return y;\n}\n\nvoid g(double[] a) { }\n",
    ];
    for src in cases {
        let errs = match adc_frontend::compile_to_ir(src) {
            Ok(_) => panic!("compiled: {src}"),
            Err(e) => e,
        };
        assert_eq!(errs.len(), 1, "{src}: {errs:#?}");
        let open = src.find('{').expect("the test's text") as u32;
        assert!(
            errs[0]
                .labels
                .iter()
                .any(|(s, m)| s.start == open && m.contains("not closed")),
            "{src}: {errs:#?}"
        );
    }
}
