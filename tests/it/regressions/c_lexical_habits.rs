//! Found by an independent reading of the language (docs/) in a
//! conformance run of 2026-11-26: behaviour it expected and adc did not
//! give.

use crate::support::{floats, jit};
use adc::Constant;

/// C's lexical habits: an upper-case `F` suffix, `f(void)`, a byte-order
/// mark, vertical tabs (each a syntax error before).
#[test]
fn c_lexical_habits() {
    let j =
        jit("\u{feff}float f(void) { return 1.5F + 2e1F; }\ndouble g() {\u{b} return 0.5f; }\n");
    assert_eq!(
        j.call("f", &mut []).expect("runs"),
        vec![Constant::F32(21.5)]
    );
    assert_eq!(floats(&j, "g", &mut []), vec![0.5]);
}
