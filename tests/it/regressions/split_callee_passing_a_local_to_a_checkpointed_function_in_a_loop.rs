use crate::support::{assert_close, d, floats, jit};
use adc::driver::{self, Stage};
use adc::ArgValue;
use adc_ir::interp::{self, InterpArg};
use adc_ir::Constant;

/// `f` is a split-mode callee (recursive, so never inlined): its forward
/// half runs at the call, its reverse half later. It passes its local `y`
/// to a `[checkpoint]` function as an `inout` scalar, in a loop, so `y`'s
/// shadow lives in a stack slot. `unzip` put the slot's reference on the
/// tape, once per iteration: the forward half pushed an address in its own
/// frame and returned; the reverse half popped it and wrote the adjoint
/// into a dead frame. Calling `f` twice made the second call's frame
/// overwrite it: a SIGSEGV (difftest seed 133, reduced), or, with a branch
/// in the loop, a silently wrong gradient. Now `unzip` defines every
/// primal slot at entry (a store of zero where it was), so no stack
/// address goes on the tape; `split::build` gives the reverse half a slot
/// of its own holding what the forward half left; and the interpreter
/// empties a call's slots when it returns, so it reports such a reference
/// instead of reading stale memory.
const BODIES: [&str; 3] = [
    // The reduced seed 133: a SIGSEGV.
    "for (int k = 0; k < 2; k++) acc(y, x + 0.1 * k);",
    // A wrong gradient (1.144 for 0.271).
    "for (int k = 0; k < 2; k++) { if (x > 0.0) acc(y, x + 0.1 * k); }",
    // No loop, but after an early return: taped as well.
    "acc(y, x);",
];

fn source(body: &str) -> String {
    format!(
        "[checkpoint]
void acc(inout double s, double u) {{ s = tanh(s * u); }}
double f(double x, double y, int n) {{
    if (n > 0) return f(y, x, n - 1);
    {body}
    return y;
}}
[autodiff_reverse(gd, Active, Active, Const, Active)]
double g(double x, double y, int n) {{ return f(x, y, n) * f(y, x, n); }}"
    )
}

#[test]
fn split_callee_passing_a_local_to_a_checkpointed_function_in_a_loop() {
    for body in BODIES {
        let src = source(body);
        let (x, y) = (0.5, 0.7);
        let got = floats(
            &jit(&src),
            "gd",
            &mut [d(x), d(y), ArgValue::Scalar(Constant::I64(0)), d(1.0)],
        );
        let want = interpreted(
            &src,
            "gd",
            &mut [
                InterpArg::Scalar(Constant::F64(x)),
                InterpArg::Scalar(Constant::F64(y)),
                InterpArg::Scalar(Constant::I64(0)),
                InterpArg::Scalar(Constant::F64(1.0)),
            ],
        );
        for (k, (a, b)) in got.iter().zip(&want).enumerate() {
            assert_close(
                *a,
                *b,
                1e-12,
                &format!("{body}: result {k} against the interpreter"),
            );
        }
        // Central differences of g.
        let j = jit(&src);
        let g = |x: f64, y: f64| {
            floats(
                &j,
                "g",
                &mut [d(x), d(y), ArgValue::Scalar(Constant::I64(0))],
            )[0]
        };
        let h = 1e-6;
        let dx = (g(x + h, y) - g(x - h, y)) / (2.0 * h);
        let dy = (g(x, y + h) - g(x, y - h)) / (2.0 * h);
        assert_close(got[1], dx, 1e-6, &format!("{body}: dg/dx"));
        assert_close(got[2], dy, 1e-6, &format!("{body}: dg/dy"));
    }
}

/// The doubles `name` returns when the interpreter runs `src`'s final IR.
pub(super) fn interpreted(src: &str, name: &str, args: &mut [InterpArg]) -> Vec<f64> {
    let mut m = driver::frontend("test.ad", src, &adc::CompileOptions::default())
        .unwrap_or_else(|f| panic!("{f}"));
    driver::run_stages(&mut m, Stage::Final).expect("stages run");
    interp::call(&m, name, args, 1 << 26)
        .unwrap_or_else(|e| panic!("interpreter: {e:?}"))
        .iter()
        .map(|c| match c {
            Constant::F64(x) => *x,
            other => panic!("not a double: {other:?}"),
        })
        .collect()
}
