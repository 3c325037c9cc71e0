//! Difftest seed 133 (found by its dense Jacobian oracle when `[jacobian]`
//! chose reverse mode): the width-1 reverse derivative `gd` of `g`, which
//! calls `f` twice, crashed the process (SIGSEGV). `f` is too big to inline,
//! so it runs in split mode, and it passes its local `y` to the
//! `[checkpoint]` function `acc` in a loop: the shadow slot of `y` went on
//! the tape, and `f`'s reverse half wrote through it into a dead frame
//! (`split_callee_passing_a_local_to_a_checkpointed_function_in_a_loop`
//! has the reduced program and the fix). Checked against the interpreter.

use super::split_callee_passing_a_local_to_a_checkpointed_function_in_a_loop::interpreted;
use crate::support::{arg_floats, arr, assert_close, d, jit};
use adc_ir::interp::InterpArg;
use adc_ir::Constant;

#[test]
fn reverse_of_two_calls_of_a_checkpointed_function_matches_the_interpreter() {
    let src = include_str!("reverse_of_two_calls_of_a_checkpointed_function.ad");
    let (x, y) = (-1.285930187091477, -0.24259189697139316);
    let a = [1.4626135152445734, 0.24432638505833526, -1.1064412200514935];
    let o = [0.75, -1.25];
    let j = jit(src);
    let mut args = [
        d(x),
        d(y),
        arr(&a),
        arr(&[0.0; 3]),
        arr(&o),
        arr(&[0.0; 2]),
        d(1.0),
    ];
    let mut got: Vec<f64> = j
        .call("gd", &mut args)
        .expect("gd runs")
        .iter()
        .map(crate::support::number)
        .collect();
    for k in [3, 4, 5] {
        got.extend(arg_floats(&args[k]));
    }
    let f = |xs: &[f64]| InterpArg::Array(xs.iter().map(|x| Constant::F64(*x)).collect());
    let mut iargs = [
        InterpArg::Scalar(Constant::F64(x)),
        InterpArg::Scalar(Constant::F64(y)),
        f(&a),
        f(&[0.0; 3]),
        f(&o),
        f(&[0.0; 2]),
        InterpArg::Scalar(Constant::F64(1.0)),
    ];
    let mut want = interpreted(src, "gd", &mut iargs);
    for k in [3, 4, 5] {
        let InterpArg::Array(xs) = &iargs[k] else {
            panic!("an array")
        };
        want.extend(xs.iter().map(crate::support::number));
    }
    assert_eq!(got.len(), want.len());
    for (k, (a, b)) in got.iter().zip(&want).enumerate() {
        assert_close(*a, *b, 1e-10, &format!("output {k}"));
    }
}
