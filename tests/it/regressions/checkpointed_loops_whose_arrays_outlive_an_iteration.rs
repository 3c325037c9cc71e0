//! Found by an independent reading of the language (docs/) in a
//! conformance run of 2026-11-26: behaviour it expected and adc did not
//! give.

use crate::support;
use crate::support::{d, floats, jit};
use adc::{ArgValue, Constant};

/// A checkpointed loop whose body declares a local array and leaves by
/// `break` or `return` after it was refused (E0401); it is differentiated
/// without checkpoints, with the derivative it has without the attribute.
#[test]
fn checkpointed_loops_whose_arrays_outlive_an_iteration() {
    let body = |attr: &str, leave: &str| {
        format!(
            "double f{attr_name}(double x, int n) {{
    double s = x;
    {attr} for (int i = 0; i < n; i++) {{
        double t[2];
        t[0] = s * 1.1; t[1] = sin(t[0]);
        if (t[1] > 0.99) {leave}
        s = t[0] + t[1];
    }}
    return s;
}}",
            attr_name = if attr.is_empty() { "_plain" } else { "_ckpt" },
        )
    };
    for leave in ["break;", "return s * t[1];"] {
        for attr in ["[checkpoint(2)]", "[checkpoint]"] {
            let src = format!(
                "[autodiff_reverse(dp, Active, Const, Active)]\n{}\n[autodiff_reverse(dc, Active, Const, Active)]\n{}\n",
                body("", leave),
                body(attr, leave)
            );
            let j = jit(&src);
            for x in [0.1, 0.3, 0.7] {
                let n = ArgValue::Scalar(Constant::I64(9));
                let plain = floats(&j, "dp", &mut [d(x), n.clone(), d(1.0)]);
                let ckpt = floats(&j, "dc", &mut [d(x), n, d(1.0)]);
                for (k, (c, p)) in ckpt.iter().zip(&plain).enumerate() {
                    support::assert_close(*c, *p, 1e-12, &format!("{leave} {attr} x={x} [{k}]"));
                }
            }
        }
    }
}
