//! `adc`: the compiler driver (this library) and the `adc` binary.
//!
//! The pipeline as plain functions: `frontend` (source to verified IR),
//! `run_stages` (IR passes up to a stage), `jit`, `object`. The binary and
//! the tests call the same functions. This is the only crate that does file
//! IO or prints.
//!
//! ```
//! let source = "double norm2(double[] xs) { double s = 0.0; for (int i = 0; i < len(xs); i++) s += xs[i] * xs[i]; return s; }";
//! let jit = adc::compile_jit("inline.ad", source, false).expect("compiles");
//! let mut args = [adc::ArgValue::Array(adc::ArrayValue::F64(vec![3.0, 4.0]))];
//! let result = jit.call("norm2", &mut args).expect("runs");
//! assert_eq!(result, vec![adc::Constant::F64(25.0)]);
//! ```

pub mod derivs;
pub mod driver;
pub mod host;
pub mod json;
pub mod request;
pub mod tape;
pub mod user_ir;

pub use adc_codegen::{
    Arg, ArgValue, Args, ArrayValue, CallError, JitFunction, JitModule, ParamKind, Ret, Rets,
    TypedFunc,
};
pub use adc_frontend::{Diagnostic, Severity};
pub use adc_ir::{Activity, AdMode, Constant, ScalarType, Span, Type};
pub use driver::{compile_jit, Failure, Stage};
pub use host::{CParam, HostFn, HostFunctions, HostParam, HostResult, HostScalar};
pub use request::{compile_jit_with, compile_jit_with_host, Derivative};

/// The Rust examples of `docs/embedding.md`, run as doctests (the other
/// blocks' `file=NAME` info strings are for `tests/docs.rs`).
#[cfg(doctest)]
#[allow(rustdoc::invalid_codeblock_attributes)]
#[doc = include_str!("../../../docs/embedding.md")]
pub struct EmbeddingDocs;
