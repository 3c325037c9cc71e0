//! The GradBench tool's tests, one test binary: its protocol sessions
//! (`protocol`) and the `ba` and `ht` evals against direct implementations
//! of their specifications.

mod common;

mod ba;
mod ht;
mod protocol;
