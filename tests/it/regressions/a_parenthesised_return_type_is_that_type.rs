use crate::support::{d, floats, jit};

/// `(double)` as a return type is `double` in parentheses: as a tuple of
/// one it was accepted but no `return` could produce it (E0104).
#[test]
fn a_parenthesised_return_type_is_that_type() {
    let j = jit("(double) half(double x) { return (x * 0.5); }
[autodiff_reverse(dhalf, Active, Active)]
(double) wrap(double x) { return half(x) * x; }");
    assert_eq!(floats(&j, "half", &mut [d(3.0)]), vec![1.5]);
    assert_eq!(floats(&j, "dhalf", &mut [d(3.0), d(1.0)]), vec![4.5, 3.0]);
}
