use super::seed_passes;

/// Difftest seeds 650,002,105 and 650,003,401 (the campaign of 26a0e55):
/// `licm` made a constant view of a local array (`t11[1..2]`, passed to a
/// helper) before a `[checkpoint(2)]` loop that writes the array; the
/// checkpointed reverse sweep restores the array, and the view made
/// before the loop still showed the one it replaced: a wrong gradient
/// (`rev_vs_fwd`). Views no longer leave checkpointed loops; `tests/it/checkpoint.rs`'s
/// `view_of_written_local` is the reduced shape.
#[test]
fn view_hoisted_out_of_a_checkpointed_loop() {
    seed_passes(650002105);
    // `h6(t9[1..], ..)` in a `[checkpoint(3)]` loop that writes `t9`.
    seed_passes(650003401);
}
