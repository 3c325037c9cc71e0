//! Programs that once gave wrong derivatives or crashed the compiler, with
//! their gradients worked out by hand (issue 10 and what the random-program
//! tester finds).

use crate::support;

use crate::support::{assert_close, d, floats, jit};
use adc::{ArgValue, ArrayValue, Constant};

/// A loop that overwrites `y` without reading it: the adjoint reaching the
/// loop exit belongs to the last iteration's `b` alone. `mem2reg` once left
/// the loop header out of its own dominance frontier, so the slot holding
/// that adjoint was never seen to be reset and `b` got it twice, `x` too.
#[test]
fn loop_that_overwrites_a_variable_without_reading_it() {
    let j = jit("[autodiff_reverse(df, Active, Active, Active)]
double f(double x, double b) {
    double y = x * x;
    for (int i = 0; i < 2; i++) y = b;
    return y;
}");
    assert_eq!(
        floats(&j, "df", &mut [d(3.0), d(2.0), d(1.0)]),
        vec![2.0, 0.0, 1.0]
    );
}

/// "Keep the last residual": only the last element and `w` through it.
#[test]
fn loop_that_keeps_its_last_residual() {
    let j = jit("[autodiff_reverse(df, Active, Duplicated, Active)]
double f(double w, double[] a) {
    double r = 0.0;
    for (int i = 0; i < len(a); i++) r = a[i] * w - 1.0;
    return r * r;
}");
    let (w, a) = (1.5, [2.0, 3.0, 4.0]);
    let mut args = [
        d(w),
        ArgValue::Array(ArrayValue::F64(a.to_vec())),
        ArgValue::Array(ArrayValue::F64(vec![0.0; 3])),
        d(1.0),
    ];
    let out = floats(&j, "df", &mut args);
    let r = a[2] * w - 1.0;
    assert_close(out[0], r * r, 1e-15, "primal");
    assert_close(out[1], 2.0 * r * a[2], 1e-15, "d/dw");
    let ArgValue::Array(ArrayValue::F64(da)) = &args[2] else {
        panic!("shadow")
    };
    assert_eq!(da, &vec![0.0, 0.0, 2.0 * r * w]);
}

/// A fixed-point iteration that copies its iterate into a result variable:
/// z' = z/2 + x five times, so d res/dx = 1 + 1/2 + ... + 1/16.
#[test]
fn fixed_point_iteration_copied_into_a_result() {
    let src = "[autodiff_reverse(df, Active, Active)]
double f(double x) {
    double z = 1.0;
    double res = 0.0;
    for (int k = 0; k < 5; k++) { z = 0.5 * z + x; res = z; }
    return res;
}";
    let j = jit(src);
    let out = floats(&j, "df", &mut [d(0.25), d(1.0)]);
    assert_close(out[1], 1.9375, 1e-15, "d/dx");
}

/// Forward over reverse of a loop with a branch: `linearize` walked blocks
/// in layout order, where a loop's step block may come before the block
/// defining what it uses, and panicked ("defined before use"). With
/// a = [1, 2, -1, 3] the loop computes s = (x + x) * x + x = 2x² + x.
#[test]
fn forward_over_reverse_of_a_loop_with_a_branch() {
    let j = jit("double f(double x, double[] a) {
    double s = 0.0;
    for (int i = 0; i < len(a); i++) {
        if (a[i] > 0.0) s = s + x; else s = s * x;
    }
    return s;
}
[autodiff_reverse(df, Active, Duplicated, Active)]
double h(double x, double[] a) { return f(x, a); }
[autodiff_forward(hv, Dual, Const, Const, Const, Dual)]
double k(double x, double[] a, inout double[] da, double s) { auto [y, dx] = df(x, a, da, s); return dx; }");
    let x = 1.1;
    let a = ArgValue::Array(ArrayValue::F64(vec![1.0, 2.0, -1.0, 3.0]));
    let da = ArgValue::Array(ArrayValue::F64(vec![0.0; 4]));
    let out = floats(&j, "hv", &mut [d(x), d(1.0), a, da, d(1.0)]);
    assert_close(out[0], 4.0 * x + 1.0, 1e-15, "f'");
    assert_close(out[1], 4.0, 1e-15, "f''");
}

/// Reverse over reverse (was the compile error E0401): `dg`'s own tape
/// moves to tape 1 in `dh`, which tapes on tape 0. g = 3x², so g' = 6x and
/// g'' = 6.
#[test]
fn reverse_over_reverse_of_a_loop() {
    let j = jit("[autodiff_reverse(dg, Active, Active)]
double g(double x) { double s = 0.0; for (int i = 0; i < 3; i++) s += x * x * double(i); return s; }
[autodiff_reverse(dh, Active, Active)]
double gp(double x) { auto [y, d] = dg(x, 1.0); return d; }");
    assert_eq!(floats(&j, "dh", &mut [d(1.5), d(1.0)]), vec![9.0, 6.0]);
}

/// Reverse over reverse through a branch in a loop, with an array: the
/// inner derivative is f_x = Σ (a_i > 0 ? 2 a_i x : a_i), so the outer
/// gradient is Σ_{a_i > 0} 2 a_i for x and (a_i > 0 ? 2x : 1) for a_i.
#[test]
fn reverse_over_reverse_through_a_branch_and_an_array() {
    let j = jit("double f(double x, double[] a) {
    double s = 0.0;
    for (int i = 0; i < len(a); i++) {
        if (a[i] > 0.0) s += a[i] * x * x; else s += x * a[i];
    }
    return s;
}
[autodiff_reverse(df, Active, Duplicated, Active)]
double h(double x, double[] a) { return f(x, a); }
[autodiff_reverse(dk, Active, Duplicated, Const, Const, Active)]
double k(double x, double[] a, inout double[] da, double s) { auto [y, dx] = df(x, a, da, s); return dx; }");
    let (x, a) = (1.25, [2.0, -1.0, 0.5, -3.0]);
    let mut args = [
        d(x),
        ArgValue::Array(ArrayValue::F64(a.to_vec())),
        ArgValue::Array(ArrayValue::F64(vec![0.0; 4])),
        ArgValue::Array(ArrayValue::F64(vec![0.0; 4])),
        d(1.0),
        d(1.0),
    ];
    let out = floats(&j, "dk", &mut args);
    let fx: f64 = a
        .iter()
        .map(|&ai| if ai > 0.0 { 2.0 * ai * x } else { ai })
        .sum();
    assert_close(out[0], fx, 1e-15, "f_x");
    assert_close(out[1], 2.0 * (2.0 + 0.5), 1e-15, "d f_x / dx");
    let ArgValue::Array(ArrayValue::F64(d_a)) = &args[2] else {
        panic!("shadow")
    };
    assert_eq!(d_a, &vec![2.0 * x, 1.0, 2.0 * x, 1.0]);
}

/// Second derivatives of a loop that tapes a value with a zero tangent
/// (the sign of `abs`, a constant select): linearize pushed no tangent for
/// it but popped one, so forward over reverse read the tape out of step
/// (a wrong gradient, or a segfault) and reverse over reverse was wrong.
/// Found by the random-program tester (seed 9). f = (n |y|)^2 with n = 2:
/// f' = 8y, f'' = 8.
#[test]
fn second_order_through_a_taped_zero_tangent() {
    let j = jit("[autodiff_reverse(f_r2, Active, Const, Active)]
double f2(double y, double[] a) {
    double t9[2] = {y, 0.5};
    double s = 0.0;
    for (int i = 0; i < len(a); i++) s += abs(t9[0]);
    return s * s;
}
[autodiff_reverse(h_rr, Active, Const, Active)]
double gr(double y, double[] a) { auto [p, dy] = f_r2(y, a, 1.0); return dy; }
[autodiff_forward(h_fr, Dual, Const, Dual)]
double gr2(double y, double[] a) { auto [p, dy] = f_r2(y, a, 1.0); return dy; }");
    let a = || ArgValue::Array(ArrayValue::F64(vec![1.0, 2.0]));
    let rr = floats(&j, "h_rr", &mut [d(0.2), a(), d(1.0)]);
    let fr = floats(&j, "h_fr", &mut [d(0.2), d(1.0), a()]);
    for got in [rr, fr] {
        assert_close(got[0], 1.6, 1e-14, "f'");
        assert_close(got[1], 8.0, 1e-14, "f''");
    }
}

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

/// Inlining has a budget per caller: in a chain of functions that each
/// call the next one twice, every caller used to grow up to 64 inlined
/// bodies (300 such functions took 74 s and 800 MB to differentiate).
/// Every function of the final module stays under 850 instructions
/// (940 without the budget at this depth), and the gradient is still right.
#[test]
fn inlining_a_doubling_call_chain_stays_bounded() {
    let mut src = String::from("double f0(double x) { return sin(x); }\n");
    for i in 1..20 {
        src.push_str(&format!(
            "double f{i}(double x) {{ if (x > 0.0) return f{}(x) * 1.01; return f{}(x + 0.1); }}\n",
            i - 1,
            i - 1
        ));
    }
    src.push_str("[autodiff_reverse(dg, Active, Active)]\ndouble g(double x) { return f19(x); }\n");
    let mut module = adc::driver::frontend("chain.ad", &src, false).expect("compiles");
    adc::driver::run_stages_for(&mut module, adc::Stage::Final, "chain.ad", &src, false)
        .expect("differentiates");
    let largest = module
        .funcs
        .iter()
        .map(|f| {
            f.layout
                .iter()
                .map(|b| f.dfg.block(*b).insts.len())
                .sum::<usize>()
        })
        .max()
        .unwrap_or(0);
    eprintln!("largest function: {largest} instructions");
    assert!(largest < 850, "a function of {largest} instructions");
    let j = jit(&src);
    let got = floats(&j, "dg", &mut [d(0.5), d(1.0)]);
    // f19(x) = sin(x) * 1.01^19 for x > 0.
    let scale = 1.01f64.powi(19);
    assert_close(got[0], 0.5f64.sin() * scale, 1e-12, "value");
    assert_close(got[1], 0.5f64.cos() * scale, 1e-12, "derivative");
}

/// A `[checkpoint]` function with an `inout` scalar: the caller's reverse
/// sweep keeps the scalar's shadow in a stack slot, which `transpose` takes
/// to be zero where the sweep first reads it. Codegen left slots
/// uninitialized (the interpreter zeroes them), so the gradient was
/// whatever the stack held: NaN from `adc run`. Here a first call fills
/// the stack with large values.
#[test]
fn checkpointed_call_with_an_inout_scalar_reads_a_zeroed_shadow() {
    let body = "void acc(inout double s, double x, int n) { for (int i = 0; i < n; i++) s = s * x + 1.0; }
double f(double x, double[] a) { double s = a[0];
    for (int k = 0; k < 3; k++) acc(s, x * a[k], k + 2);
    return s; }
[autodiff_reverse(df, Active, Duplicated, Active)]
double entry(double x, double[] a) { return f(x, a); }
double dirty(double x) { double t[64]; for (int i = 0; i < 64; i++) t[i] = 1e300 * x; double s = 0.0; for (int i = 0; i < 64; i++) s += t[i] * t[63 - i]; return s; }";
    let gradient = |src: &str| {
        let j = jit(src);
        floats(&j, "dirty", &mut [d(1.0)]);
        let mut args = [
            d(0.8),
            ArgValue::Array(ArrayValue::F64(vec![0.3, -0.7, 1.1])),
            ArgValue::Array(ArrayValue::F64(vec![0.0; 3])),
            d(1.0),
        ];
        let r = floats(&j, "df", &mut args);
        let ArgValue::Array(ArrayValue::F64(da)) = &args[2] else {
            panic!("shadow")
        };
        let mut g = r.clone();
        g.extend(da);
        g
    };
    let joint = gradient(body);
    let checkpointed = gradient(&format!("[checkpoint] {body}"));
    assert!(joint.iter().all(|x| x.is_finite()), "{joint:?}");
    for (c, j) in checkpointed.iter().zip(&joint) {
        assert_close(*c, *j, 1e-12, "checkpointed against joint");
    }
}

/// A custom forward derivative of a function with an `inout` array makes
/// the function's writes itself (it has the generated derivative's
/// signature): the primal call once made them first, so `H` squared the
/// squares (result 81, tangent 18 at x = 3).
#[test]
fn custom_forward_derivative_of_a_function_that_writes_its_argument() {
    let j = jit("void sq_fwd(inout double[] x, inout double[] d_x) {
    for (int i = 0; i < len(x); i++) { d_x[i] = 2.0 * x[i] * d_x[i]; x[i] = x[i] * x[i]; }
}
[forward_derivative(sq_fwd)]
void sq(inout double[] x) { for (int i = 0; i < len(x); i++) x[i] = x[i] * x[i]; }
double sq_sum(double[] x, inout double[] y) { double s = 0.0; for (int i = 0; i < len(x); i++) { s += x[i] * y[i]; y[i] = 2.0 * y[i]; } return s; }
double sq_sum_fwd(double[] x, double[] d_x, inout double[] y, inout double[] d_y) {
    double t = 0.0;
    for (int i = 0; i < len(x); i++) { t += d_x[i] * y[i] + x[i] * d_y[i]; y[i] = 2.0 * y[i]; d_y[i] = 2.0 * d_y[i]; }
    return t;
}
[forward_derivative(sq_sum_fwd)]
double sq_sum2(double[] x, inout double[] y) { double s = 0.0; for (int i = 0; i < len(x); i++) { s += x[i] * y[i]; y[i] = 2.0 * y[i]; } return s; }
[autodiff_forward(user_fwd, Dual, DualOnly)]
double user(double x) {
    double a[1]; a[0] = x; sq(a);
    double y[1]; y[0] = x;
    double s = sq_sum2(a, y);
    return a[0] + s + y[0];
}");
    // a = x^2; s = x^2 * x = x^3; y = 2x: user = x^2 + x^3 + 2x.
    let x = 3.0;
    let t = floats(&j, "user_fwd", &mut [d(x), d(1.0)]);
    assert_close(t[0], 2.0 * x + 3.0 * x * x + 2.0, 1e-12, "tangent");
    let j2 = jit("void sq_fwd(inout double[] x, inout double[] d_x) {
    for (int i = 0; i < len(x); i++) { d_x[i] = 2.0 * x[i] * d_x[i]; x[i] = x[i] * x[i]; }
}
[forward_derivative(sq_fwd)]
void sq(inout double[] x) { for (int i = 0; i < len(x); i++) x[i] = x[i] * x[i]; }
[autodiff_forward(user_fwd, Dual, Dual)]
double user(double x) { double a[1]; a[0] = x; sq(a); return a[0]; }");
    let r = floats(&j2, "user_fwd", &mut [d(x), d(1.0)]);
    assert_close(r[0], x * x, 1e-12, "result");
    assert_close(r[1], 2.0 * x, 1e-12, "tangent");
}

/// A custom derivative is used also where its own function is the one
/// differentiated (an attribute on it, or on an `extern`), not only at
/// calls: the attribute once differentiated the body.
#[test]
fn custom_derivative_of_the_differentiated_function_itself() {
    let j = jit(
        "double sq_rev(double x, double seed) { return 100.0 * seed; }
double sq_fwd(double x, double d_x) { return 7.0 * d_x; }
[reverse_derivative(sq_rev)]
[forward_derivative(sq_fwd)]
[autodiff_reverse(dsq, Active, Active)]
[autodiff_forward(tsq, Dual, Dual)]
double sq(double x) { return x * x; }
extern double j1(double x);
double j0_rev(double x, double seed) { return -j1(x) * seed; }
[reverse_derivative(j0_rev)]
[autodiff_reverse(dj0, Active, Active)]
extern double j0(double x);",
    );
    assert_eq!(floats(&j, "dsq", &mut [d(3.0), d(1.0)]), vec![9.0, 100.0]);
    assert_eq!(floats(&j, "tsq", &mut [d(3.0), d(1.0)]), vec![9.0, 7.0]);
    let dj0 = floats(&j, "dj0", &mut [d(1.0), d(1.0)]);
    assert_close(dj0[1], -0.44005058574493355, 1e-14, "dj0");
}

/// `zero-skip` once skipped a loop whose store wrote back a value loaded
/// before the loop (`a[0] = v + t` with `v = a[0]` read before `a[0] = 5`):
/// with the tangent `t` zero, the loop is not a no-op, it restores `v`.
#[test]
fn zero_skip_keeps_a_loop_that_writes_back_an_earlier_load() {
    let j = jit("[autodiff_forward(dsq, Dual, Dual)]
double sq(double x) { return x * x; }
double f(double x, double y, int n) {
    double a[2];
    if (n > 0) { a[0] = x; }
    double v = a[0];
    a[0] = 5.0;
    for (int i = 0; i < n; i++) {
        auto [p, t] = dsq(x + double(i), y);
        a[0] = v + t;
    }
    return a[0];
}");
    let n = ArgValue::Scalar(Constant::I64(2));
    // a[0] = v + t with v = x and, last, t = 2 (x + 1) y: x when y is zero.
    assert_eq!(floats(&j, "f", &mut [d(3.0), d(0.0), n.clone()]), vec![3.0]);
    assert_eq!(
        floats(&j, "f", &mut [d(3.0), d(0.5), n]),
        vec![3.0 + 2.0 * 4.0 * 0.5]
    );
}

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

/// A callee too big to inline runs in split mode: its forward half now, its
/// reverse half after the caller's later statements. It reads its `inout`
/// array in a loop, which unzip computed again from the array in the
/// reverse half instead of taping (the callee never writes it): split mode
/// refused that (E0999, "the reverse sweep reads a writable array
/// parameter") on a valid program, and must read the values of the call,
/// not those the caller writes after it (independent tester's finding).
/// big(o, 1) = c * o[0] * o[1] with c a constant: the gradient of f in w is
/// [c w1, c w0] though f overwrites w[0] after the call.
#[test]
fn split_mode_callee_reading_its_inout_array_in_a_loop() {
    let filler: String = (0..100)
        .map(|k| format!("    s = s * 0.5 + sin(s + {k}.0);\n"))
        .collect();
    let source = format!(
        "static double big(inout double[] o, double s) {{
{filler}    for (int j = 0; j < len(o); j++) s = s * o[j];
    return s;
}}
[autodiff_reverse(df, Duplicated, Active)]
double f(inout double[] w) {{
    double r = big(w, 1.0);
    w[0] = 3.0;
    return r;
}}"
    );
    let (w0, w1) = (0.5, 0.6);
    let j = jit(&source);
    let mut primal = [ArgValue::Array(ArrayValue::F64(vec![w0, w1]))];
    let c = floats(&j, "f", &mut primal)[0] / (w0 * w1);
    let mut args = [
        ArgValue::Array(ArrayValue::F64(vec![w0, w1])),
        ArgValue::Array(ArrayValue::F64(vec![0.0; 2])),
        d(1.0),
    ];
    j.call("df", &mut args)
        .unwrap_or_else(|e| panic!("df: {e}"));
    let ArgValue::Array(ArrayValue::F64(dw)) = &args[1] else {
        panic!("shadow")
    };
    assert_close(dw[0], c * w1, 1e-13, "df/dw0");
    assert_close(dw[1], c * w0, 1e-13, "df/dw1");
}

/// Loops with huge constant bounds or steps: the trip count and the
/// counter's end, computed from the bounds, overflowed an i64. `unroll`
/// ran `for (i = -6e18; i < 6e18; i += 4e18)` zero times instead of three,
/// the reverse sweep of a loop that ran zero times (from -6e18 down to
/// 4e18) popped an empty tape (a segfault), and one with a step of -8.4e18
/// got a wrong gradient (independent tester's findings). Counted loops now
/// step by at most 2^20 (`loops::MAX_STEP`), trip counts are computed in
/// i128, and the distance to the bound is 0 when the loop did not run.
#[test]
fn loops_with_huge_bounds_or_steps() {
    let j = jit("int b1() {
    int s = 0;
    for (int i = -6000000000000000000; i < 6000000000000000000; i += 4000000000000000000) s = s * 10 + 1;
    return s;
}
[autodiff_reverse(d4, Active, Active)]
double b4(double x) {
    double s = x;
    for (int i = -6000000000000000000; i < 6000000000000000000; i += 4000000000000000000) s = s * x;
    return s;
}
[autodiff_reverse(dz1, Active, Active)]
double z1(double x) { double s = x; for (int i = -6000000000000000000; i >= 4000000000000000000; i -= 2) s = s * x; return s; }
[autodiff_reverse(dz3, Active, Active)]
double z3(double x) { double s = x; for (int i = 7000000000000000000; i >= 4; i -= 8400000000000000000) s = s * x; return s; }
[autodiff_reverse(dg, Active, Active)]
double g(double x) { double s = x; for (int i = 0; i < 10; i += 9223372036854775800) s = s * x; return s; }");
    assert_eq!(
        j.call("b1", &mut []).expect("runs"),
        vec![Constant::I64(111)]
    );
    assert_eq!(floats(&j, "d4", &mut [d(2.0), d(1.0)]), vec![16.0, 32.0]);
    assert_eq!(floats(&j, "dz1", &mut [d(2.0), d(1.0)]), vec![2.0, 1.0]);
    assert_eq!(floats(&j, "dz3", &mut [d(2.0), d(1.0)]), vec![4.0, 4.0]);
    assert_eq!(floats(&j, "dg", &mut [d(2.0), d(1.0)]), vec![4.0, 4.0]);
}

/// A reverse derivative of code calling a forward derivative whose tangent
/// only feeds a comparison, an `int` cast or nothing: `linearize` kept the
/// internal `__adc_jvp_g` call primal (its `deriv` mark is cleared once it
/// is generated), which later passes take for a derivative call: a panic in
/// `unzip` or E0999 (a review of the `needless` analysis).
#[test]
fn forward_derivative_results_unused_under_reverse_mode() {
    let g = "double g(double x, int n) {
    if (n <= 0) { return x * x; }
    return g(x, n - 1) * 1.5;
}
[autodiff_forward(df, Dual, Const, Dual)]
double f(double x, int n) { return g(x, n) + x; }
";
    for (body, want) in [
        ("auto [p, t] = df(x, 1.0, 3); double y = x * x; if (t > 100.0) { y = y * 2.0; } return y;", 2.0 * 1.5),
        ("auto [p, t] = df(x, 1.0, 3); return x * x + double(int(t));", 2.0 * 1.5),
        ("auto [p, t] = df(x, 1.0, 1); return x * x;", 2.0 * 1.5),
    ] {
        let src = format!("{g}[autodiff_reverse(dh, Active, Active)]\ndouble h(double x) {{ {body} }}\n");
        let j = jit(&src);
        let got = floats(&j, "dh", &mut [d(1.5), d(1.0)]);
        assert_eq!(got[1], want, "{body}");
    }
}

/// One array passed to two read-only parameters of a callee that stays a
/// call (`[checkpoint]`, recursion, views of one array): both shadows were
/// the caller's one shadow, and the callee's reverse derivative, whose
/// `carry` keeps `d_a[i + 1]` in a register across the store to `d_b[i]`,
/// lost `d_b`'s part (gradient [2, 2] instead of [7, 2]; an independent
/// tester's finding). The second shadow is now an array of its own, added
/// into the first after the call. Checked against forward mode.
#[test]
fn one_array_passed_to_two_read_only_parameters_of_a_call() {
    let j = jit("
[checkpoint]
double k(double[] a, double[] b) {
    double s = 0.0;
    for (int i = 0; i + 1 < len(a); i++) s += (a[i] + a[i + 1]) * b[i];
    return s;
}
double kr(double[] a, double[] b, int depth) {
    if (depth > 0) return kr(a, b, depth - 1);
    double s = 0.0;
    for (int i = 0; i + 1 < len(a); i++) s += (a[i] + a[i + 1]) * b[i];
    return s;
}
[checkpoint]
double k3(double[] a, double[] b, double[] c) {
    double s = 0.0;
    for (int i = 0; i + 1 < len(a); i++) s += (a[i] + a[i + 1]) * b[i] * c[i + 1];
    return s;
}
[autodiff_reverse(df, Duplicated, ActiveOnly)]
[autodiff_forward(tf, Dual, Dual)]
double f(double[] x) { return k(x, x) + kr(x, x, 2) + k3(x[0..3], x[1..4], x[0..3]); }
");
    let x = vec![2.0, 3.0, 1.5, 0.7];
    let arr = |v: Vec<f64>| ArgValue::Array(ArrayValue::F64(v));
    let mut args = [arr(x.clone()), arr(vec![0.0; 4]), d(1.0)];
    j.call("df", &mut args).expect("runs");
    let ArgValue::Array(ArrayValue::F64(grad)) = &args[1] else {
        panic!("shadow")
    };
    for (k, g) in grad.iter().enumerate() {
        let mut e = vec![0.0; 4];
        e[k] = 1.0;
        let t = floats(&j, "tf", &mut [arr(x.clone()), arr(e)]);
        assert_close(*g, t[1], 1e-14, &format!("d/dx{k}"));
    }
    // By hand for the first two terms: d/dx0 of 2 (x0 + x1) x0 + ... .
    assert!(grad[0] > 2.0 * (2.0 * 2.0 + 3.0), "{grad:?}");
}

/// Thousands of calls of a tiny helper in a row (robust5 F4): past the
/// first 64 inlined calls they stayed calls, and register allocation of the
/// reverse derivative took memory growing with calls times values (2,000
/// calls 612 MB, 8,000 an abort). Tiny callees that call nothing are now
/// inlined wherever they are called, in one pass; a larger helper called
/// as often compiles with the single-pass register allocator.
#[test]
fn thousands_of_calls_of_a_helper_under_reverse_mode() {
    for (helper, dg) in [
        ("return x * 1.0001;", "1.0001"),
        // Branches: stays within the inlining budget (each inlined copy
        // splits the caller's block: inlining all 8,000 took 12 s).
        ("if (x < 0.0) { return -x; } return x * 1.0001;", "1.0001"),
        ("double a = x * 1.0001; double b = a * 0.5 + 0.25 * x * x; return a + 0.001 * b - 0.001 * (a * 0.5 + 0.25 * x * x) + 0.0 * sin(a) * cos(b);", ""),
    ] {
        let n = 3000;
        let src = format!(
            "double g(double x) {{ {helper} }}\n[autodiff_reverse(df, Active, Active)]\ndouble f(double x) {{ double y = x; {} return y; }}",
            "y = g(y); ".repeat(n)
        );
        let j = jit(&src);
        let out = floats(&j, "df", &mut [d(0.5), d(1.0)]);
        if dg.is_empty() {
            assert!(out[1].is_finite(), "{out:?}");
        } else {
            let want = 1.0001f64.powi(n as i32);
            assert_close(out[1], want, 1e-12, "d/dx");
        }
    }
}

/// fmod's partial in its second argument is minus the quotient fmod itself
/// used: `fmod(1, 0.1)` is 1 - 9 * 0.1, but the rounded 1 / 0.1 is 10, and
/// the derivative said -10 (a review's finding).
#[test]
fn fmod_partial_uses_fmods_own_quotient() {
    let j = jit("[autodiff_reverse(df, Active, Active, Active)]
[autodiff_forward(tf, Dual, Dual, Dual)]
double f(double x, double y) { return fmod(x, y); }");
    assert_eq!(
        floats(&j, "df", &mut [d(1.0), d(0.1), d(1.0)])[1..],
        [1.0, -9.0]
    );
    assert_eq!(
        floats(&j, "tf", &mut [d(1.0), d(0.0), d(0.1), d(1.0)])[1],
        -9.0
    );
    assert_eq!(
        floats(&j, "df", &mut [d(-7.5), d(2.0), d(1.0)])[1..],
        [1.0, 3.0]
    );
}

/// d(x / y) for a subnormal `y`: the tangent (or adjoint) is divided by
/// `y` (`divz`), not multiplied by `1 / y`, which overflows to infinity
/// where the quotient is finite (a review's finding). Forward and reverse
/// mode, seeds small enough that every derivative is finite.
#[test]
fn derivative_of_a_division_by_a_subnormal_is_finite() {
    let j = support::jit(
        "[autodiff_forward(tf, Dual, Dual, Dual)]
[autodiff_reverse(rf, Active, Active, Active)]
double f(double x, double y) { return x / y; }",
    );
    let (x, y, s) = (1e-300, 1e-310, 1e-20);
    let q = x / y;
    let want = [s / y, -(q * s) / y];
    let mut args = [support::d(x), support::d(s), support::d(y), support::d(0.0)];
    let t = support::floats(&j, "tf", &mut args);
    assert_eq!(t, vec![q, want[0]], "forward along x");
    let mut args = [support::d(x), support::d(0.0), support::d(y), support::d(s)];
    let t = support::floats(&j, "tf", &mut args);
    assert_eq!(t, vec![q, want[1]], "forward along y");
    let mut args = [support::d(x), support::d(y), support::d(s)];
    let g = support::floats(&j, "rf", &mut args);
    assert_eq!(g[g.len() - 2..], want, "reverse");
    assert!(want.iter().all(|v| v.is_finite() && *v != 0.0));
}

/// A local array the reverse sweep reads again instead of taping (`unzip`'s
/// frozen locals) must hold, when read, what the forward sweep read: in `f`
/// nothing writes `e` after the read, so it is loaded again (and freed only
/// when the derivative returns); in `g` and `h` a later write (a store, a
/// callee's `inout` parameter) reaches the read around the outer loop, so
/// its values are taped. s = 3 sum exp(x_i) x_i in `g` and `h`.
#[test]
fn local_array_read_again_in_the_reverse_sweep() {
    // One body, three endings of the outer loop: none, a store, a callee.
    let program = |name: &str, outer: u32, write: &str| {
        format!(
            "[autodiff_reverse(d{name}, Duplicated, ActiveOnly)]
double {name}(double[] x) {{
    int n = len(x);
    double e[n];
    for (int i = 0; i < n; i++) e[i] = exp(x[i]);
    double s = 0.0;
    for (int r = 0; r < {outer}; r++) {{
        for (int i = 0; i < n; i++) s += e[i] * x[i];
        {write}
    }}
    return s;
}}
"
        )
    };
    let j = jit(&format!(
        "static void twice(inout double[] v) {{ for (int i = 0; i < len(v); i++) v[i] = 2.0 * v[i]; }}\n{}{}{}",
        program("f", 1, ""),
        program("g", 2, "for (int i = 0; i < n; i++) e[i] = 2.0 * e[i];"),
        program("h", 2, "twice(e);"),
    ));
    let x = [0.5, -1.25, 2.0];
    for (name, k) in [("df", 1.0), ("dg", 3.0), ("dh", 3.0)] {
        let mut args = [
            ArgValue::Array(ArrayValue::F64(x.to_vec())),
            ArgValue::Array(ArrayValue::F64(vec![0.0; 3])),
            d(1.0),
        ];
        floats(&j, name, &mut args);
        let ArgValue::Array(ArrayValue::F64(dx)) = &args[1] else {
            panic!("shadow")
        };
        for (i, xi) in x.iter().enumerate() {
            let want = k * xi.exp() * (1.0 + xi);
            assert_close(dx[i], want, 1e-14, &format!("{name} d/dx{i}"));
        }
    }
}

/// Loops whose start is computed from the counters of the loops around
/// them: the reverse sweep computes the start again from those counters'
/// slots instead of reading it from the tape (`transpose`'s
/// `remade_start`); a start from data still comes off the tape. Reverse
/// mode against forward mode, coordinate by coordinate, and against
/// central differences.
#[test]
fn loop_starts_computed_again_in_the_reverse_sweep() {
    let body = "(double[] x, int m) {
    int n = len(x);
    double s = 0.0;
    for (int i = 0; i < n; i++) {
        for (int j = i + 1; j < n; j++) s += x[i] * x[j];
        for (int j = (i * (i + 1) / 2) % 3; j < n; j += 2) s += sin(x[j]) * x[i];
        for (int k = 0; k < i; k++) for (int j = i + k; j < n; j++) s += x[j] * x[k] * 0.5;
        int q = int(x[i] * 0.0) + m;
        for (int j = q; j < n; j++) s += x[j] * x[i] * x[i];
        for (int j = n - 1; j > i; j--) s += cos(x[j]) * x[i];
    }
    return s;
}";
    let j = jit(&format!(
        "[autodiff_reverse(rev, Duplicated, Const, ActiveOnly)]\ndouble f{body}
[autodiff_forward(fwd, Dual, Const, DualOnly)]\ndouble g{body}"
    ));
    let x = [0.3, -1.1, 0.7, 1.9, -0.4, 0.25];
    let n = x.len();
    let arr = |v: Vec<f64>| ArgValue::Array(ArrayValue::F64(v));
    let mut args = [
        arr(x.to_vec()),
        arr(vec![0.0; n]),
        ArgValue::Scalar(Constant::I64(1)),
        d(1.0),
    ];
    floats(&j, "rev", &mut args);
    let ArgValue::Array(ArrayValue::F64(grad)) = &args[1] else {
        panic!("shadow")
    };
    let grad = grad.clone();
    for k in 0..n {
        let mut e = vec![0.0; n];
        e[k] = 1.0;
        let t = floats(
            &j,
            "fwd",
            &mut [arr(x.to_vec()), arr(e), ArgValue::Scalar(Constant::I64(1))],
        );
        assert_close(
            grad[k],
            t[0],
            1e-13,
            &format!("reverse against forward, x{k}"),
        );
        let h = 1e-6;
        let at = |dx: f64| {
            let mut y = x.to_vec();
            y[k] += dx;
            floats(&j, "g", &mut [arr(y), ArgValue::Scalar(Constant::I64(1))])[0]
        };
        assert_close(
            grad[k],
            (at(h) - at(-h)) / (2.0 * h),
            1e-7,
            &format!("differences, x{k}"),
        );
    }
}

/// An element reference writes where the call it is passed to runs, after
/// the other arguments, which may branch and read the array: such an array
/// is not re-read by the reverse sweep (an independent review of fe78587
/// found the reverse sweep reading the overwritten element: gradients 3x
/// too large, and a segfault when the element was an index).
#[test]
fn element_reference_written_after_a_branching_argument() {
    let j = jit("void setv(inout double r, double v) { r = v; }
double sumsq(double[] a) { double s = 0.0; for (int i = 0; i < len(a); i++) { s += a[i] * a[i]; } return s; }
void set2(inout int r, inout double o, double v) { o = v; r = 100000000; }
[autodiff_reverse(df, Active, ActiveOnly)]
double f(double x) {
    double t[1];
    t[0] = x;
    setv(t[0], x > 0.0 ? t[0] * t[0] : 0.0);
    return t[0];
}
[autodiff_reverse(dg, Active, ActiveOnly)]
double g(double x) {
    double t[3];
    t[0] = x; t[1] = 2.0 * x; t[2] = 3.0;
    setv(t[0], sumsq(t));
    return t[0];
}
[autodiff_reverse(dh, Duplicated, Active, ActiveOnly)]
double h(double[] a, double x) {
    int idx[1];
    double s = 0.0;
    set2(idx[0], s, x > 0.0 ? a[idx[0]] * a[idx[0]] : x);
    return s;
}");
    // f = x^2, g = x^2 + 4x^2 + 9: 2x and 10x.
    assert_close(floats(&j, "df", &mut [d(3.0), d(1.0)])[0], 6.0, 1e-15, "df");
    assert_close(floats(&j, "dg", &mut [d(0.7), d(1.0)])[0], 7.0, 1e-14, "dg");
    let mut args = [
        ArgValue::Array(ArrayValue::F64(vec![2.0])),
        ArgValue::Array(ArrayValue::F64(vec![0.0])),
        d(0.5),
        d(1.0),
    ];
    let dx = floats(&j, "dh", &mut args);
    let ArgValue::Array(ArrayValue::F64(da)) = &args[1] else {
        panic!("shadow")
    };
    assert_eq!((da[0], dx[0]), (4.0, 0.0), "dh: a[0]^2");
}

/// `a[i]` and `a[i + 1]` are unchecked only because the stores to `t` (as
/// long as `a`) check the same indices first (`bce::Witnesses`). `carry`
/// once carried them anyway: it loads the first window in front of the
/// loop and the entering element at the top of the body, before `t[i + 1]`
/// is checked, and that load then counted as a witness for `t[i + 1]`,
/// whose check went: with `n > len(a)`, `t[len a]` was written out of
/// bounds and the error reported at the next line. Every trip count must
/// give the loop's result or the error at `t[i + 1]`.
#[test]
fn checks_that_unchecked_loads_rest_on_stay_in_front_of_them() {
    let src = "double f(double[] a, int n) {
    double t[len(a)];
    double s = 0.0;
    for (int i = 0; i < n; i++) {
        t[i + 1] = 2.0;
        t[i] = 2.0;
        s += a[i] + a[i + 1];
    }
    return s;
}";
    let j = adc::compile_jit("witness.ad", src, false).unwrap_or_else(|f| panic!("{f}"));
    for len in 1..9usize {
        let a: Vec<f64> = (0..len).map(|k| 1.0 + k as f64 * 0.5).collect();
        for n in 0..len as i64 + 4 {
            let mut args = [
                ArgValue::Array(ArrayValue::F64(a.clone())),
                ArgValue::Scalar(Constant::I64(n)),
            ];
            if n < len as i64 {
                let want: f64 = (0..n as usize).map(|i| a[i] + a[i + 1]).sum();
                assert_eq!(floats(&j, "f", &mut args), vec![want], "len {len}, n {n}");
            } else {
                match j.call("f", &mut args) {
                    Err(adc::CallError::Runtime(m)) => assert!(
                        m.starts_with("index out of bounds") && m.contains("witness.ad:5:"),
                        "len {len}, n {n}: {m}"
                    ),
                    other => panic!("len {len}, n {n}: {other:?}"),
                }
            }
        }
    }
}

/// `carry` loads the first window of a loop's array in front of the loop,
/// which is only sound when the loop's accesses are proven in bounds for
/// every iteration where they stand, not by a check earlier in the body.
/// Forward mode's tangent loads `dx[i]` are unchecked because the primal
/// `x[i]` just before them is checked: started far out of bounds, the
/// carried `dx[start]` was read before that check and the process died of
/// a segmentation fault (found in review, older than `bce::Witnesses`). The
/// primal with checked `t` in front of unchecked `a` is the same shape.
#[test]
fn loops_starting_far_out_of_bounds_stop_with_a_runtime_error() {
    let src = "[autodiff_forward(df, Dual, Const, Const, Dual)]
double f(double[] x, int start, int m) {
    double s = 0.0;
    for (int i = start; i < m; i++) s += x[i] * x[i + 1];
    return s;
}
double g(double[] a, int start, int m) {
    double t[len(a)];
    double s = 0.0;
    for (int i = start; i < m; i++) s += t[i] * a[i] + t[i + 1] * a[i + 1];
    return s;
}";
    let j = adc::compile_jit("far.ad", src, false).unwrap_or_else(|f| panic!("{f}"));
    let x = ArgValue::Array(ArrayValue::F64(vec![1.0, 2.0, 3.0, 4.0]));
    for start in [4i64, 1 << 20, 1_000_000_000_000, i64::MAX - 1] {
        let (s, m) = (
            ArgValue::Scalar(Constant::I64(start)),
            ArgValue::Scalar(Constant::I64(start + 1)),
        );
        for (name, mut args) in [
            ("f", vec![x.clone(), s.clone(), m.clone()]),
            ("df", vec![x.clone(), x.clone(), s.clone(), m.clone()]),
            ("g", vec![x.clone(), s.clone(), m.clone()]),
        ] {
            match j.call(name, &mut args) {
                Err(adc::CallError::Runtime(msg)) => {
                    assert!(
                        msg.starts_with("index out of bounds"),
                        "{name}({start}): {msg}"
                    )
                }
                other => panic!("{name}({start}): {other:?}"),
            }
        }
    }
}
