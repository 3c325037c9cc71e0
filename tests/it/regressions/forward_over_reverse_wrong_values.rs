//! Forward over reverse gave wrong values on seed 108 of the
//! random-program tester's first campaign (2026-11-22), fixed by the
//! linearize tape and copy-expansion commits.

use super::seed_passes;

#[test]
fn forward_over_reverse_wrong_values_seed_108() {
    seed_passes(108);
}
