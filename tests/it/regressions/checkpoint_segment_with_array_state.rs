use super::{compiles, seed_passes};

/// Campaigns of 5862468 and 7e86e8a (seeds 250015026 shrunk, 250020201,
/// 260002954; also at 9204b47): a `[checkpoint(1)]` loop whose body
/// declares a local array and `break`s on some iterations. The exit edge
/// passed the (always null) array made before the loop, and the segment
/// returned it: `transpose` gave that array result an adjoint slot of
/// array type (`diff const -0.0: arr<f64>`), and codegen panicked. A
/// segment now returns only the exit arguments its loop defines.
#[test]
fn checkpoint_segment_with_array_state() {
    compiles(include_str!("checkpoint_segment_with_array_state.ad"));
    seed_passes(250015026);
    seed_passes(250020201);
    seed_passes(260002954);
}
