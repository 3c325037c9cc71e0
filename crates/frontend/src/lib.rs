//! `adc-frontend`: `.ad` source to verified SSA IR.
//!
//! Pipeline: `lexer` (logos) -> `parse` (LALRPOP, with error recovery) ->
//! `lower` (name resolution, type checking and lowering in one walk over the
//! AST, which collects every diagnostic it can). Never panics on any input.

pub mod ast;
pub mod depth;
pub mod diag;
mod generated_names;
pub mod hessian;
pub mod jacobian;
pub mod lexer;
pub mod parse;
mod repair;
pub mod suggest;

pub use depth::{with_deep_stack, MAX_DEPTH};
pub use diag::{render, Diagnostic, RenderConfig, Severity};
pub mod lower;

/// A source that compiled: its module and its warnings (W0001, sorted by
/// position).
#[derive(Debug)]
pub struct Compiled {
    pub module: adc_ir::Module,
    pub warnings: Vec<Diagnostic>,
}

/// Parses and lowers a source text: the module and its warnings, or the
/// errors (sorted by position; warnings about a program with errors are
/// left out, being mostly about the errors). Runs on a thread of its own
/// with a deep stack (`with_deep_stack`); nesting deeper than `MAX_DEPTH`
/// is the error E0006.
pub fn compile_to_ir(source: &str) -> Result<Compiled, Vec<Diagnostic>> {
    with_deep_stack(|| compile_here(source))
}

fn compile_here(source: &str) -> Result<Compiled, Vec<Diagnostic>> {
    let (mut items, mut diags) = parse::parse_program(source);
    if let Some(d) = depth::check(&items) {
        // Dropping the tree recurses too, and `with_deep_stack` sized the
        // stack for `MAX_DEPTH` levels only: leak deeper trees.
        std::mem::forget(items);
        diags.push(d);
        diags.sort_by_key(|d| (d.span.start, d.span.end));
        return Err(diags);
    }
    // Semantic checks on a tree repaired by error recovery mostly report
    // follow-on errors, so syntax errors stop here.
    if !diags.is_empty() {
        return Err(diags);
    }
    // Hessians expand to `[jacobian]` attributes, expanded next.
    let before = generated_names::defined_names(&items);
    let requested = generated_names::requested(&items);
    let (extra, mut generated) = hessian::expand(&mut items, &mut diags);
    items.extend(extra);
    let (extra, more) = jacobian::expand(&mut items, &mut diags);
    items.extend(extra);
    generated.extend(more);
    let clashes = generated_names::clashes(&before, &items, &generated);
    if !clashes.is_empty() {
        // Lowering would report the clash at the generated source's
        // meaningless spans, then errors about its calls.
        diags.extend(clashes);
        diags.retain(|d| d.is_error());
        diags.sort_by_key(|d| (d.span.start, d.span.end));
        return Err(diags);
    }
    let generated_names = generated.iter().map(|g| g.name.as_str()).collect();
    let rejected = generated_names::rejected(&requested, &items);
    let mut module = lower::lower_program(&items, &generated_names, rejected, &mut diags);
    if let Some(m) = module.as_mut() {
        jacobian::point_at_attributes(m, &generated);
        // The expansions' helpers (`J__columns`, `H__gw`, the derivatives
        // their attributes ask for, ...) are internal: of what they add,
        // only the requested `NAME` and `NAME_nnz` are exported.
        generated_names::make_helpers_static(&before, &requested, m);
    }
    diags.sort_by_key(|d| (d.span.start, d.span.end));
    match module {
        Some(module) if !diags.iter().any(|d| d.is_error()) => Ok(Compiled {
            module,
            warnings: diags,
        }),
        _ => {
            if diags.iter().any(|d| d.is_error()) {
                diags.retain(|d| d.is_error());
            }
            Err(diags)
        }
    }
}
