use super::seed_passes;

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
