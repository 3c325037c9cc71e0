//! Module-local helper functions with Cranelift's `preserve_all`
//! convention (`__adc_tape_grow`, `__adc_copy`): a hot loop calls them on
//! a cold path without clobbering any register.

use crate::CodegenError;
use cranelift_codegen::ir::{self as clif, InstBuilder};
use cranelift_frontend::FunctionBuilder;
use cranelift_module::Module;

/// A `preserve_all` signature with these parameters and no result: the
/// convention of the module's helpers that hot loops call on cold paths.
pub(crate) fn preserve_all_signature<M: Module>(m: &M, params: &[clif::Type]) -> clif::Signature {
    let mut sig = m.make_signature();
    sig.call_conv = cranelift_codegen::isa::CallConv::PreserveAll;
    sig.params
        .extend(params.iter().map(|t| clif::AbiParam::new(*t)));
    sig
}

/// Defines helper `id` (`name` in errors) with signature `sig`: one block
/// whose body `body` emits from the parameters, then `return`.
pub(crate) fn define_helper<M: Module>(
    m: &mut M,
    id: cranelift_module::FuncId,
    sig: clif::Signature,
    name: &str,
    body: impl FnOnce(&mut M, &mut FunctionBuilder, &[clif::Value]) -> Result<(), CodegenError>,
) -> Result<(), CodegenError> {
    let mut ctx = m.make_context();
    ctx.func.signature = sig;
    let mut fctx = cranelift_frontend::FunctionBuilderContext::new();
    let mut b = FunctionBuilder::new(&mut ctx.func, &mut fctx);
    let entry = b.create_block();
    b.append_block_params_for_function_params(entry);
    b.switch_to_block(entry);
    let params = b.block_params(entry).to_vec();
    body(m, &mut b, &params)?;
    b.ins().return_(&[]);
    b.seal_all_blocks();
    b.finalize(m.target_config());
    m.define_function(id, &mut ctx)
        .map_err(|e| CodegenError::Backend(format!("`{name}`: {e:?}")))?;
    Ok(())
}
