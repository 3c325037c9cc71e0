use crate::support::{d, floats, jit};

/// A non-void function whose only exits are `return`s inside `while (true)`
/// or `for (;;)` compiles (as in C); with a `break` it is E0108
/// (tests/diagnostics/while_true_with_break_needs_return.ad).
#[test]
fn returns_inside_infinite_loops_are_the_only_exits() {
    let j = jit("double f(double x) { int k = 0; while (true) { x = x * 0.5; k++; if (x < 0.1) return x + double(k); } }
double g(double x) { for (;;) { if (x > 1.0) return x; x = x * 2.0; } }");
    assert_eq!(floats(&j, "f", &mut [d(1.0)]), vec![0.0625 + 4.0]);
    assert_eq!(floats(&j, "g", &mut [d(0.3)]), vec![1.2]);
}
