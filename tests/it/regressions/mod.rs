//! Regression tests: programs that once gave wrong derivatives, crashed
//! or hung the compiler, or were refused though valid, one file per bug
//! (named after the bug; a reproducer too long to inline is the `.ad` file
//! of the same name beside it). They come from the random-program tester
//! (`difftest`, whose seeds are checked by `seed_passes`), the fuzzer,
//! independent testers, a conformance reading of `docs/` (2026-11-26) and
//! reviews; each doc comment says what went wrong and what the fix was.
//!
//! A new bug gets a new file here and a `mod` line below.

use crate::difftest::{oracle, run_seed, run_seed_as_double};

mod a_parenthesised_return_type_is_that_type;
mod c_lexical_habits;
mod calls_of_a_rejected_jacobian_report_nothing_more;
mod checkpoint_segment_with_array_state;
mod checkpointed_call_with_an_inout_scalar_reads_a_zeroed_shadow;
mod checkpointed_inner_loop_declaring_a_local_array;
mod checkpointed_loops_whose_arrays_outlive_an_iteration;
mod checks_that_unchecked_loads_rest_on_stay_in_front_of_them;
mod codegen_panic_in_translate;
mod custom_derivative_of_the_differentiated_function_itself;
mod custom_forward_derivative_of_a_function_that_writes_its_argument;
mod declarations_inside_branches_and_after_them;
mod derivative_of_a_division_by_a_subnormal_is_finite;
mod element_reference_written_after_a_branching_argument;
mod externs_whose_results_need_no_derivative;
mod fixed_point_iteration_copied_into_a_result;
mod float_operands_meet_double_literals_in_double;
mod fmod_partial_uses_fmods_own_quotient;
mod forward_over_reverse_hang;
mod forward_over_reverse_of_a_loop_with_a_branch;
mod forward_over_reverse_wrong_values;
mod function_named_like_a_jacobians_helper;
mod inlining_a_doubling_call_chain_stays_bounded;
mod inlining_a_long_call_chain_takes_linear_time;
mod interpreter_uses_the_c_librarys_erf;
mod jacobian_by_rows_through_a_split_callee;
mod literal_arms_of_a_conditional_take_the_float_type;
mod local_array_read_again_in_the_reverse_sweep;
mod loop_starts_computed_again_in_the_reverse_sweep;
mod loop_that_keeps_its_last_residual;
mod loop_that_overwrites_a_variable_without_reading_it;
mod loops_starting_far_out_of_bounds_stop_with_a_runtime_error;
mod loops_with_huge_bounds_or_steps;
mod math_externs_and_custom_derivatives_are_checked;
mod math_functions_with_c_int_in_their_signature;
mod min_and_max_ignore_nan;
mod missing_closing_brace_before_the_next_function;
mod needless_kept_a_forward_derivative_call_primal;
mod one_array_passed_to_two_read_only_parameters_of_a_call;
mod returns_inside_infinite_loops_are_the_only_exits;
mod reverse_of_two_calls_of_a_checkpointed_function;
mod reverse_over_reverse_local_array;
mod reverse_over_reverse_of_a_loop;
mod reverse_over_reverse_shared_read_only_views;
mod reverse_over_reverse_through_a_branch_and_an_array;
mod second_order_differences_straddling_a_kink;
mod second_order_through_a_taped_zero_tangent;
mod sparse_sweep_keeps_the_check_of_an_output_store_it_drops;
mod split_callee_passing_a_local_to_a_checkpointed_function_in_a_loop;
mod split_mode_callee_reading_its_inout_array_in_a_loop;
mod stack_array_passed_to_a_heap_parameter_on_another_edge;
mod thousands_of_calls_of_a_helper_under_reverse_mode;
mod vector_reverse_seed_of_the_wrong_length_has_a_place;
mod view_hoisted_out_of_a_checkpointed_loop;
mod zero_skip_facts_of_swapping_parameters_settle;
mod zero_skip_keeps_a_loop_that_writes_back_an_earlier_load;

/// `src` compiles (a panic of the compiler fails the test with a short
/// message; the test thread's panic output is quiet).
fn compiles(src: &str) {
    oracle::quiet_panics();
    let src = src.to_string();
    let r = std::thread::Builder::new()
        .name("difftest-regression".into())
        .spawn(move || {
            std::panic::catch_unwind(|| {
                adc::compile_jit("repro.ad", &src, &adc::CompileOptions::default()).map(|_| ())
            })
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

/// The random-program tester's program of `seed` passes every oracle
/// (the `double` program the seed was recorded with).
fn seed_passes(seed: u64) {
    passes(seed, run_seed_as_double);
}

/// The random-program tester's program of `seed` as it draws it now
/// (`float` or `double`, its widths) passes every oracle.
fn seed_as_drawn_passes(seed: u64) {
    passes(seed, |seed| run_seed(seed).3);
}

/// `run(seed)`, on a thread with the tester's stack, finds no failure.
fn passes(seed: u64, run: fn(u64) -> oracle::Outcome) {
    oracle::quiet_panics();
    let o = std::thread::Builder::new()
        .name("difftest-regression".into())
        .stack_size(256 << 20)
        .spawn(move || run(seed))
        .unwrap()
        .join()
        .unwrap();
    assert!(o.oracle().is_none(), "seed {seed}: {o:?}");
}
