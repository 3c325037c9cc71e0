//! `adc-frontend`: `.ad` source to verified SSA IR.
//!
//! Pipeline: `lexer` (logos) -> `parse` (LALRPOP, with error recovery) ->
//! `lower` (name resolution, type checking and lowering in one walk over the
//! AST, which collects every diagnostic it can). Never panics on any input.

pub mod ast;
pub mod diag;
pub mod lexer;
pub mod parse;

pub use diag::{render, Diagnostic, RenderConfig, Severity};
pub mod lower;

/// Parses and lowers a source text. Returns the module only when there is
/// no error; diagnostics are sorted by position.
pub fn compile_to_ir(source: &str) -> (Option<adc_ir::Module>, Vec<Diagnostic>) {
    let (items, mut diags) = parse::parse_program(source);
    // Semantic checks on a tree repaired by error recovery mostly report
    // follow-on errors, so syntax errors stop here.
    if !diags.is_empty() {
        return (None, diags);
    }
    let module = lower::lower_program(&items, &mut diags);
    diags.sort_by_key(|d| (d.span.start, d.span.end));
    let has_errors = diags.iter().any(|d| d.is_error());
    (if has_errors { None } else { module }, diags)
}
