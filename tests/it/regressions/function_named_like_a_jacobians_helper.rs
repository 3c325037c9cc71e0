/// `[jacobian(J)]` and `[hessian(H)]` expand to source defining `J`,
/// `J__rev`, `J_nnz`, `H__gw`, ...; a function of the program taking one
/// of those names (or two attributes generating the same one) was reported
/// at spans of the generated text, meaningless in the user's file (a line
/// past its end, the middle of another line), followed by errors about
/// the generated code's calls (E0124). Found by a new user's program
/// (2026-11-30). Now one E0201 per clash, at the program's definition,
/// with a label at the attribute (`generated_names`).
#[test]
fn function_named_like_a_jacobians_helper() {
    let cases = [
        // (source, the text the error points at, the attribute labelled)
        (
            // An array: the shape is known only at the call, so both ways
            // (`J__fwd`, `J__rev`) are generated.
            "[jacobian(J)]\ndouble f(double[] x) { return x[0] * x[0]; }\ndouble J__rev(double x) { return x; }\n",
            "J__rev(double",
            "[jacobian(J)]",
        ),
        (
            "double H__gw(double x) { return x; }\n[hessian(H)]\ndouble f(double x) { return x * x; }\n",
            "H__gw(double",
            "[hessian(H)]",
        ),
        (
            "[jacobian(J, sparse)]\ndouble f(double x) { return x * x; }\nint J_nnz(double x) { return 1; }\n",
            "J_nnz(double",
            "[jacobian(J, sparse)]",
        ),
        (
            "[jacobian(J)]\ndouble f(double x) { return x; }\n[jacobian(J)]\ndouble g(double x) { return x; }\n",
            "[jacobian(J)]\ndouble g",
            "[jacobian(J)]\ndouble f",
        ),
    ];
    for (src, at, attr) in cases {
        let errs = match adc_frontend::compile_to_ir(src) {
            Ok(_) => panic!("compiled: {src}"),
            Err(e) => e,
        };
        assert_eq!(errs.len(), 1, "{src}: {errs:#?}");
        let e = &errs[0];
        assert_eq!(e.code, "E0201", "{src}: {e:#?}");
        let want = src.find(at).expect("the test's text") as u32;
        assert_eq!(e.span.start, want, "{src}: {e:#?}");
        let label = src.find(attr).expect("the test's text") as u32;
        assert!(
            e.labels.iter().any(|(s, _)| s.start == label),
            "{src}: {e:#?}"
        );
    }
}
