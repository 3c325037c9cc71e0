//! `adc-passes`: IR-to-IR passes, in two families. One pass per file (or
//! folder), each with one entry point; every pass keeps a verified function
//! verified, and tests check that with `adc_ir::verify` after each pass.
//!
//! - `ad`: the derivative passes (`inline` on the source, `linearize`,
//!   `propagate`, `lower-pairs` in `pairs`, `unzip`, `transpose`). They work
//!   on a whole module and are driven by `ad::differentiate`.
//! - `opt`: the optimisations, each `pub fn run(func: &mut Function) ->
//!   bool` (true when it changed something); `opt::optimize` is the `opt`
//!   stage.
//!
//! `loops` and `util` are shared by both families.

pub mod ad;
mod loops;
pub mod opt;
mod util;

pub use opt::{
    find_pass, optimize, optimize_except, optimize_function, FuncPass, LATE_PASSES,
    LOOP_SHAPE_PASSES, PASSES,
};
