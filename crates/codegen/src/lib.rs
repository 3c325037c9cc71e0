//! `adc-codegen`: verified IR to machine code with Cranelift.
//!
//! `jit` compiles a module in memory and returns a `JitModule` whose
//! functions the host calls with checked arguments (`JitModule::call`) or
//! through raw C-ABI pointers; `object` writes a relocatable object file for
//! `adc compile`; `c_header` writes its declarations. The input must have
//! passed `adc_ir::verify`: codegen trusts the verifier and reports only
//! resource or symbol-resolution failures.
//!
//! This is the only crate with `unsafe`: calling JIT-compiled code.
//!
//! Dependencies point one way: the entry points `jit` (`jit/mod.rs`) and
//! `object` (`object/mod.rs`) use `compile.rs` (a module's functions, in
//! order), which uses `wrappers.rs` (exported symbols and JIT entries),
//! `translate/` (each function's body) and, for object files, the helpers
//! they carry (`object/print.rs`, `object/tape_spare.rs`); `translate/`
//! uses none of them (a test below checks).

mod compile;
mod jit;
mod object;
mod translate;
mod wrappers;

pub use compile::host_has_fma;
pub use jit::{
    jit, jit_reached, kind_of, Arg, ArgValue, Args, ArrayValue, CallError, JitFunction, JitModule,
    ParamKind, Ret, Rets, TypedFunc,
};
pub use object::header::c_header;
pub use object::object;
pub use translate::c_abi::tuple_layout;

use adc_ir::Span;
use std::fmt;

/// Why code generation failed.
///
/// ```
/// let ir = adc_ir::parse_module("extern @no_such_symbol(x: f64) -> f64").unwrap();
/// match adc_codegen::jit(&ir, &|_| String::new(), &[]) {
///     Err(e @ adc_codegen::CodegenError::Unresolved(_)) => {
///         assert_eq!(e.to_string(), "unresolved external function `no_such_symbol`")
///     }
///     Err(e) => panic!("{e}"),
///     Ok(_) => panic!("resolved"),
/// }
/// ```
#[derive(Debug)]
pub enum CodegenError {
    /// An `extern` function that neither the C library nor the host provides.
    Unresolved(String),
    /// Cranelift failed (an internal error, or no memory).
    Backend(String),
}

impl fmt::Display for CodegenError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CodegenError::Unresolved(name) => write!(f, "unresolved external function `{name}`"),
            CodegenError::Backend(msg) => write!(f, "code generation failed: {msg}"),
        }
    }
}

impl std::error::Error for CodegenError {}

impl From<cranelift_module::ModuleError> for CodegenError {
    fn from(e: cranelift_module::ModuleError) -> Self {
        CodegenError::Backend(e.to_string())
    }
}

/// Where each runtime check reports from: maps a span to `file:line:col`.
///
/// ```
/// let locate: adc_codegen::Locate<'_> = &|span| format!("f.ad:{}", span.start);
/// assert_eq!(locate(adc_ir::Span::new(3, 4)), "f.ad:3");
/// ```
pub type Locate<'a> = &'a dyn Fn(Span) -> String;

#[cfg(test)]
mod tests {
    /// Nothing under `src/translate` names a module of the crate outside
    /// it: only `crate::translate` and `crate::CodegenError`.
    #[test]
    fn translate_uses_nothing_outside_it() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src/translate");
        let mut stack = vec![dir];
        let mut files = 0;
        while let Some(dir) = stack.pop() {
            for entry in std::fs::read_dir(&dir).expect("src/translate is readable") {
                let path = entry.expect("a directory entry").path();
                if path.is_dir() {
                    stack.push(path);
                    continue;
                }
                files += 1;
                let text = std::fs::read_to_string(&path).expect("a readable source file");
                for (n, line) in text.lines().enumerate() {
                    for (at, _) in line.match_indices("crate::") {
                        let rest = &line[at + "crate::".len()..];
                        let ok = ["translate", "CodegenError"].iter().any(|m| {
                            rest.strip_prefix(m).is_some_and(|r| {
                                !r.starts_with(|c: char| c.is_alphanumeric() || c == '_')
                            })
                        });
                        assert!(ok, "{}:{}: {line}", path.display(), n + 1);
                    }
                }
            }
        }
        assert!(files > 10, "found only {files} files under src/translate");
    }
}
