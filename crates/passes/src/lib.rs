//! `adc-passes`: IR-to-IR passes, in two families. One pass per file (or
//! folder), each with one entry point; every pass keeps a verified function
//! verified, and tests check that with `adc_ir::verify` after each pass.
//!
//! - `ad`: the derivative passes (`linearize`, `propagate`, `lower-pairs`,
//!   `unzip`, `transpose`). They work on a whole module and
//!   are driven by `ad::differentiate`.
//! - `opt`: the optimisations, each `pub fn run(func: &mut Function) ->
//!   bool` (true when it changed something), but `inline` and `fast-path`,
//!   which also read the module; `opt::optimize` is the `opt` stage.
//!
//! Dependencies point one way: `ad` uses `opt` (`inline` on the source it
//! differentiates, the fixed point after it), `opt` never uses `ad` (a
//! test in `registry` checks). `registry` names every pass of both, for
//! the filetests. Shared by both families: `loops` (natural, counted and
//! stepped loops), `cfg` (edges, orders, cycles), `defs` (what defines a
//! value), `predicates` (what may move or go), `rewrite` (substituting,
//! removing, appending and copying instructions) and `callgraph` (which
//! functions are recursive, for `inline`).

pub mod ad;
mod alias;
pub mod callgraph;
mod cfg;
mod defs;
mod loops;
pub mod opt;
mod predicates;
mod read_only;
pub mod registry;
mod rewrite;

pub use opt::{
    contract_module, optimize, optimize_except, optimize_function, FuncPass, LATE_PASSES,
    LOOP_SHAPE_PASSES, PASSES,
};
pub use registry::{find_pass, run_pass, Pass};
