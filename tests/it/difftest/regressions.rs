//! Reproducers of bugs the random-program tester found, once ignored until
//! are fixed (issue 10). All of them involve second derivatives (every
//! failure of the first campaign was on a seed with the second-order
//! oracle). Un-ignore a test when its bug is fixed.

use super::{oracle, run_seed};

fn compiles(src: &str) {
    oracle::quiet_panics();
    let src = src.to_string();
    let r = std::thread::Builder::new()
        .name("difftest-regression".into())
        .spawn(move || {
            std::panic::catch_unwind(|| adc::compile_jit("repro.ad", &src, false).map(|_| ()))
        })
        .unwrap()
        .join()
        .unwrap();
    match r {
        Ok(Ok(())) => (),
        Ok(Err(e)) => panic!("does not compile:\n{e}"),
        Err(_) => panic!("the compiler panicked"),
    }
}

fn seed_passes(seed: u64) {
    oracle::quiet_panics();
    let o = std::thread::Builder::new()
        .name("difftest-regression".into())
        .stack_size(256 << 20)
        .spawn(move || run_seed(seed).3)
        .unwrap()
        .join()
        .unwrap();
    assert!(o.oracle().is_none(), "seed {seed}: {o:?}");
}

#[test]
fn reverse_over_reverse_local_array() {
    compiles(include_str!("repro/rr_local_array_load.ad"));
}

#[test]
fn reverse_over_reverse_local_array_in_loop() {
    compiles(include_str!("repro/rr_local_array_in_loop.ad"));
}

#[test]
fn codegen_panic_translate_555() {
    compiles(include_str!("repro/codegen_panic_translate_555.ad"));
}

#[test]
fn forward_over_reverse_wrong_values_seed_108() {
    seed_passes(108);
}

/// Running this kills the test process (SIGSEGV in generated code).
#[test]
fn forward_over_reverse_crash_seed_9() {
    seed_passes(9);
}

/// Running this never returns.
#[test]
fn forward_over_reverse_hang_seed_42() {
    seed_passes(42);
}

/// An ill-conditioned program (its rounding error 1e-10 relative, from
/// erf(cos(3 r)) iterated sixty times): the interpreter's `erf` from the
/// `libm` crate and the C library's differ in the last bit, and the
/// interpreter disagreed with the JIT by 1e-3 (the interpreter now calls
/// the C library's `erf`, `erfc` and `lgamma`; a 2026-11-25 campaign's
/// only finding, also at 9204b47).
#[test]
fn interpreter_uses_the_c_librarys_erf() {
    seed_passes(170_012_011);
}

/// Campaign of f263ab6, seed 240006378 (shrunk): reverse over forward of a
/// function whose forward derivative's results feed nothing that needs a
/// derivative; `needless` kept the `__adc_jvp_` call primal and `unzip`
/// panicked (the review's N1, same root).
#[test]
fn needless_kept_a_forward_derivative_call_primal() {
    compiles(include_str!("repro/needless_jvp_call_seed_240006378.ad"));
    seed_passes(240006378);
}

/// Campaigns of 5862468 and 7e86e8a (seeds 250015026 shrunk, 250020201,
/// 260002954; also at 9204b47): a `[checkpoint(1)]` loop whose body
/// declares a local array and `break`s on some iterations. The exit edge
/// passed the (always null) array made before the loop, and the segment
/// returned it: `transpose` gave that array result an adjoint slot of
/// array type (`diff const -0.0: arr<f64>`), and codegen panicked. A
/// segment now returns only the exit arguments its loop defines.
#[test]
fn checkpoint_segment_with_array_state() {
    compiles(include_str!("repro/ckpt_array_state_seed_250015026.ad"));
    seed_passes(250015026);
    seed_passes(250020201);
    seed_passes(260002954);
}

/// Campaign of b5a682d (seeds 320000388, 320002401 and six more in the
/// first 8,500 programs; the generator's `pair2` case): reverse over
/// reverse disagreed with the other three second-order compositions when
/// overlapping views of one local array reach two read-only parameters of
/// a checkpointed callee and `f` branches before and after the call.
/// `unzip` taped each view of the shadow array as an array of its own,
/// so `transpose` saw two unrelated shadows and passed them both to the
/// callee's reverse derivative, which assumes they do not overlap. The
/// differential part now recomputes a view from its taped array.
#[test]
fn reverse_over_reverse_shared_read_only_views() {
    compiles(include_str!(
        "repro/rr_shared_readonly_views_seed_320000388.ad"
    ));
    compiles(include_str!("repro/rr_shared_readonly_views_min.ad"));
    seed_passes(320000388);
    seed_passes(320002401);
}

/// The same bug shrunk further: reverse over reverse against forward over
/// reverse and central differences of `gr`, at x = -1, y = 0.7.
#[test]
fn reverse_over_reverse_views_of_one_shadow_share_its_root() {
    use adc::{ArgValue, Constant};
    let src = include_str!("repro/rr_shared_readonly_views_small.ad");
    let j = adc::compile_jit("small.ad", src, false).expect("compiles");
    let num = |name: &str, args: &mut [ArgValue]| -> Vec<f64> {
        let out = j.call(name, args).expect("runs");
        out.iter()
            .map(|c| match c {
                Constant::F64(v) => *v,
                other => panic!("{name} returned {other:?}"),
            })
            .collect()
    };
    let s = |v: f64| ArgValue::Scalar(Constant::F64(v));
    let (x, y) = (-1.0, 0.7);
    let rr = num("h_rr", &mut [s(x), s(y), s(1.0)]);
    let fr_x = num("h_fr", &mut [s(x), s(1.0), s(y), s(0.0)]);
    let fr_y = num("h_fr", &mut [s(x), s(0.0), s(y), s(1.0)]);
    let h = 1e-5;
    let gr = |x: f64, y: f64| num("gr", &mut [s(x), s(y)])[0];
    let fd_x = (gr(x + h, y) - gr(x - h, y)) / (2.0 * h);
    let fd_y = (gr(x, y + h) - gr(x, y - h)) / (2.0 * h);
    for (what, rev, fwd, fd) in [("x", rr[1], fr_x[1], fd_x), ("y", rr[2], fr_y[1], fd_y)] {
        assert!(
            (rev - fwd).abs() <= 1e-12 * (1.0 + fwd.abs()),
            "d/d{what}: reverse over reverse {rev}, forward over reverse {fwd}"
        );
        assert!(
            (rev - fd).abs() <= 1e-6 * (1.0 + fd.abs()),
            "d/d{what}: reverse over reverse {rev}, central differences {fd}"
        );
    }
}

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
    let src = include_str!("repro/stack_array_two_edges_seed_610001418.ad");
    let j = adc::compile_jit("repro.ad", src, false).expect("the repro compiles");
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

/// Difftest seeds 650,002,105 and 650,003,401 (the campaign of 26a0e55):
/// `licm` made a constant view of a local array (`t11[1..2]`, passed to a
/// helper) before a `[checkpoint(2)]` loop that writes the array; the
/// checkpointed reverse sweep restores the array, and the view made
/// before the loop still showed the one it replaced: a wrong gradient
/// (`rev_vs_fwd`). Views no longer leave checkpointed loops; `tests/checkpoint.rs`'s
/// `view_of_written_local` is the reduced shape.
#[test]
fn view_hoisted_out_of_a_checkpointed_loop() {
    seed_passes(650002105);
    // `h6(t9[1..], ..)` in a `[checkpoint(3)]` loop that writes `t9`.
    seed_passes(650003401);
}

/// Difftest seed 700,000,134 (the campaign of 4b1fd90) hung compiling:
/// `zero-skip`'s fixed point over a loop of `__adc_jvp___adc_seg1_gf`, two
/// parameters that swap values on the back edge, traded zero-facts forever
/// (`Select`'s rule is not monotone, and each round recomputed a
/// parameter's facts from nothing). The loop had been out of the pass's
/// reach while it held checked loads, which `bce`'s `Witnesses` dropped.
/// Facts now only grow, each capped at `MAX_GUARD` values.
#[test]
fn zero_skip_facts_of_swapping_parameters_settle() {
    seed_passes(700000134);
}
