//! The library's tests, one test binary: the activity rules shared by
//! source, Rust and textual IR (`activities`), host functions and custom
//! derivatives (`host`), typed handles (`typed`), and JIT memory under
//! other threads' mappings (`jit_memory`).

mod activities;
mod host;
mod jit_memory;
mod typed;
