//! Code generation panicked (then at `translate.rs:555`, a file since split
//! into `crates/codegen/src/translate/`) on a program of
//! the random-program tester's first campaign (2026-11-22), fixed by the
//! linearize tape and copy-expansion commits.

use super::compiles;

#[test]
fn codegen_panic_translate_555() {
    compiles(include_str!("codegen_panic_in_translate.ad"));
}
