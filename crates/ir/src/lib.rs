//! `adc-ir`: the SSA intermediate representation of adc.
//!
//! Functions are control-flow graphs of basic blocks with block parameters
//! (no phis), as in Cranelift. Entities are dense ids into per-function
//! tables (`entity`). The textual form (`print`, `parse`) round-trips and is
//! the interface for pass tests; `verify` is the trust boundary; `interp` is
//! a reference interpreter used to cross-check the JIT.
//!
//! This crate depends on none of adc's other crates.

pub mod ad;
pub mod dom;
pub mod entity;
pub mod function;
pub mod inst;
pub mod interp;
pub mod offset;
pub mod parse;
pub mod print;
pub mod scc;
pub mod types;
pub mod verify;

pub use ad::{Activity, AdMode, DerivSpec, Tag};
pub use entity::{Block, FuncId, Inst, Span, Value};
pub use function::{
    BlockData, DataFlowGraph, Function, Linkage, Module, Param, ParamMode, ValueDef,
};
pub use inst::{BinaryOp, BlockCall, CmpCond, Constant, InstData, LenCheckOf, MathFunc, UnaryOp};
pub use parse::{parse_module, ParseError};
pub use types::{ScalarType, Type};
pub use verify::{verify, VerifierError, VerifierErrors};
