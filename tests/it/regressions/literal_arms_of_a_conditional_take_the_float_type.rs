use crate::support::jit;
use adc::{ArgValue, Constant};

/// A floating literal arm of `?:` takes the type the `?:` initialises, as
/// a literal does (`float f() { return c ? 0.1 : 0.2; }` and `float y =
/// c ? 0.5 : x;` were E0110).
#[test]
fn literal_arms_of_a_conditional_take_the_float_type() {
    let j = jit("float f(bool c) { return c ? 0.1 : 0.2; }
float g(bool c, float x) { float y = c ? 0.5 : x; return y; }");
    let b = |v: bool| ArgValue::Scalar(Constant::Bool(v));
    assert_eq!(j.call("f", &mut [b(true)]), Ok(vec![Constant::F32(0.1)]));
    assert_eq!(
        j.call("g", &mut [b(true), ArgValue::Scalar(Constant::F32(1.5))]),
        Ok(vec![Constant::F32(0.5)])
    );
    assert_eq!(
        j.call("g", &mut [b(false), ArgValue::Scalar(Constant::F32(1.5))]),
        Ok(vec![Constant::F32(1.5)])
    );
}
