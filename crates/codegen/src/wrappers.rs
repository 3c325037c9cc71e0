//! Exported entry points around the internal functions (defined once the
//! translator has made those; the C ABI rules are `translate::c_abi`'s).
//!
//! - `NAME`: the C ABI of docs/embedding.md#the-c-signature-of-a-function. It runs `__adc_impl_NAME` with a
//!   fresh runtime context; on a runtime error it writes the message to
//!   stderr and exits with status 3. Tuples are returned as C structs
//!   following the x86-64 System V rules (in registers up to 16 bytes,
//!   through a hidden pointer beyond).
//! - `__adc_entry_NAME(ctx, args, rets)` (JIT only): one uniform signature
//!   for the host, reading arguments from and writing results to arrays of
//!   8-byte slots (an array takes two: pointer, length).

use crate::translate::c_abi::{c_signature, classify, tuple_layout, TupleReturn};
use crate::translate::Symbols;
use crate::translate::{
    clif_types, declare_import, scalar_clif, uses_return_area, zeroed_ctx, zeroed_slot16, PTR,
    TRUSTED,
};
use crate::CodegenError;
use adc_ir::ScalarType;
use cranelift_codegen::ir::{
    self as clif, types, AbiParam, InstBuilder, StackSlotData, StackSlotKind,
};
use cranelift_frontend::{FunctionBuilder, FunctionBuilderContext};
use cranelift_module::{FuncId, Module};

/// Writes the message of a failed check (`msg`, `len` bytes) to standard
/// error: as it is, or, when it names lengths (`translate::CTX_ERROR_NEEDED`:
/// up to two numbers, each with the offset in the message where its
/// decimal digits go, 0 for none), with their digits inserted there.
fn write_message<M: Module>(
    m: &mut M,
    b: &mut FunctionBuilder,
    ctx_ptr: clif::Value,
    msg: clif::Value,
    len: clif::Value,
) -> Result<(), CodegenError> {
    let write = declare_import(m, b, "write", &[types::I32, PTR, types::I64], &[types::I64])?;
    let fd = b.ins().iconst(types::I32, 2);
    let at_needed = crate::translate::CTX_ERROR_NEEDED;
    let at = b.ins().load(types::I64, TRUSTED, ctx_ptr, at_needed + 8);
    let [plain, formatted, second, done] = [(); 4].map(|_| b.create_block());
    let mut cold = vec![plain, formatted, second, done];
    b.ins().brif(at, formatted, &[], plain, &[]);
    b.switch_to_block(plain);
    b.ins().call(write, &[fd, msg, len]);
    b.ins().jump(done, &[]);
    // The text up to the first number, its digits, the text up to the
    // second (or the end), and the second's digits and the rest.
    b.switch_to_block(formatted);
    b.ins().call(write, &[fd, msg, at]);
    let needed = b.ins().load(types::I64, TRUSTED, ctx_ptr, at_needed);
    write_digits(b, write, fd, needed, &mut cold);
    let at2 = b.ins().load(types::I64, TRUSTED, ctx_ptr, at_needed + 24);
    let end = b.ins().select(at2, at2, len);
    let (mid, mid_len) = (b.ins().iadd(msg, at), b.ins().isub(end, at));
    b.ins().call(write, &[fd, mid, mid_len]);
    b.ins().brif(at2, second, &[], done, &[]);
    b.switch_to_block(second);
    let actual = b.ins().load(types::I64, TRUSTED, ctx_ptr, at_needed + 16);
    write_digits(b, write, fd, actual, &mut cold);
    let (tail, tail_len) = (b.ins().iadd(msg, at2), b.ins().isub(len, at2));
    b.ins().call(write, &[fd, tail, tail_len]);
    b.ins().jump(done, &[]);
    b.switch_to_block(done);
    for blk in cold {
        b.set_cold_block(blk);
    }
    Ok(())
}

/// Writes the decimal digits of `n` (not negative) to `fd` and continues
/// in a new block (its blocks into `cold`).
fn write_digits(
    b: &mut FunctionBuilder,
    write: clif::FuncRef,
    fd: clif::Value,
    n: clif::Value,
    cold: &mut Vec<clif::Block>,
) {
    // The digits, from the last, into a 24-byte buffer (an i64 has at most 19).
    let [digit, digits_done] = [(); 2].map(|_| b.create_block());
    cold.extend([digit, digits_done]);
    let buf = b.create_sized_stack_slot(StackSlotData::new(StackSlotKind::ExplicitSlot, 24, 3));
    let buf = b.ins().stack_addr(PTR, buf, 0);
    let end = b.ins().iconst(types::I64, 24);
    let args = [clif::BlockArg::Value(n), clif::BlockArg::Value(end)];
    b.ins().jump(digit, &args);
    b.append_block_param(digit, types::I64);
    b.append_block_param(digit, types::I64);
    b.switch_to_block(digit);
    let (n, pos) = (b.block_params(digit)[0], b.block_params(digit)[1]);
    let q = b.ins().udiv_imm_u(n, 10);
    let tens = b.ins().imul_imm_u(q, 10);
    let r = b.ins().isub(n, tens);
    let c = b.ins().iadd_imm_s(r, i64::from(b'0'));
    let c = b.ins().ireduce(types::I8, c);
    let pos = b.ins().iadd_imm_s(pos, -1);
    let p = b.ins().iadd(buf, pos);
    b.ins().store(TRUSTED, c, p, 0);
    let (next, rest) = (
        [q, pos].map(clif::BlockArg::Value),
        [clif::BlockArg::Value(pos)],
    );
    b.ins().brif(q, digit, &next, digits_done, &rest);
    b.append_block_param(digits_done, types::I64);
    b.switch_to_block(digits_done);
    let pos = b.block_params(digits_done)[0];
    let (p, count) = (b.ins().iadd(buf, pos), b.ins().isub(end, pos));
    b.ins().call(write, &[fd, p, count]);
}

/// Defines the C-ABI wrapper `NAME` of `func`.
pub(crate) fn define_c_wrapper<M: Module>(
    m: &mut M,
    syms: &Symbols,
    index: usize,
    func: &adc_ir::Function,
    wrapper: FuncId,
) -> Result<(), CodegenError> {
    let mut ctx = m.make_context();
    ctx.func.signature = c_signature(m, func);
    let mut fctx = FunctionBuilderContext::new();
    let mut b = FunctionBuilder::new(&mut ctx.func, &mut fctx);
    let entry = b.create_block();
    b.append_block_params_for_function_params(entry);
    b.switch_to_block(entry);
    let params = b.block_params(entry).to_vec();
    let scalars: Vec<ScalarType> = func.returns.iter().map(|t| t.elem()).collect();
    let memory_return = func.returns.len() > 1 && matches!(classify(&scalars), TupleReturn::Memory);
    let (sret, args) = if memory_return {
        (Some(params[0]), &params[1..])
    } else {
        (None, &params[..])
    };
    let ctx_ptr = zeroed_ctx(&mut b);
    let mut call_args = vec![ctx_ptr];
    let area = if uses_return_area(func) {
        let slot = b.create_sized_stack_slot(StackSlotData::new(
            StackSlotKind::ExplicitSlot,
            8 * func.returns.len() as u32,
            3,
        ));
        let addr = b.ins().stack_addr(PTR, slot, 0);
        call_args.push(addr);
        Some(addr)
    } else {
        None
    };
    call_args.extend_from_slice(args);
    let callee = m.declare_func_in_func(syms.func(index), b.func);
    let call = b.ins().call(callee, &call_args);
    let mut results = b.inst_results(call).to_vec();
    if let Some(addr) = area {
        results = func
            .returns
            .iter()
            .enumerate()
            .map(|(i, r)| {
                b.ins()
                    .load(scalar_clif(r.elem()), TRUSTED, addr, (i * 8) as i32)
            })
            .collect();
    }
    let msg = b.ins().load(PTR, TRUSTED, ctx_ptr, 0);
    let fail = b.create_block();
    let ok = b.create_block();
    b.ins().brif(msg, fail, &[], ok, &[]);
    b.switch_to_block(fail);
    b.set_cold_block(fail);
    let len = b.ins().load(types::I64, TRUSTED, ctx_ptr, 8);
    write_message(m, &mut b, ctx_ptr, msg, len)?;
    let exit = declare_import(m, &mut b, "exit", &[types::I32], &[])?;
    let code = b.ins().iconst(types::I32, 3);
    b.ins().call(exit, &[code]);
    b.ins().trap(clif::TrapCode::unwrap_user(1));
    b.switch_to_block(ok);
    if func.returns.len() > 1 {
        let (offsets, _) = tuple_layout(&scalars);
        let base = match sret {
            Some(p) => p,
            None => zeroed_slot16(&mut b),
        };
        for (v, off) in results.iter().zip(&offsets) {
            b.ins().store(TRUSTED, *v, base, *off as i32);
        }
        match classify(&scalars) {
            TupleReturn::Memory => {
                b.ins().return_(&[]);
            }
            TupleReturn::Registers(words) => {
                let vals: Vec<clif::Value> = words
                    .iter()
                    .enumerate()
                    .map(|(i, t)| b.ins().load(*t, TRUSTED, base, (i * 8) as i32))
                    .collect();
                b.ins().return_(&vals);
            }
        }
    } else {
        b.ins().return_(&results);
    }
    b.seal_all_blocks();
    b.finalize(m.target_config());
    m.define_function(wrapper, &mut ctx)
        .map_err(CodegenError::from)
}

/// Defines `__adc_entry_NAME(ctx, args, rets)` for the JIT host.
/// `frame`: a bound on the frame of the function called (its
/// `translate::FrameGuard`): the entry checks the stack left for it, since
/// the function's own guard runs after its frame is allocated and its
/// first spills are written.
pub(crate) fn define_entry<M: Module>(
    m: &mut M,
    syms: &mut Symbols,
    index: usize,
    func: &adc_ir::Function,
    entry_id: FuncId,
    frame: i64,
    locate: &dyn Fn(adc_ir::Span) -> String,
) -> Result<(), CodegenError> {
    // The function's first located instruction stands for it.
    let span = func
        .layout
        .iter()
        .flat_map(|b| func.dfg.block(*b).insts.iter())
        .map(|i| func.span(*i))
        .find(|s| s.is_defined())
        .unwrap_or(func.deriv_span);
    let text = format!(
        "runtime error: stack overflow (`{}`'s frame is too large for the stack left) at {}\n",
        func.name,
        locate(span)
    );
    let message = syms.message(m, &text)?;
    let mut ctx = m.make_context();
    ctx.func.signature.params = vec![AbiParam::new(PTR), AbiParam::new(PTR), AbiParam::new(PTR)];
    let mut fctx = FunctionBuilderContext::new();
    let mut b = FunctionBuilder::new(&mut ctx.func, &mut fctx);
    let entry = b.create_block();
    b.append_block_params_for_function_params(entry);
    b.switch_to_block(entry);
    let p = b.block_params(entry).to_vec();
    let (ctx_ptr, args_ptr, rets_ptr) = (p[0], p[1], p[2]);
    // A zero floor (no stack bounds known) never fails.
    let floor = b.ins().load(
        types::I64,
        TRUSTED,
        ctx_ptr,
        crate::translate::CTX_STACK_FLOOR,
    );
    let sp = b.ins().get_stack_pointer(types::I64);
    let minus_frame = b.ins().iconst(types::I64, -frame);
    let frame_end = b.ins().iadd(sp, minus_frame);
    let below = b.ins().icmp(
        cranelift_codegen::ir::condcodes::IntCC::UnsignedLessThan,
        frame_end,
        floor,
    );
    let (fail, go) = (b.create_block(), b.create_block());
    b.set_cold_block(fail);
    b.ins().brif(below, fail, &[], go, &[]);
    b.switch_to_block(fail);
    let gv = m.declare_data_in_func(message, b.func);
    let addr = b.ins().symbol_value(PTR, gv);
    let len = b.ins().iconst(types::I64, text.len() as i64);
    b.ins().store(TRUSTED, addr, ctx_ptr, 0);
    b.ins().store(TRUSTED, len, ctx_ptr, 8);
    b.ins().return_(&[]);
    b.switch_to_block(go);
    let mut call_args = vec![ctx_ptr];
    if uses_return_area(func) {
        call_args.push(rets_ptr);
    }
    let mut slot = 0;
    for param in &func.params {
        for t in clif_types(param.ty) {
            call_args.push(b.ins().load(t, TRUSTED, args_ptr, slot * 8));
            slot += 1;
        }
    }
    let callee = m.declare_func_in_func(syms.func(index), b.func);
    let call = b.ins().call(callee, &call_args);
    let results = b.inst_results(call).to_vec();
    // With a return area the callee already wrote `rets`; `results` is empty.
    for (i, v) in results.iter().enumerate() {
        b.ins().store(TRUSTED, *v, rets_ptr, (i * 8) as i32);
    }
    b.ins().return_(&[]);
    b.seal_all_blocks();
    b.finalize(m.target_config());
    m.define_function(entry_id, &mut ctx)
        .map_err(CodegenError::from)
}
