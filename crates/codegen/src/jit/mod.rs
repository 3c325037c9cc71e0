//! The JIT: a module compiled in memory (`jit`), the host side linked into
//! it (`host.rs`), the `JitModule` its functions are called through
//! (`module.rs`), and typed handles on them (`typed.rs`).

mod host;
mod module;
mod signature;
mod typed;

pub use module::{ArgValue, ArrayValue, CallError, JitFunction, JitModule};
pub use typed::{kind_of, Arg, Args, ParamKind, Ret, Rets, TypedFunc};

use crate::compile::{build, isa};
use crate::{CodegenError, Locate};
use std::collections::BTreeMap;

/// One address-space reservation for all of a JIT module's code and data.
/// Code reaches its module's functions and constants through 32-bit
/// PC-relative offsets; cranelift-jit's default provider maps each piece
/// separately, so a large mapping made by another thread between two of
/// them (a big array, a tape) could put them more than 2 GiB apart, and
/// finalizing panicked ("out of range"). The reservation is
/// address space only (pages are committed as they are used): 256 bytes
/// per IR instruction, at least 32 MiB, at most 1 GiB.
fn jit_arena(ir: &adc_ir::Module) -> Result<cranelift_jit::ArenaMemoryProvider, CodegenError> {
    let insts: usize = ir
        .funcs
        .iter()
        .flat_map(|f| f.layout.iter().map(|b| f.dfg.block(*b).insts.len()))
        .sum();
    let size = insts.saturating_mul(256).clamp(32 << 20, 1 << 30);
    cranelift_jit::ArenaMemoryProvider::new_with_size(size)
        .map_err(|e| CodegenError::Backend(format!("cannot reserve JIT memory: {e}")))
}

/// Compiles a verified module in memory. `host` adds symbols for `extern`
/// functions beyond the C library's.
///
/// ```
/// let ir = adc_ir::parse_module("func @twice(x: f64) -> f64 {
/// block0(v0: f64):
///     v1: f64 = add v0, v0
///     return v1
/// }").unwrap();
/// adc_ir::verify(&ir).unwrap();
/// let jit = adc_codegen::jit(&ir, &|_| String::new(), &[]).unwrap();
/// let twice: adc_codegen::TypedFunc<(f64,), f64> = jit.typed("twice").unwrap();
/// assert_eq!(twice.call((1.5,)), Ok(3.0));
/// ```
pub fn jit(
    ir: &adc_ir::Module,
    locate: Locate<'_>,
    host: &[(String, *const u8)],
) -> Result<JitModule, CodegenError> {
    jit_with(ir, locate, host, false)
}

/// [`jit`] without adc's own functions (`__adc_*`) that no function of
/// the program reaches through calls (`Module::unreached_internals`), as
/// object files leave them out: for callers that call only the program's
/// functions (the differential tester; they were a quarter of its code
/// generation time). A lookup of one of them finds nothing.
///
/// ```
/// let ir = adc_ir::parse_module("func @__adc_twice(x: f64) -> f64 {
/// block0(v0: f64):
///     v1: f64 = add v0, v0
///     return v1
/// }
/// func @four(x: f64) -> f64 {
/// block0(v0: f64):
///     v1: f64 = call @__adc_twice(v0)
///     v2: f64 = call @__adc_twice(v1)
///     return v2
/// }
/// func @__adc_thrice(x: f64) -> f64 {
/// block0(v0: f64):
///     v1: f64 = add v0, v0
///     v2: f64 = add v1, v0
///     return v2
/// }").unwrap();
/// adc_ir::verify(&ir).unwrap();
/// let jit = adc_codegen::jit_reached(&ir, &|_| String::new(), &[]).unwrap();
/// let four: adc_codegen::TypedFunc<(f64,), f64> = jit.typed("four").unwrap();
/// assert_eq!(four.call((1.5,)), Ok(6.0));
/// assert!(jit.function("__adc_twice").is_some(), "reached from `four`");
/// assert!(jit.function("__adc_thrice").is_none(), "reached from nothing");
/// assert!(adc_codegen::jit(&ir, &|_| String::new(), &[]).unwrap().function("__adc_thrice").is_some());
/// ```
pub fn jit_reached(
    ir: &adc_ir::Module,
    locate: Locate<'_>,
    host: &[(String, *const u8)],
) -> Result<JitModule, CodegenError> {
    jit_with(ir, locate, host, true)
}

fn jit_with(
    ir: &adc_ir::Module,
    locate: Locate<'_>,
    host: &[(String, *const u8)],
    leave_out_unreached: bool,
) -> Result<JitModule, CodegenError> {
    let mut builder =
        cranelift_jit::JITBuilder::with_isa(isa(false)?, cranelift_module::default_libcall_names());
    for (name, ptr) in host::runtime_symbols() {
        builder.symbol(name, ptr);
    }
    for (name, ptr) in host {
        builder.symbol(name.clone(), *ptr);
    }
    for f in ir.funcs.iter().filter(|f| f.is_import()) {
        if !host.iter().any(|(n, _)| *n == f.name)
            && !host::c_symbol_exists(&f.name)
            && !host::pointer_math_declared_exactly(f)
        {
            return Err(CodegenError::Unresolved(f.name.clone()));
        }
    }
    builder.memory_provider(Box::new(jit_arena(ir)?));
    let mut m = cranelift_jit::JITModule::new(builder);
    let built = build(&mut m, ir, locate, true, leave_out_unreached)?;
    m.finalize_definitions()?;
    let mut funcs = BTreeMap::new();
    for (i, f) in ir.funcs.iter().enumerate() {
        // A split-mode half (`__adc_aug_g`, `__adc_rev_g`) adopts a tape
        // from an `i64` handle its caller passes: called from outside with
        // any other number, it would read and free a wild pointer.
        if adopts_a_tape(f) {
            continue;
        }
        if let (Some(w), Some(e)) = (built.wrappers[i], built.entries[i]) {
            let jf = JitFunction::new(f, m.get_finalized_function(e), m.get_finalized_function(w));
            funcs.insert(f.name.clone(), jf);
        }
    }
    Ok(JitModule::new(m, funcs))
}

/// Whether `f` takes over a tape from a handle (`tape.adopt`).
fn adopts_a_tape(f: &adc_ir::Function) -> bool {
    f.layout.iter().any(|&b| {
        f.dfg
            .block(b)
            .insts
            .iter()
            .any(|&i| matches!(f.dfg.inst(i), adc_ir::InstData::TapeAdopt { .. }))
    })
}
