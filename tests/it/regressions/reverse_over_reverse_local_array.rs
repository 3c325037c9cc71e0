//! Reverse over reverse of functions with a local array was refused
//! (E0999) on seeds of the random-program tester's first campaign
//! (2026-11-22), fixed by the linearize tape and copy-expansion commits.

use super::compiles;

#[test]
fn reverse_over_reverse_local_array() {
    compiles(include_str!("reverse_over_reverse_local_array_load.ad"));
}

#[test]
fn reverse_over_reverse_local_array_in_loop() {
    compiles(include_str!("reverse_over_reverse_local_array_in_loop.ad"));
}
