//! Found by an independent reading of the language (docs/) in a
//! conformance run of 2026-11-26: behaviour it expected and adc did not
//! give.

use crate::support;
use crate::support::{d, floats, jit};

/// A checkpointed loop nested in another loop whose body declares a local
/// array (no `break`): its array was "passed back along an edge that also
/// leaves the loop" (E0401, an independent tester's G1); it is
/// differentiated like the plain loop.
#[test]
fn checkpointed_inner_loop_declaring_a_local_array() {
    let src = |attr: &str, name: &str| {
        format!(
            "[autodiff_reverse(d{name}, Active, Active)]
double {name}(double x) {{
    double v = x;
    for (int j = 0; j < 2; j++) {{
        {attr}
        for (int i = 0; i < 2; i++) {{ double t[1]; t[0] = v; v = sin(t[0]); }}
    }}
    return v;
}}\n"
        )
    };
    for attr in ["[checkpoint(3)]", "[checkpoint]"] {
        let j = jit(&(src("", "plain") + &src(attr, "ckpt")));
        let plain = floats(&j, "dplain", &mut [d(0.5), d(1.0)]);
        let ckpt = floats(&j, "dckpt", &mut [d(0.5), d(1.0)]);
        assert_eq!(plain[1], 0.6293345060012926, "{attr}");
        support::assert_close(ckpt[1], plain[1], 1e-12, attr);
    }
}
