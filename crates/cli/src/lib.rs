//! `adc`: the compiler driver (this library) and the `adc` binary.
//!
//! The pipeline as plain functions: `frontend` (source to verified IR),
//! `run_stages` (IR passes up to a stage), `jit`, `object`. The binary and
//! the tests call the same functions. This is the only crate that does file
//! IO or prints.

pub mod driver;
pub mod json;

pub use adc_codegen::{ArgValue, ArrayValue, CallError, JitModule};
pub use driver::{compile_jit, Failure, Stage};
