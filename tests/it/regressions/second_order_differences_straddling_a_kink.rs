//! Seed 6014913, a `float` program (the campaign of 2026-12-01): its four
//! second-order derivatives agreed (-1.2635 along (1, 0.3) of
//! `df/dx + 0.5 df/dy`), but the oracle's central differences of the
//! gradient, at steps 1e-2 and 3.2e-3 (`float`'s), gave -1.3235 and
//! -1.3230. The gradient has a kink (the `abs` in `ew`) 1.5e-3 to 2e-3
//! from x: the same program in `double` gives -1.3268 at step 3.2e-3,
//! -1.3607 at 2e-3, and the derivatives' -1.26724 at every step from
//! 1.5e-3 to 1e-6 (`adc run --grad` at x +- h). Not a compiler bug: the
//! oracle now takes a third, smaller step before it fails (and skips the
//! comparison when that step disagrees with both the derivative and the
//! second step).

#[test]
fn second_order_differences_straddling_a_kink() {
    super::seed_as_drawn_passes(6014913);
}
