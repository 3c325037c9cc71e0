//! `adc-frontend`: `.ad` source to verified SSA IR.
//!
//! Pipeline: `lexer` (logos) -> `parse` (LALRPOP, with error recovery) ->
//! `lower` (name resolution, type checking and lowering in one walk over the
//! AST, which collects every diagnostic it can). Never panics on any input.

pub mod ast;
pub mod depth;
pub mod diag;
pub mod lexer;
pub mod parse;
mod repair;
pub mod suggest;

pub use depth::{with_deep_stack, MAX_DEPTH};
pub use diag::{render, Diagnostic, RenderConfig, Severity};
pub mod lower;

/// Parses and lowers a source text. Returns the module only when there is
/// no error; diagnostics are sorted by position. Runs on a thread of its
/// own with a deep stack (`with_deep_stack`); nesting deeper than
/// `MAX_DEPTH` is the error E0006.
pub fn compile_to_ir(source: &str) -> (Option<adc_ir::Module>, Vec<Diagnostic>) {
    with_deep_stack(|| compile_here(source))
}

fn compile_here(source: &str) -> (Option<adc_ir::Module>, Vec<Diagnostic>) {
    let (items, mut diags) = parse::parse_program(source);
    if let Some(d) = depth::check(&items) {
        // Dropping the tree recurses too, and `with_deep_stack` sized the
        // stack for `MAX_DEPTH` levels only: leak deeper trees.
        std::mem::forget(items);
        diags.push(d);
        diags.sort_by_key(|d| (d.span.start, d.span.end));
        return (None, diags);
    }
    // Semantic checks on a tree repaired by error recovery mostly report
    // follow-on errors, so syntax errors stop here.
    if !diags.is_empty() {
        return (None, diags);
    }
    let module = lower::lower_program(&items, &mut diags);
    diags.sort_by_key(|d| (d.span.start, d.span.end));
    let has_errors = diags.iter().any(|d| d.is_error());
    // Warnings about a program with errors are mostly about the errors.
    if has_errors {
        diags.retain(|d| d.is_error());
    }
    (if has_errors { None } else { module }, diags)
}
