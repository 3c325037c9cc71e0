//! The workspace's integration tests, one test binary (`cargo test --test
//! it`): each module was a binary of its own, and each linked the whole
//! compiler. `cargo test --test it MODULE::` runs one module.

/// glibc's malloc and free took a fifth of a difftest campaign's CPU
/// time (the compiler allocates small vectors freely); mimalloc's take
/// less. The compiler itself keeps the system allocator.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

mod support;

mod addressing;
mod band_pattern;
mod band_review;
mod bounds;
mod campaign;
mod carry;
mod checkpoint;
mod contract;
mod derivatives;
mod diagnostics;
mod difftest;
mod editors;
mod examples;
mod fast_path;
mod generated_jacobians;
mod gradients;
mod hessian;
mod ir_filetests;
mod jacobian;
mod jacobian_conformance;
mod jacobian_modes;
mod jam;
mod lanes;
mod long_expressions;
mod loop_bounds;
mod nested;
mod promote;
mod regressions;
mod row_loops;
mod shared_sweeps;
mod simd;
mod sincos;
mod sparse_element_paths;
mod sparse_element_plans;
mod sparse_element_static;
mod sparse_elements;
mod sparse_float;
mod sparse_hessian;
mod sparse_jacobian;
mod sparse_rows;
mod split;
mod stack_arrays;
mod star_coloring;
mod tape_promote;
mod tape_reserve;
mod uninit_arrays;
mod vector;
mod version;
mod views;
