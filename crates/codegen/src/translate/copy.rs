//! `copyrange` as a call of `__adc_copy(dst, src, bytes)`, a module-local
//! function with Cranelift's `preserve_all` convention that calls
//! `memmove`. A plain call of `memmove` in a loop nest clobbers every
//! caller-saved register, so register allocation keeps the nest's values
//! (the derivative tape's pointer and length, loop-invariant floats) on the
//! stack; through `preserve_all` the copy clobbers nothing.

use super::preserve_all::{define_helper, preserve_all_signature};
use crate::translate::{FuncTranslator, PTR};
use crate::CodegenError;
use adc_ir::InstData;
use cranelift_codegen::ir::{self as clif, types, InstBuilder};
use cranelift_module::Module;

/// Whether `func` has a `copyrange`.
pub(crate) fn uses_copy(func: &adc_ir::Function) -> bool {
    func.layout.iter().any(|b| {
        func.dfg
            .block(*b)
            .insts
            .iter()
            .any(|i| matches!(func.dfg.inst(*i), InstData::CopyRange { .. }))
    })
}

const PARAMS: [clif::Type; 3] = [PTR, PTR, types::I64];

/// Declares `__adc_copy(dst, src, bytes)`; `define_copy` gives its body.
pub(crate) fn declare_copy<M: Module>(m: &mut M) -> Result<cranelift_module::FuncId, CodegenError> {
    let sig = preserve_all_signature(m, &PARAMS);
    Ok(m.declare_function("__adc_copy", cranelift_module::Linkage::Local, &sig)?)
}

/// Defines `__adc_copy`, after the module's functions: placed first, it
/// shifted their code and with it the speed of their loops.
pub(crate) fn define_copy<M: Module>(
    m: &mut M,
    id: cranelift_module::FuncId,
) -> Result<(), CodegenError> {
    let sig = preserve_all_signature(m, &PARAMS);
    define_helper(m, id, sig, "__adc_copy", |m, b, params| {
        let fref = crate::translate::declare_import(m, b, "memmove", &PARAMS, &[PTR])?;
        b.ins().call(fref, params);
        Ok(())
    })
}

impl<M: Module> FuncTranslator<'_, '_, M> {
    /// `dst[di..di + n] = src[si..si + n]` (nothing when `n <= 0`).
    pub(crate) fn copy_range(
        &mut self,
        inst: adc_ir::Inst,
        [dst, dst_index, src, src_index, count]: [adc_ir::Value; 5],
    ) -> Result<(), CodegenError> {
        let copy_fn = self
            .syms
            .copy
            .expect("invariant: modules with copyrange define __adc_copy");
        let d = self.elem_addr(inst, dst, dst_index, false)?;
        let s = self.elem_addr(inst, src, src_index, false)?;
        let size = i64::from(self.func.dfg.value_type(dst).elem().size());
        let n = self.v(count);
        let zero = self.b.ins().iconst(types::I64, 0);
        let n = self.b.ins().smax(n, zero);
        let bytes = self.b.ins().imul_imm_s(n, size);
        let fref = self.m.declare_func_in_func(copy_fn, self.b.func);
        self.b.ins().call(fref, &[d, s, bytes]);
        Ok(())
    }
}
