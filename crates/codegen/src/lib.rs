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

mod header;
mod object_print;
mod object_tape;
mod runtime;
mod translate;
mod typed;
mod wrappers;

use translate::Symbols;

pub use header::c_header;
pub use runtime::{ArgValue, ArrayValue, CallError, JitFunction, JitModule};
pub use translate::c_abi::tuple_layout;
pub use typed::{kind_of, Arg, Args, ParamKind, Ret, Rets, TypedFunc};

use adc_ir::Span;
use cranelift_codegen::settings::{self, Configurable};
use cranelift_frontend::FunctionBuilderContext;
use cranelift_module::{FuncId, Linkage, Module};
use std::collections::BTreeMap;
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

pub(crate) fn impl_name(name: &str) -> String {
    format!("__adc_impl_{name}")
}

pub(crate) fn entry_name(name: &str) -> String {
    format!("__adc_entry_{name}")
}

/// Where each runtime check reports from: maps a span to `file:line:col`.
///
/// ```
/// let locate: adc_codegen::Locate<'_> = &|span| format!("f.ad:{}", span.start);
/// assert_eq!(locate(adc_ir::Span::new(3, 4)), "f.ad:3");
/// ```
pub type Locate<'a> = &'a dyn Fn(Span) -> String;

struct Built {
    wrappers: Vec<Option<FuncId>>,
    entries: Vec<Option<FuncId>>,
}

fn build<M: Module>(
    m: &mut M,
    ir: &adc_ir::Module,
    locate: Locate<'_>,
    with_entries: bool,
) -> Result<Built, CodegenError> {
    let mut func_ids = Vec::new();
    for f in &ir.funcs {
        let id = if f.is_import() || f.layout.is_empty() {
            let sig = translate::c_abi::extern_signature(m, f);
            m.declare_function(&f.name, Linkage::Import, &sig)?
        } else {
            let sig = translate::impl_signature(m, f, true);
            m.declare_function(&impl_name(&f.name), Linkage::Local, &sig)?
        };
        func_ids.push(id);
    }
    let tape_alloc = if with_entries {
        ("adc_rt_tape_realloc", "adc_rt_tape_free")
    } else {
        (object_tape::REALLOC, object_tape::FREE)
    };
    let mut syms = Symbols::new(func_ids, tape_alloc);
    if ir.funcs.iter().any(translate::copy::uses_copy) {
        syms.copy = Some(translate::copy::declare_copy(m)?);
    }
    let prints = |f: &adc_ir::Function| {
        f.layout.iter().any(|b| {
            f.dfg
                .block(*b)
                .insts
                .iter()
                .any(|i| matches!(f.dfg.inst(*i), adc_ir::InstData::Print { .. }))
        })
    };
    if !with_entries && ir.funcs.iter().any(prints) {
        object_print::define(m)?;
    }
    if ir.funcs.iter().any(translate::tape_lowering::uses_tape) {
        if !with_entries {
            object_tape::define(m)?;
        }
        syms.tape_grow = Some(translate::tape_lowering::define_tape_grow(
            m,
            syms.tape_alloc.0,
        )?);
    }
    let mut built = Built {
        wrappers: Vec::new(),
        entries: Vec::new(),
    };
    let mut fctx = FunctionBuilderContext::new();
    // Every body first, then their stack guards (which need the frames of
    // the callees: `translate::FrameGuard`), then the machine code.
    let mut bodies = Vec::new();
    let mut frames = vec![0i64; ir.funcs.len()];
    let mut guards = Vec::new();
    for (i, f) in ir.funcs.iter().enumerate() {
        // A derivative stub that nothing calls any more has no body.
        if f.is_import() || f.layout.is_empty() {
            bodies.push(None);
            continue;
        }
        let mut ctx = m.make_context();
        ctx.func.signature = translate::impl_signature(m, f, true);
        let guard = translate::translate(m, ir, &mut syms, f, locate, &mut ctx.func, &mut fctx)?;
        frames[i] = guard.estimate;
        bodies.push(Some((ctx, guard)));
    }
    for (i, f) in ir.funcs.iter().enumerate() {
        let Some((mut ctx, guard)) = bodies[i].take() else {
            built.wrappers.push(None);
            built.entries.push(None);
            continue;
        };
        define_body(m, syms.func_ids[i], &mut ctx)
            .map_err(|e| CodegenError::Backend(format!("`{}`: {e}", f.name)))?;
        if let Some(frame) = compiled_frame(&ctx) {
            frames[i] = frame;
        }
        if let Some(bound) = guard.bound {
            guards.push((bound, i, guard.callees));
        }
        let csig = translate::c_abi::c_signature(m, f);
        // In the JIT the wrapper is only reached through its pointer, and a
        // user function named like a C library function the runtime calls
        // (`free`, `calloc`, ...) must not capture those calls: it gets a
        // local name. Object files export `NAME` (docs/embedding.md#the-c-signature-of-a-function), except for
        // `static` functions, adc's own (`__adc_*`) and `main` (the C
        // program has its own), local symbols.
        let internal = f.linkage == adc_ir::Linkage::Static
            || f.name.starts_with("__adc_")
            || f.name == "main";
        let wrapper = if with_entries {
            m.declare_function(&format!("__adc_c_{}", f.name), Linkage::Local, &csig)?
        } else if internal {
            m.declare_function(&f.name, Linkage::Local, &csig)?
        } else {
            m.declare_function(&f.name, Linkage::Export, &csig)?
        };
        wrappers::define_c_wrapper(m, &syms, i, f, wrapper)?;
        built.wrappers.push(Some(wrapper));
        if with_entries {
            let mut esig = m.make_signature();
            esig.params = vec![cranelift_codegen::ir::AbiParam::new(translate::PTR); 3];
            let entry = m.declare_function(&entry_name(&f.name), Linkage::Local, &esig)?;
            wrappers::define_entry(m, &mut syms, i, f, entry, frames[i], locate)?;
            built.entries.push(Some(entry));
        } else {
            built.entries.push(None);
        }
    }
    for (bound, i, callees) in guards {
        let callee = callees.iter().map(|&c| frames[c]).max().unwrap_or(0);
        let mut desc = cranelift_module::DataDescription::new();
        desc.define(Box::new((-(frames[i] + callee)).to_le_bytes()));
        m.define_data(bound, &desc)?;
    }
    if let Some(id) = syms.copy {
        translate::copy::define_copy(m, id)?;
    }
    Ok(built)
}

/// Bytes a compiled function's frame may reach below its caller's stack
/// pointer: what Cranelift laid out below the frame pointer, the return
/// address and saved frame pointer above it, and a margin for the C
/// library functions it calls (`calloc`, `realloc`).
fn compiled_frame(ctx: &cranelift_codegen::Context) -> Option<i64> {
    let layout = ctx.compiled_code()?.buffer.frame_layout()?;
    Some(layout.frame_to_fp_offset as i64 + 16 + 1024)
}

/// Compiles `ctx`'s function and defines it as `id` in `m`.
fn define_body<M: Module>(
    m: &mut M,
    id: cranelift_module::FuncId,
    ctx: &mut cranelift_codegen::Context,
) -> Result<(), String> {
    if !translate::single_pass(&ctx.func) {
        return m.define_function(id, ctx).map_err(|e| format!("{e:?}"));
    }
    let isa = isa_with(m.isa().flags().is_pic(), "single_pass").map_err(|e| e.to_string())?;
    let mut plane = cranelift_codegen::control::ControlPlane::default();
    ctx.compile(&*isa, &mut plane)
        .map_err(|e| format!("{:?}", e.inner))?;
    // Invariant: `compile` succeeded just above, so the code is there.
    let code = ctx.compiled_code().expect("compiled");
    let alignment = code.buffer.alignment as u64;
    let bytes = code.code_buffer().to_vec();
    let relocs: Vec<cranelift_module::ModuleReloc> = code
        .buffer
        .relocs()
        .iter()
        .map(|r| cranelift_module::ModuleReloc::from_mach_reloc(r, &ctx.func, id))
        .collect();
    m.define_function_bytes(id, alignment, &bytes, &relocs)
        .map_err(|e| format!("{e:?}"))
}

fn isa(pic: bool) -> Result<std::sync::Arc<dyn cranelift_codegen::isa::TargetIsa>, CodegenError> {
    isa_with(pic, "backtracking")
}

fn isa_with(
    pic: bool,
    regalloc: &str,
) -> Result<std::sync::Arc<dyn cranelift_codegen::isa::TargetIsa>, CodegenError> {
    let mut flags = settings::builder();
    let set = |f: &mut settings::Builder, k: &str, v: &str| {
        f.set(k, v)
            .map_err(|e| CodegenError::Backend(e.to_string()))
    };
    set(&mut flags, "opt_level", "speed")?;
    // Cranelift's own IR verifier checks our translation: in debug builds
    // (every test) only, as Wasmtime does; in release it was about a tenth
    // of the compile time of large functions.
    let verify = if cfg!(debug_assertions) {
        "true"
    } else {
        "false"
    };
    set(&mut flags, "enable_verifier", verify)?;
    set(&mut flags, "is_pic", if pic { "true" } else { "false" })?;
    set(&mut flags, "regalloc_algorithm", regalloc)?;
    let isa_builder =
        cranelift_native::builder().map_err(|e| CodegenError::Backend(e.to_string()))?;
    isa_builder
        .finish(settings::Flags::new(flags))
        .map_err(|e| CodegenError::Backend(e.to_string()))
}

/// Compiles a verified module to a relocatable object file.
///
/// ```
/// let ir = adc_ir::parse_module("func @twice(x: f64) -> f64 {
/// block0(v0: f64):
///     v1: f64 = add v0, v0
///     return v1
/// }").unwrap();
/// adc_ir::verify(&ir).unwrap();
/// let object = adc_codegen::object(&ir, &|_| String::new()).unwrap();
/// assert!(object.starts_with(b"\x7fELF"));
/// ```
pub fn object(ir: &adc_ir::Module, locate: Locate<'_>) -> Result<Vec<u8>, CodegenError> {
    let builder = cranelift_object::ObjectBuilder::new(
        isa(true)?,
        "adc",
        cranelift_module::default_libcall_names(),
    )?;
    let mut m = cranelift_object::ObjectModule::new(builder);
    build(&mut m, ir, locate, false)?;
    m.finish()
        .emit()
        .map_err(|e| CodegenError::Backend(e.to_string()))
}

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
    let mut builder =
        cranelift_jit::JITBuilder::with_isa(isa(false)?, cranelift_module::default_libcall_names());
    for (name, ptr) in runtime::runtime_symbols() {
        builder.symbol(name, ptr);
    }
    for (name, ptr) in host {
        builder.symbol(name.clone(), *ptr);
    }
    for f in ir.funcs.iter().filter(|f| f.is_import()) {
        if !host.iter().any(|(n, _)| *n == f.name)
            && !runtime::c_symbol_exists(&f.name)
            && !runtime::pointer_math_declared_exactly(f)
        {
            return Err(CodegenError::Unresolved(f.name.clone()));
        }
    }
    builder.memory_provider(Box::new(jit_arena(ir)?));
    let mut m = cranelift_jit::JITModule::new(builder);
    let built = build(&mut m, ir, locate, true)?;
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
