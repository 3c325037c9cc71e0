//! Each function's frame and the stack guard: a bound on the frame the
//! translator estimates (`FrameGuard`, which `compile.rs` finishes once the
//! module's frames are known), the check against the stack floor of the
//! per-call context, a fresh context for entry points, and which functions
//! Cranelift's single-pass register allocator compiles.

use super::{FuncTranslator, PTR, TRUSTED};
use crate::CodegenError;
use adc_ir::InstData;
use cranelift_codegen::ir::condcodes::IntCC;
use cranelift_codegen::ir::{self as clif, types, InstBuilder, StackSlotData, StackSlotKind};
use cranelift_frontend::FunctionBuilder;
use cranelift_module::{DataId, Linkage, Module};

/// What `compile.rs` needs to finish a function's stack guard once every
/// function of the module is translated: a function entered with less stack
/// than its frame would write its spills past the guard page before its own
/// check runs (a 640 KB single-pass frame on a 256 KiB thread), so the
/// guard of a caller, and the JIT's entry, check for the callee's frame too.
pub(crate) struct FrameGuard {
    /// An upper estimate of the frame the function allocates, in bytes,
    /// for when Cranelift does not report the frame it laid out.
    pub estimate: i64,
    /// The data object its stack guard reads `-frame` from, if it has a
    /// guard: `compile.rs` defines it as minus the function's own frame plus
    /// its largest callee's, once all are compiled.
    pub bound: Option<DataId>,
    /// The module's functions it calls (by index), defined ones only.
    pub callees: Vec<usize>,
}

impl<M: Module> FuncTranslator<'_, '_, M> {
    /// Recursion must end in a runtime error, not a crash, when the stack
    /// runs out: a function that calls another (a defined function, or an
    /// `extern`, which may be a host function calling back into the
    /// module) compares the stack pointer with the floor in `ctx`, which
    /// the JIT host sets from the thread's stack (`jit/host.rs`). A zero
    /// floor (the C entry points, whose callers' stacks are unknown)
    /// never fails.
    pub(super) fn stack_guard(&mut self, entry: clif::Block) -> Result<(), CodegenError> {
        let first_call = self.func.layout.iter().find_map(|b| {
            self.func
                .dfg
                .block(*b)
                .insts
                .iter()
                .copied()
                .find(|&i| matches!(self.func.dfg.inst(i), InstData::Call { .. }))
        });
        // A bound on the frame this function allocates below the stack
        // pointer: every value spilled once, slots, stack arrays (at most
        // `MAX_FRAME_ARRAYS`), saved registers. The guard compares the
        // frame's end with the floor, so a frame larger than the host's
        // margin cannot jump past the guard page: a leaf with a large
        // frame is guarded too (Cranelift emits no stack probes).
        let frame = 8 * self.func.dfg.num_values() as i64
            + self.homes.frame_bytes(self.func)
            + crate::translate::stack_arrays::MAX_FRAME_BYTES
            + 1024;
        self.own_frame = frame;
        let (at, what) = match first_call {
            Some(call) => (call, "stack overflow (recursion too deep)"),
            None if frame > LEAF_GUARD_BYTES => match self
                .func
                .layout
                .first()
                .and_then(|b| self.func.dfg.block(*b).insts.first().copied())
            {
                Some(first) => (
                    first,
                    "stack overflow (a function's frame is too large for the stack left)",
                ),
                None => return Ok(()),
            },
            None => return Ok(()),
        };
        if self.b.current_block() != Some(entry) {
            self.b.switch_to_block(entry);
        }
        let floor = self
            .b
            .ins()
            .load(types::I64, TRUSTED, self.ctx_ptr, CTX_STACK_FLOOR);
        let sp = self.b.ins().get_stack_pointer(types::I64);
        // The bound is read from a data object that `compile.rs` fills once
        // every function is compiled, with the frames Cranelift allocated:
        // counting IR values overestimated frames by up to 100x (2,000
        // nested `if`s under `--grad` were refused on an 8 MiB stack).
        let bound = self.m.declare_data(
            &format!("__adc_frame_bound_{}", self.func.name),
            Linkage::Local,
            false,
            false,
        )?;
        self.frame_bound = Some(bound);
        let gv = self.m.declare_data_in_func(bound, self.b.func);
        let addr = self.b.ins().symbol_value(PTR, gv);
        let minus_frame = self.b.ins().load(types::I64, TRUSTED, addr, 0);
        let frame_end = self.b.ins().iadd(sp, minus_frame);
        // `sp < frame` (a wrapped frame end) cannot happen below a floor
        // that is not zero; a zero floor never fails.
        let below = self.b.ins().icmp(IntCC::UnsignedLessThan, frame_end, floor);
        self.check(below, at, what)?;
        // The IR entry block's instructions go after the guard (nothing
        // branches back to an entry block).
        let after_guard = self
            .b
            .current_block()
            .expect("check leaves a block current");
        self.blocks.insert(self.func.layout[0], after_guard);
        Ok(())
    }
}

/// A function without calls gets a stack guard only when its frame may
/// be larger than this (the host's margin below the floor is at least
/// 16 KiB: a quarter of a 64 KiB stack).
const LEAF_GUARD_BYTES: i64 = 8 * 1024;

/// Byte offset in the per-call context `ctx` of the lowest stack address
/// compiled code may reach (after the message pointer and length).
pub(crate) const CTX_STACK_FLOOR: i32 = 16;

/// Byte offset in `ctx` of the numbers a failed length check names (the
/// length a `lencheck.nnz` needed; a `lencheck.jac`'s array length and
/// rows times columns): up to two, each a pair of the number and the byte
/// offset in the message where its decimal digits go, 0 when there is
/// no number (`FuncTranslator::check_needing`).
pub(crate) const CTX_ERROR_NEEDED: i32 = 24;

/// A fresh per-call context: no message, no stack floor, no length needed.
pub(crate) fn zeroed_ctx(b: &mut FunctionBuilder) -> clif::Value {
    zeroed_slot(b, CTX_ERROR_NEEDED as u32 + 32)
}

/// The address of a fresh 16-byte stack slot, zero-filled.
pub(crate) fn zeroed_slot16(b: &mut FunctionBuilder) -> clif::Value {
    zeroed_slot(b, 16)
}

/// The address of a fresh stack slot of `bytes` (a multiple of 8),
/// zero-filled.
fn zeroed_slot(b: &mut FunctionBuilder, bytes: u32) -> clif::Value {
    let slot = b.create_sized_stack_slot(StackSlotData::new(StackSlotKind::ExplicitSlot, bytes, 3));
    let addr = b.ins().stack_addr(PTR, slot, 0);
    let z = b.ins().iconst(types::I64, 0);
    for offset in (0..bytes).step_by(8) {
        b.ins().store(TRUSTED, z, addr, offset as i32);
    }
    addr
}

/// Functions with more Cranelift blocks than this are compiled with
/// Cranelift's single-pass register allocator: the default one takes time
/// and memory that grow faster than linearly with the number of blocks
/// (20,000 nested `if`s took 9 s and 2.5 GB, 150,000 ran out of memory).
/// The single-pass one gives most values a stack slot of their own, so its
/// code is slower and its frames large (megabytes at this size: deep
/// recursion through such a function meets the stack guard sooner).
const LARGE_FUNCTION_BLOCKS: usize = 30_000;

/// Functions with more Cranelift values than this are compiled with the
/// single-pass allocator too: in a long straight-line function (a reverse
/// derivative of 10,000 statements, 40,000 values in 4 blocks) the default
/// one spent 15 of 16 s, and its time grew as the square of the values
/// (2 s at 20,000). The single-pass code of the 20,000-value one ran 1.23x
/// slower (28 against 23 us a call), where compiling it took 0.4 s instead
/// of 2.0. The largest function of the GradBench ports, tuned and plain,
/// has under 10,000 values.
const LARGE_FUNCTION_VALUES: usize = 16_384;

/// At most this many bytes of frame (16 per Cranelift value, the bound
/// the stack guard then uses) for the single-pass allocator: a function
/// whose frame would be larger keeps the default one, so that it still
/// runs on a thread's usual stack.
const SINGLE_PASS_MAX_FRAME: usize = 2 << 20;

/// Functions whose calls times values exceed this are compiled with the
/// single-pass register allocator too: the default one's memory grows with
/// their product (every call splits the live ranges that cross it). The
/// reverse derivative of 2,000 calls of a small helper in a row needed
/// 612 MB, of 8,000 over 2.9 GB (an abort).
const LARGE_CALLS_TIMES_VALUES: usize = 20_000_000;

/// The frame allowed for the single-pass allocator when calls times values
/// is over `LARGE_CALLS_TIMES_VALUES`: the default allocator's memory would
/// grow past any machine's (16,000 calls of a 20-instruction helper in a
/// row: over 24 GB), so a large frame is the better failure; where the
/// stack left is too small for it, the stack guard makes it a runtime
/// error.
const SINGLE_PASS_MAX_FRAME_WITH_CALLS: usize = 256 << 20;

/// Whether `func` is compiled with the single-pass register allocator.
pub(crate) fn single_pass(func: &cranelift_codegen::ir::Function) -> bool {
    let values = func.dfg.num_values();
    if 16 * values > SINGLE_PASS_MAX_FRAME_WITH_CALLS {
        return false;
    }
    let large = func.dfg.num_blocks() > LARGE_FUNCTION_BLOCKS || values > LARGE_FUNCTION_VALUES;
    if large && 16 * values <= SINGLE_PASS_MAX_FRAME {
        return true;
    }
    let calls = func
        .layout
        .blocks()
        .flat_map(|b| func.layout.block_insts(b))
        .filter(|i| func.dfg.insts[*i].opcode().is_call())
        .count();
    calls.saturating_mul(values) > LARGE_CALLS_TIMES_VALUES
}

#[cfg(test)]
mod tests {
    use super::*;
    use cranelift_codegen::ir::{types, AbiParam, Function, InstBuilder, Signature, UserFuncName};
    use cranelift_codegen::isa::CallConv;
    use cranelift_frontend::{FunctionBuilder, FunctionBuilderContext};

    /// One block summing `n` constants: about `2 n` values.
    fn straight_line(n: usize) -> Function {
        let mut sig = Signature::new(CallConv::SystemV);
        sig.returns.push(AbiParam::new(types::F64));
        let mut func = Function::with_name_signature(UserFuncName::default(), sig);
        let mut fctx = FunctionBuilderContext::new();
        let mut b = FunctionBuilder::new(&mut func, &mut fctx);
        let block = b.create_block();
        b.switch_to_block(block);
        let mut sum = b.ins().f64const(0.0);
        for k in 0..n {
            let c = b.ins().f64const(k as f64);
            sum = b.ins().fadd(sum, c);
        }
        b.ins().return_(&[sum]);
        b.seal_all_blocks();
        b.finalize(cranelift_codegen::isa::TargetFrontendConfig {
            default_call_conv: CallConv::SystemV,
            pointer_width: target_lexicon::PointerWidth::U64,
            page_size_align_log2: 12,
        });
        func
    }

    #[test]
    fn long_straight_line_functions_take_the_single_pass_allocator() {
        assert!(!single_pass(&straight_line(4_000)));
        assert!(single_pass(&straight_line(LARGE_FUNCTION_VALUES / 2 + 1)));
        // Too large a frame for it (16 bytes a value over 2 MiB): the default.
        assert!(!single_pass(&straight_line(SINGLE_PASS_MAX_FRAME / 16)));
    }
}
