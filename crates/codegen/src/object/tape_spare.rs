//! Tape memory in object files: a spare buffer kept between calls.
//!
//! Derivative code `realloc`s its tape and frees it on return. Called
//! repeatedly from C, that mapped, faulted in and unmapped a large tape on
//! every call (glibc maps blocks over 32 MB afresh each time: half of a
//! large GMM gradient's time). The JIT keeps a spare tape per thread in
//! `jit/host.rs`; an object file carries its own two helpers instead, with
//! one module-local spare taken and given back by atomic exchange (so
//! threads never share a buffer; a thread that finds no spare allocates):
//!
//! - `__adc_tape_realloc(p, n)`: with `p` null, starts from the spare if
//!   there is one; keeps a buffer already `n` bytes large
//!   (`malloc_usable_size`), else `realloc`s it.
//! - `__adc_tape_free(p)`: keeps the larger of `p` and the spare as the
//!   spare, if it is at most 64 MiB, and frees the other. (Keeping the
//!   last one freed instead lost the tape to the deferred-free list freed
//!   after it: a GMM gradient faulted its 33 MB tape in on every call.)
//!
//! The spare outlives the calls: at most one buffer of 64 MiB per module
//! stays allocated until the process ends, as the JIT's does per thread.

use crate::CodegenError;
use cranelift_codegen::ir::condcodes::IntCC;
use cranelift_codegen::ir::{self as clif, types, AtomicRmwOp, InstBuilder};
use cranelift_frontend::{FunctionBuilder, FunctionBuilderContext};
use cranelift_module::{DataDescription, DataId, Linkage, Module};

pub(crate) const REALLOC: &str = "__adc_tape_realloc";
pub(crate) const FREE: &str = "__adc_tape_free";
/// 64 MiB of capacity (tapes grow by doubling), plus slack for malloc's
/// page rounding of the usable size, as in the JIT's `jit/host.rs`.
const MAX_SPARE: i64 = (64 << 20) + (64 << 10);
const PTR: clif::Type = types::I64;

/// Defines the spare and both helpers in `m`.
pub(crate) fn define<M: Module>(m: &mut M) -> Result<(), CodegenError> {
    let spare = m.declare_data("__adc_tape_spare", Linkage::Local, true, false)?;
    let mut desc = DataDescription::new();
    desc.define_zeroinit(8);
    desc.set_align(8);
    m.define_data(spare, &desc)?;
    define_fn(m, REALLOC, &[PTR, types::I64], &[PTR], |m, b, p| {
        realloc_body(m, b, spare, p[0], p[1])
    })?;
    define_fn(m, FREE, &[PTR], &[], |m, b, p| free_body(m, b, spare, p[0]))
}

pub(crate) fn define_fn<M: Module>(
    m: &mut M,
    name: &str,
    params: &[clif::Type],
    returns: &[clif::Type],
    body: impl FnOnce(&mut M, &mut FunctionBuilder, &[clif::Value]) -> Result<(), CodegenError>,
) -> Result<(), CodegenError> {
    let mut sig = m.make_signature();
    sig.params
        .extend(params.iter().map(|t| clif::AbiParam::new(*t)));
    sig.returns
        .extend(returns.iter().map(|t| clif::AbiParam::new(*t)));
    let id = m.declare_function(name, Linkage::Local, &sig)?;
    let mut ctx = m.make_context();
    ctx.func.signature = sig;
    let mut fctx = FunctionBuilderContext::new();
    let mut b = FunctionBuilder::new(&mut ctx.func, &mut fctx);
    let entry = b.create_block();
    b.append_block_params_for_function_params(entry);
    b.switch_to_block(entry);
    let args = b.block_params(entry).to_vec();
    body(m, &mut b, &args)?;
    b.seal_all_blocks();
    b.finalize(m.target_config());
    m.define_function(id, &mut ctx)
        .map_err(|e| CodegenError::Backend(format!("`{name}`: {e:?}")))?;
    Ok(())
}

/// Swaps `value` into the spare; returns what was there.
fn exchange<M: Module>(
    m: &mut M,
    b: &mut FunctionBuilder,
    spare: DataId,
    value: clif::Value,
) -> clif::Value {
    let gv = m.declare_data_in_func(spare, b.func);
    let addr = b.ins().symbol_value(PTR, gv);
    b.ins().atomic_rmw(
        PTR,
        crate::translate::TRUSTED,
        AtomicRmwOp::Xchg,
        addr,
        value,
    )
}

pub(crate) fn call<M: Module>(
    m: &mut M,
    b: &mut FunctionBuilder,
    name: &str,
    params: &[clif::Type],
    returns: &[clif::Type],
    args: &[clif::Value],
) -> Result<Vec<clif::Value>, CodegenError> {
    let fref = crate::translate::declare_import(m, b, name, params, returns)?;
    let inst = b.ins().call(fref, args);
    Ok(b.inst_results(inst).to_vec())
}

fn realloc_body<M: Module>(
    m: &mut M,
    b: &mut FunctionBuilder,
    spare: DataId,
    old: clif::Value,
    bytes: clif::Value,
) -> Result<(), CodegenError> {
    let take = b.create_block();
    let have = b.create_block();
    let check = b.create_block();
    let grow = b.create_block();
    let done = b.create_block();
    let p = b.append_block_param(have, PTR);
    let q = b.append_block_param(grow, PTR);
    let r = b.append_block_param(done, PTR);
    b.ins().brif(old, have, &[old.into()], take, &[]);
    b.switch_to_block(take);
    let zero = b.ins().iconst(PTR, 0);
    let s = exchange(m, b, spare, zero);
    b.ins().jump(have, &[s.into()]);
    b.switch_to_block(have);
    b.ins().brif(p, check, &[], grow, &[p.into()]);
    b.switch_to_block(check);
    let size = call(m, b, "malloc_usable_size", &[PTR], &[types::I64], &[p])?[0];
    let enough = b.ins().icmp(IntCC::UnsignedGreaterThanOrEqual, size, bytes);
    b.ins().brif(enough, done, &[p.into()], grow, &[p.into()]);
    b.switch_to_block(grow);
    let grown = call(m, b, "realloc", &[PTR, types::I64], &[PTR], &[q, bytes])?[0];
    b.ins().jump(done, &[grown.into()]);
    b.switch_to_block(done);
    b.ins().return_(&[r]);
    Ok(())
}

fn free_body<M: Module>(
    m: &mut M,
    b: &mut FunctionBuilder,
    spare: DataId,
    p: clif::Value,
) -> Result<(), CodegenError> {
    let sized = b.create_block();
    let stash = b.create_block();
    let compare = b.create_block();
    let swap_back = b.create_block();
    let drop = b.create_block();
    let done = b.create_block();
    let x = b.append_block_param(drop, PTR);
    let old = b.append_block_param(compare, PTR);
    b.ins().brif(p, sized, &[], done, &[]);
    b.switch_to_block(sized);
    let size = call(m, b, "malloc_usable_size", &[PTR], &[types::I64], &[p])?[0];
    let small = b
        .ins()
        .icmp_imm_u(IntCC::UnsignedLessThanOrEqual, size, MAX_SPARE);
    b.ins().brif(small, stash, &[], drop, &[p.into()]);
    b.switch_to_block(stash);
    let was = exchange(m, b, spare, p);
    // `free(NULL)` does nothing: no spare before.
    b.ins()
        .brif(was, compare, &[was.into()], drop, &[was.into()]);
    b.switch_to_block(compare);
    let old_size = call(m, b, "malloc_usable_size", &[PTR], &[types::I64], &[old])?[0];
    let larger = b.ins().icmp(IntCC::UnsignedGreaterThan, old_size, size);
    b.ins().brif(larger, swap_back, &[], drop, &[old.into()]);
    // The old spare was larger: it goes back, and what the spare holds now
    // (`p`, or a buffer another thread gave back meanwhile) is freed.
    b.switch_to_block(swap_back);
    let now = exchange(m, b, spare, old);
    b.ins().jump(drop, &[now.into()]);
    b.switch_to_block(drop);
    call(m, b, "free", &[PTR], &[], &[x])?;
    b.ins().jump(done, &[]);
    b.switch_to_block(done);
    b.ins().return_(&[]);
    Ok(())
}
