//! Compiles every function of a verified IR module into a Cranelift
//! module, a JIT module or an object file (`build`): declarations, the
//! module's helpers, each body through the translator, the exported
//! wrappers and JIT entries (`wrappers.rs`), then the stack guards' frame
//! bounds; and the target ISA each is compiled for.

use crate::translate::{self, Symbols};
use crate::{object, wrappers, CodegenError, Locate};
use cranelift_codegen::settings::{self, Configurable};
use cranelift_frontend::FunctionBuilderContext;
use cranelift_module::{FuncId, Linkage, Module};

pub(crate) fn impl_name(name: &str) -> String {
    format!("__adc_impl_{name}")
}

pub(crate) fn entry_name(name: &str) -> String {
    format!("__adc_entry_{name}")
}

/// Per IR function, its C wrapper and (in the JIT) its entry, if defined.
pub(crate) struct Built {
    pub wrappers: Vec<Option<FuncId>>,
    pub entries: Vec<Option<FuncId>>,
}

pub(crate) fn build<M: Module>(
    m: &mut M,
    ir: &adc_ir::Module,
    locate: Locate<'_>,
    with_entries: bool,
    leave_out_unreached: bool,
) -> Result<Built, CodegenError> {
    // adc's own functions that no function of the program reaches through
    // calls, directly or not (a split-mode half that `fast-path` replaced
    // by its continuation, the derivatives of a callee every caller
    // inlined: `Module::unreached_internals`) are left out, when asked,
    // as stubs are: no code, no symbol defined, no JIT entry. Object files
    // leave them out (their names are local: nothing else can call them);
    // the JIT keeps them (its callers may look any function up by name,
    // as `adc run --grad` its `__adc_cli_grad`), but for `jit_reached`.
    let unused = if leave_out_unreached {
        ir.unreached_internals()
    } else {
        vec![false; ir.funcs.len()]
    };
    let mut func_ids = Vec::new();
    for (f, &unused) in ir.funcs.iter().zip(&unused) {
        // An internal function nothing reaches is not declared at all: an
        // import would be an undefined symbol of the object file.
        let id = if unused {
            None
        } else if f.is_import() || f.layout.is_empty() {
            let sig = translate::c_abi::extern_signature(m, f);
            Some(m.declare_function(&f.name, Linkage::Import, &sig)?)
        } else {
            let sig = translate::impl_signature(m, f, true);
            Some(m.declare_function(&impl_name(&f.name), Linkage::Local, &sig)?)
        };
        func_ids.push(id);
    }
    let tape_alloc = if with_entries {
        ("adc_rt_tape_realloc", "adc_rt_tape_free")
    } else {
        (object::tape_spare::REALLOC, object::tape_spare::FREE)
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
        object::print::define(m)?;
    }
    if ir.funcs.iter().any(translate::tape_lowering::uses_tape) {
        if !with_entries {
            object::tape_spare::define(m)?;
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
        if f.is_import() || f.layout.is_empty() || unused[i] {
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
        define_body(m, syms.func(i), &mut ctx)
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

pub(crate) fn isa(
    pic: bool,
) -> Result<std::sync::Arc<dyn cranelift_codegen::isa::TargetIsa>, CodegenError> {
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

/// Whether this machine has fused multiply-add instructions, which
/// Cranelift uses for `fma` (it calls C's `fma` otherwise).
pub fn host_has_fma() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        std::is_x86_feature_detected!("fma") && std::is_x86_feature_detected!("avx")
    }
    #[cfg(target_arch = "aarch64")]
    {
        true
    }
    #[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
    {
        false
    }
}
