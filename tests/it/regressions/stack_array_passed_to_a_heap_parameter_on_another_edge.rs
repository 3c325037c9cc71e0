use super::seed_passes;

/// Campaign of 0791250 (seed 610001418): `unswitch` copied a loop nest
/// holding a local `double t10[3]`, and one terminator then passed that
/// array to the copy's loop variable on one edge and to a parameter that
/// also holds heap arrays on the other. Codegen's `stack_arrays` checked
/// edge arguments by value, so the array stayed in the frame and reached
/// a real `free` (abort: "munmap_chunk(): invalid pointer"). Edge
/// arguments are now checked edge by edge.
#[test]
fn stack_array_passed_to_a_heap_parameter_on_another_edge() {
    use adc::{ArgValue, ArrayValue, Constant};
    let src = include_str!("stack_array_passed_to_a_heap_parameter_on_another_edge.ad");
    let j = adc::compile_jit("repro.ad", src, &adc::CompileOptions::default())
        .expect("the repro compiles");
    let mut args = [
        ArgValue::Scalar(Constant::F64(-1.4021153221759015)),
        ArgValue::Scalar(Constant::F64(1.3238978843321552)),
        ArgValue::Array(ArrayValue::F64(vec![
            -1.1911590470515452,
            1.4945011518521687,
            -0.6719734473503702,
        ])),
    ];
    let out = j.call("f", &mut args).expect("f runs");
    assert!(
        matches!(out[..], [Constant::F64(v)] if v.is_finite()),
        "{out:?}"
    );
    seed_passes(610001418);
}
