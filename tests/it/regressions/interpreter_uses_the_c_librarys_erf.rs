use super::seed_passes;

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
