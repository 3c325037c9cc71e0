/// A rejected `[jacobian(J, reverse)]` (E0309: then reverse needed a float
/// result; now `reverse` twice stands for it) or `[hessian(H)]` (E0310) was followed by "cannot find function
/// `J`" (E0126) at every call of `J`: unlike `autodiff_*` attributes, their
/// names were not among those whose calls report nothing more. Found by a
/// new user's program (2026-11-30); `generated_names::rejected` names them.
#[test]
fn calls_of_a_rejected_jacobian_report_nothing_more() {
    let cases = [
        (
            "[jacobian(Jr, reverse, reverse)]
void f(double[] z, out double[] p) { p[0] = z[0]; }
void g(double[] z, out double[] p, out double[] j) { Jr(z, p, j); }",
            "E0309",
        ),
        (
            "[jacobian(Js, Dual, sparse)]
void f(double[] z, out double[] p) { p[0] = z[0]; }
int g(double[] z, out double[] p) { return Js_nnz(z, p); }",
            "E0309",
        ),
        (
            "[hessian(H)]
void f(double x, out double y) { y = x * x; }
void g(double x, out double y, out double[] h) { H(x, y, h); }",
            "E0310",
        ),
    ];
    for (src, code) in cases {
        let errs = match adc_frontend::compile_to_ir(src) {
            Ok(_) => panic!("compiled: {src}"),
            Err(e) => e,
        };
        let codes: Vec<&str> = errs.iter().map(|d| d.code).collect();
        assert_eq!(codes, vec![code], "{src}: {errs:#?}");
    }
}
