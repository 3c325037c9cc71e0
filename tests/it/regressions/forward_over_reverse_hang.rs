//! Forward over reverse never returned on seed 42 of the random-program
//! tester's first campaign (2026-11-22), fixed by the linearize tape and
//! copy-expansion commits.

use super::seed_passes;

/// Running this never returned.
#[test]
fn forward_over_reverse_hang_seed_42() {
    seed_passes(42);
}
