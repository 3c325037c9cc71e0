//! IR function bodies to Cranelift IR, one block for one block.
//!
//! Every adc function is compiled to an internal function
//! `__adc_impl_NAME(ctx, params...)`. `ctx` points to a two-word runtime
//! context `{ message: *const u8, message_len: u64 }`: a failing runtime
//! check stores its message there and returns zeros, and every caller checks
//! `ctx.message` after each call and propagates. So runtime errors never
//! unwind through foreign frames and need no global state.

use crate::{CodegenError, Symbols};
use adc_ir::{
    BinaryOp, CmpCond, Constant, InstData, MathFunc, ScalarType, Span, Type, UnaryOp, Value,
};
use cranelift_codegen::ir::condcodes::{FloatCC, IntCC};
use cranelift_codegen::ir::{
    self as clif, types, AbiParam, InstBuilder, MemFlagsData, StackSlotData, StackSlotKind,
};
use cranelift_frontend::{FunctionBuilder, FunctionBuilderContext};
use cranelift_module::{DataId, Linkage, Module};
use std::collections::BTreeMap;

mod inst;
mod simd;
mod sincos;

pub(crate) const PTR: clif::Type = types::I64;

/// Flags for memory known to be aligned and in bounds (checked before).
pub(crate) const TRUSTED: MemFlagsData = MemFlagsData::trusted();

pub(crate) fn scalar_clif(s: ScalarType) -> clif::Type {
    match s {
        ScalarType::Bool => types::I8,
        ScalarType::I64 => types::I64,
        ScalarType::F32 => types::F32,
        ScalarType::F64 => types::F64,
    }
}

/// The Cranelift values one IR value of type `t` becomes.
pub(crate) fn clif_types(t: Type) -> Vec<clif::Type> {
    match t {
        Type::Scalar(s) => vec![scalar_clif(s)],
        Type::Array(_) => vec![PTR, types::I64],
        Type::Ref(_) => vec![PTR],
        Type::Pair(s) => vec![scalar_clif(s); 2],
    }
}

/// Internal functions return tuples through a caller-provided area of
/// 8-byte slots (Cranelift cannot return many values in registers).
pub(crate) fn uses_return_area(func: &adc_ir::Function) -> bool {
    func.returns.len() > 1
}

/// A parameter or result of a signature. `bool` (`I8`) is zero-extended
/// to 32 bits, as C compilers and `rustc` pass and expect it (the SysV
/// ABI leaves the upper bits unspecified, but callees built by them read
/// the whole register): a host function or C caller then sees 0 or 1.
pub(crate) fn abi_param(t: clif::Type) -> AbiParam {
    if t == types::I8 {
        AbiParam::new(t).uext()
    } else {
        AbiParam::new(t)
    }
}

pub(crate) fn impl_signature<M: Module>(
    m: &M,
    func: &adc_ir::Function,
    with_ctx: bool,
) -> clif::Signature {
    let mut sig = m.make_signature();
    if with_ctx {
        sig.params.push(AbiParam::new(PTR));
    }
    if with_ctx && uses_return_area(func) {
        sig.params.push(AbiParam::new(PTR));
    }
    for p in &func.params {
        sig.params
            .extend(clif_types(p.ty).into_iter().map(abi_param));
    }
    if !(with_ctx && uses_return_area(func)) {
        for r in &func.returns {
            sig.returns
                .extend(clif_types(*r).into_iter().map(abi_param));
        }
    }
    sig
}

pub(crate) struct FuncTranslator<'a, 'b, M: Module> {
    pub m: &'a mut M,
    pub ir: &'a adc_ir::Module,
    pub syms: &'a mut Symbols,
    pub func: &'a adc_ir::Function,
    pub b: FunctionBuilder<'b>,
    pub locate: &'a dyn Fn(Span) -> String,
    pub(crate) values: Vec<Vec<clif::Value>>,
    blocks: BTreeMap<adc_ir::Block, clif::Block>,
    ctx_ptr: clif::Value,
    error_exit: Option<clif::Block>,
    error_sites: BTreeMap<String, clif::Block>,
    ret_area: Option<clif::Value>,
    /// The tape and deferred-free list of this call (`crate::tape_lowering`).
    pub(crate) tape_state: Option<crate::tape_lowering::TapeState>,
    /// Per value, whether it is on a loop-carried recurrence
    /// (`crate::strong_zero`).
    recurrent: Vec<bool>,
    /// Local arrays that live in the frame, with their lengths, and the
    /// values whose `free` does nothing (`crate::stack_arrays`).
    stack_arrays: BTreeMap<adc_ir::Value, i64>,
    quiet_frees: std::collections::BTreeSet<adc_ir::Value>,
    /// Loop-entry copies of values loops use (`crate::homes`).
    pub(crate) homes: crate::homes::HomeState,
    /// The data object holding the stack guard's `-frame` and this
    /// function's estimated frame (`FrameGuard`).
    frame_bound: Option<DataId>,
    own_frame: i64,
    /// The IR block being translated, and each instruction's block: an
    /// unchecked element address splits its index by where the parts are
    /// defined (`elem_addr`).
    cur_block: adc_ir::Block,
    cur_self_loop: bool,
    inst_block: Vec<Option<adc_ir::Block>>,
    /// `sin` and `cos` pairs computed by one `sincos` call.
    sincos: sincos::SinCos,
}

/// What `lib.rs` needs to finish a function's stack guard once every
/// function of the module is translated: a function entered with less stack
/// than its frame would write its spills past the guard page before its own
/// check runs (a 640 KB single-pass frame on a 256 KiB thread), so the
/// guard of a caller, and the JIT's entry, check for the callee's frame too.
pub(crate) struct FrameGuard {
    /// An upper estimate of the frame the function allocates, in bytes,
    /// for when Cranelift does not report the frame it laid out.
    pub estimate: i64,
    /// The data object its stack guard reads `-frame` from, if it has a
    /// guard: `lib.rs` defines it as minus the function's own frame plus
    /// its largest callee's, once all are compiled.
    pub bound: Option<DataId>,
    /// The module's functions it calls (by index), defined ones only.
    pub callees: Vec<usize>,
}

pub(crate) fn translate<M: Module>(
    m: &mut M,
    ir: &adc_ir::Module,
    syms: &mut Symbols,
    func: &adc_ir::Function,
    locate: &dyn Fn(Span) -> String,
    clif_func: &mut clif::Function,
    fctx: &mut FunctionBuilderContext,
) -> Result<FrameGuard, CodegenError> {
    let mut b = FunctionBuilder::new(clif_func, fctx);
    let mut blocks = BTreeMap::new();
    for &blk in &func.layout {
        blocks.insert(blk, b.create_block());
    }
    let entry_ir = func.layout[0];
    let entry = blocks[&entry_ir];
    b.append_block_params_for_function_params(entry);
    let ctx_ptr = b.block_params(entry)[0];
    let n_hidden = if uses_return_area(func) { 2 } else { 1 };
    let ret_area = if n_hidden == 2 {
        Some(b.block_params(entry)[1])
    } else {
        None
    };
    let mut t = FuncTranslator {
        m,
        ir,
        syms,
        func,
        b,
        locate,
        values: vec![Vec::new(); func.dfg.num_values()],
        blocks,
        ctx_ptr,
        error_exit: None,
        error_sites: BTreeMap::new(),
        ret_area,
        tape_state: None,
        recurrent: crate::strong_zero::recurrent_values_if_needed(func),
        stack_arrays: BTreeMap::new(),
        quiet_frees: Default::default(),
        homes: Default::default(),
        frame_bound: None,
        own_frame: 0,
        cur_block: entry_ir,
        cur_self_loop: false,
        inst_block: inst_blocks(func),
        sincos: sincos::SinCos::plan(ir, func),
    };
    // Reverse post-order visits a value's definition before its uses
    // (dominators first), whatever the layout order.
    let (rpo, _) = adc_ir::dom::dominators(func);
    t.homes.plan = crate::homes::homes(func, &rpo);
    (t.stack_arrays, t.quiet_frees) = crate::stack_arrays::stack_arrays(func);
    if crate::tape_lowering::uses_tape(func) {
        t.b.switch_to_block(entry);
        t.tape_state = Some(crate::tape_lowering::init_state(&mut t.b, func));
    }
    t.stack_guard(entry)?;
    let entry_params: Vec<clif::Value> = t.b.block_params(entry)[n_hidden..].to_vec();
    let mut k = 0;
    for &v in func.dfg.block_params(entry_ir) {
        let n = clif_types(func.dfg.value_type(v)).len();
        t.values[v.index()] = entry_params[k..k + n].to_vec();
        k += n;
    }
    for &blk in func.layout.iter().skip(1) {
        let cb = t.blocks[&blk];
        for &v in func.dfg.block_params(blk) {
            let vals = clif_types(func.dfg.value_type(v))
                .into_iter()
                .map(|ty| t.b.append_block_param(cb, ty))
                .collect();
            t.values[v.index()] = vals;
        }
    }
    let escaping = if func.layout.iter().any(|b| func.successors(*b).contains(b)) {
        simd::escaping(func, &t.inst_block)
    } else {
        Vec::new()
    };
    for &blk in &rpo {
        let cb = t.blocks[&blk];
        if t.b.current_block() != Some(cb) {
            t.b.switch_to_block(cb);
        }
        t.enter_block_homes(blk);
        t.cur_block = blk;
        t.cur_self_loop = func.successors(blk).contains(&blk);
        let insts = &func.dfg.block(blk).insts;
        let mut k = 0;
        if t.cur_self_loop {
            if let Some(pairs) = simd::plan(func, blk, &escaping) {
                k = t.vector_pairs(&pairs)?;
            }
        }
        while k < insts.len() {
            if k + 1 == insts.len() {
                // The terminator: a preheader loads its loop's copies first.
                t.load_copies(blk);
            }
            // A run of pushes (or pops) on one tape shares one capacity
            // check (or one length update).
            let first = func.dfg.inst(insts[k]);
            // Only tape instructions form runs: measuring a run of any
            // other kind made a block of n adds cost O(n^2).
            let run = if matches!(first, InstData::TapePush { .. } | InstData::TapePop { .. }) {
                insts[k..]
                    .iter()
                    .take_while(|i| {
                        let d = func.dfg.inst(**i);
                        std::mem::discriminant(d) == std::mem::discriminant(first)
                            && crate::tape_lowering::tape_of(d)
                                == crate::tape_lowering::tape_of(first)
                    })
                    .count()
            } else {
                1
            };
            match *first {
                InstData::TapePush { tape, .. } if run > 1 => {
                    t.tape_push_run(&insts[k..k + run], tape)?
                }
                InstData::TapePop { tape } if run > 1 => t.tape_pop_run(&insts[k..k + run], tape),
                _ => {
                    t.inst(insts[k])?;
                    k += 1;
                    continue;
                }
            }
            k += run;
        }
    }
    t.finish()?;
    let mut callees: Vec<usize> = func
        .layout
        .iter()
        .flat_map(|b| func.dfg.block(*b).insts.iter())
        .filter_map(|&i| match func.dfg.inst(i) {
            InstData::Call { func: callee, .. } if !ir.func(*callee).is_import() => {
                Some(callee.index())
            }
            _ => None,
        })
        .collect();
    callees.sort_unstable();
    callees.dedup();
    let guard = FrameGuard {
        // The single-pass allocator may give every Cranelift value a slot.
        estimate: if crate::single_pass(t.b.func) {
            16 * t.b.func.dfg.num_values() as i64 + t.own_frame
        } else {
            t.own_frame
        },
        bound: t.frame_bound,
        callees,
    };
    t.b.seal_all_blocks();
    let cfg = t.m.target_config();
    t.b.finalize(cfg);
    Ok(guard)
}

impl<M: Module> FuncTranslator<'_, '_, M> {
    pub(crate) fn v(&self, v: Value) -> clif::Value {
        self.values[v.index()][0]
    }

    pub(crate) fn vs(&self, v: Value) -> Vec<clif::Value> {
        self.values[v.index()].clone()
    }

    fn scalar_ty(&self, v: Value) -> ScalarType {
        self.func.dfg.value_type(v).elem()
    }

    fn error_exit(&mut self) -> clif::Block {
        if let Some(b) = self.error_exit {
            return b;
        }
        let blk = self.b.create_block();
        self.b.set_cold_block(blk);
        self.error_exit = Some(blk);
        blk
    }

    /// A cold block that records `what` (with the instruction's location)
    /// in the runtime context and leaves the function. Filled in `finish`,
    /// because the builder cannot leave a block half-built.
    fn error_site(&mut self, inst: adc_ir::Inst, what: &str) -> Result<clif::Block, CodegenError> {
        let text = format!(
            "runtime error: {what} at {}\n",
            (self.locate)(self.func.span(inst))
        );
        if let Some(b) = self.error_sites.get(&text) {
            return Ok(*b);
        }
        self.error_exit();
        let blk = self.b.create_block();
        self.b.set_cold_block(blk);
        self.error_sites.insert(text, blk);
        Ok(blk)
    }

    fn finish(&mut self) -> Result<(), CodegenError> {
        for (text, blk) in std::mem::take(&mut self.error_sites) {
            let data = self.syms.message(self.m, &text)?;
            self.b.switch_to_block(blk);
            let gv = self.m.declare_data_in_func(data, self.b.func);
            let addr = self.b.ins().symbol_value(PTR, gv);
            let len = self.b.ins().iconst(types::I64, text.len() as i64);
            self.b.ins().store(TRUSTED, addr, self.ctx_ptr, 0);
            self.b.ins().store(TRUSTED, len, self.ctx_ptr, 8);
            let exit = self.error_exit();
            self.b.ins().jump(exit, &[]);
        }
        if let Some(blk) = self.error_exit {
            self.b.switch_to_block(blk);
            let mut zeros = Vec::new();
            if self.ret_area.is_none() {
                for r in &self.func.returns {
                    for ty in clif_types(*r) {
                        zeros.push(zero(&mut self.b, ty));
                    }
                }
            }
            self.b.ins().return_(&zeros);
        }
        Ok(())
    }

    /// Recursion must end in a runtime error, not a crash, when the stack
    /// runs out: a function that calls another (a defined function, or an
    /// `extern`, which may be a host function calling back into the
    /// module) compares the stack pointer with the floor in `ctx`, which
    /// the JIT host sets from the thread's stack (`runtime.rs`). A zero
    /// floor (the C entry points, whose callers' stacks are unknown)
    /// never fails.
    fn stack_guard(&mut self, entry: clif::Block) -> Result<(), CodegenError> {
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
            + crate::stack_arrays::MAX_FRAME_BYTES
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
        // The bound is read from a data object that `lib.rs` fills once
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

    /// Branches to the error site when `fail` is true, else continues.
    pub(crate) fn check(
        &mut self,
        fail: clif::Value,
        inst: adc_ir::Inst,
        what: &str,
    ) -> Result<(), CodegenError> {
        let err = self.error_site(inst, what)?;
        let ok = self.b.create_block();
        self.b.ins().brif(fail, err, &[], ok, &[]);
        self.b.switch_to_block(ok);
        Ok(())
    }

    pub(crate) fn elem_addr(
        &mut self,
        inst: adc_ir::Inst,
        array: Value,
        index: Value,
        checked: bool,
    ) -> Result<clif::Value, CodegenError> {
        let arr = self.vs(array);
        let idx = self.v(index);
        if checked {
            let oob = self
                .b
                .ins()
                .icmp(IntCC::UnsignedGreaterThanOrEqual, idx, arr[1]);
            self.check(oob, inst, "index out of bounds")?;
        }
        let size = self.func.dfg.value_type(array).elem().size() as i64;
        if !checked {
            if let Some(addr) = self.split_elem_addr(arr[0], index, size) {
                return Ok(addr);
            }
        }
        let off = self.b.ins().imul_imm_s(idx, size);
        Ok(self.b.ins().iadd(arr[0], off))
    }

    /// The address of element `index` of an unchecked access, without its
    /// arithmetic: `ptr + x * size + k * size` when `index` is `x + k` for
    /// a constant `k` (through a chain of `add`s and `sub`s,
    /// `adc_ir::offset`; the constant folds into the access's displacement); else,
    /// for `index = a + b`,
    /// `(ptr + a * size) + b * size` when `a` comes from outside the
    /// current block and `b` from inside it, or the other way round (in a
    /// loop the first sum is invariant, Cranelift hoists it, and the rest
    /// folds into the access's addressing mode), with `b = x + k` split
    /// the same way, when the current block is a loop of its own.
    fn split_elem_addr(
        &mut self,
        ptr: clif::Value,
        index: Value,
        size: i64,
    ) -> Option<clif::Value> {
        if let Some((x, k)) = constant_offset(self.func, index) {
            let x = self.v(x);
            let off = self.b.ins().imul_imm_s(x, size);
            let addr = self.b.ins().iadd(ptr, off);
            return Some(self.b.ins().iadd_imm_s(addr, k.checked_mul(size)?));
        }
        // Only in a one-block loop: elsewhere the sum is rarely hoisted, and
        // a base per access only adds to the register pressure.
        if !self.cur_self_loop {
            return None;
        }
        let [a, b] = self.add_operands(index)?;
        let (outer, inner) = match (self.defined_here(a), self.defined_here(b)) {
            (false, true) => (a, b),
            (true, false) => (b, a),
            _ => return None,
        };
        let (x, k) = constant_offset(self.func, inner).unwrap_or((inner, 0));
        let disp = k.checked_mul(size)?;
        let (outer, x) = (self.v(outer), self.v(x));
        let outer_off = self.b.ins().imul_imm_s(outer, size);
        let base = self.b.ins().iadd(ptr, outer_off);
        let inner_off = self.b.ins().imul_imm_s(x, size);
        let addr = self.b.ins().iadd(base, inner_off);
        Some(match disp {
            0 => addr,
            _ => self.b.ins().iadd_imm_s(addr, disp),
        })
    }

    /// The operands of `v` when it is an integer `add`.
    fn add_operands(&self, v: Value) -> Option<[Value; 2]> {
        match crate::translate::def_data(self.func, v)? {
            InstData::Binary {
                op: adc_ir::BinaryOp::Add,
                args,
            } => Some(*args),
            _ => None,
        }
    }

    /// Whether `v` is a parameter or result of the block being translated.
    fn defined_here(&self, v: Value) -> bool {
        match self.func.dfg.value_def(v) {
            adc_ir::ValueDef::Param(b, _) => b == self.cur_block,
            adc_ir::ValueDef::Result(i, _) => self.inst_block[i.index()] == Some(self.cur_block),
            adc_ir::ValueDef::Unused => false,
        }
    }

    pub(crate) fn call_symbol(
        &mut self,
        name: &str,
        params: &[clif::Type],
        returns: &[clif::Type],
        args: &[clif::Value],
    ) -> Result<Vec<clif::Value>, CodegenError> {
        let fref = declare_import(self.m, &mut self.b, name, params, returns)?;
        let call = self.b.ins().call(fref, args);
        Ok(self.b.inst_results(call).to_vec())
    }

    pub(crate) fn def(&mut self, inst: adc_ir::Inst, vals: Vec<clif::Value>) {
        let results = self.func.dfg.inst_results(inst);
        let mut k = 0;
        for &r in results {
            let n = clif_types(self.func.dfg.value_type(r)).len();
            self.values[r.index()] = vals[k..k + n].to_vec();
            k += n;
            self.store_home(r);
        }
    }

    fn block_args(&self, call: &adc_ir::BlockCall) -> Vec<clif::BlockArg> {
        call.args
            .iter()
            .flat_map(|a| self.vs(*a))
            .map(clif::BlockArg::Value)
            .collect()
    }

    /// `calloc` of `n` elements of `size` bytes; null is a runtime error.
    pub(crate) fn alloc_zeroed(
        &mut self,
        inst: adc_ir::Inst,
        n: clif::Value,
        size: i64,
    ) -> Result<clif::Value, CodegenError> {
        let size_v = self.b.ins().iconst(types::I64, size);
        // calloc(0, ...) may return null; ask for at least one element.
        let one = self.b.ins().iconst(types::I64, 1);
        let count = self.b.ins().smax(n, one);
        let p = self.call_symbol(
            "calloc",
            &[types::I64, types::I64],
            &[PTR],
            &[count, size_v],
        )?[0];
        let null = self.b.ins().icmp_imm_s(IntCC::Equal, p, 0);
        self.check(null, inst, "out of memory")?;
        Ok(p)
    }
}

pub(crate) fn zero(b: &mut FunctionBuilder, ty: clif::Type) -> clif::Value {
    match ty {
        types::F32 => b.ins().f32const(0.0),
        types::F64 => b.ins().f64const(0.0),
        t => b.ins().iconst(t, 0),
    }
}

/// Declares the external C function `name` and a reference to it in `b`.
pub(crate) fn declare_import<M: Module>(
    m: &mut M,
    b: &mut FunctionBuilder,
    name: &str,
    params: &[clif::Type],
    returns: &[clif::Type],
) -> Result<clif::FuncRef, CodegenError> {
    let mut sig = m.make_signature();
    sig.params.extend(params.iter().map(|t| AbiParam::new(*t)));
    sig.returns
        .extend(returns.iter().map(|t| AbiParam::new(*t)));
    let id = m.declare_function(name, Linkage::Import, &sig)?;
    Ok(m.declare_func_in_func(id, b.func))
}

/// A function without calls gets a stack guard only when its frame may
/// be larger than this (the host's margin below the floor is at least
/// 16 KiB: a quarter of a 64 KiB stack).
const LEAF_GUARD_BYTES: i64 = 8 * 1024;

/// Byte offset in the per-call context `ctx` of the lowest stack address
/// compiled code may reach (after the message pointer and length).
pub(crate) const CTX_STACK_FLOOR: i32 = 16;

/// A fresh per-call context: no message, and no stack floor.
pub(crate) fn zeroed_ctx(b: &mut FunctionBuilder) -> clif::Value {
    zeroed_slot(b, CTX_STACK_FLOOR as u32 + 8)
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

/// Each instruction's block in `func`'s layout.
fn inst_blocks(func: &adc_ir::Function) -> Vec<Option<adc_ir::Block>> {
    let mut out = vec![None; func.dfg.num_insts()];
    for &b in &func.layout {
        for &i in &func.dfg.block(b).insts {
            out[i.index()] = Some(b);
        }
    }
    out
}

fn def_data(func: &adc_ir::Function, v: Value) -> Option<&InstData> {
    match func.dfg.value_def(v) {
        adc_ir::ValueDef::Result(i, _) => Some(func.dfg.inst(i)),
        _ => None,
    }
}

/// `v` as `x + k` with `k` a constant, when it is such an `add`.
fn plus_constant(func: &adc_ir::Function, v: Value) -> Option<(Value, i64)> {
    let Some(InstData::Binary {
        op: adc_ir::BinaryOp::Add,
        args: [a, b],
    }) = def_data(func, v)
    else {
        return None;
    };
    match (adc_ir_int_const(func, *a), adc_ir_int_const(func, *b)) {
        (_, Some(k)) => Some((*a, k)),
        (Some(k), None) => Some((*b, k)),
        (None, None) => None,
    }
}

/// `v` as `x + k` through a chain of constant `add`s and `sub`s, when it
/// is one (`adc_ir::offset`).
fn constant_offset(func: &adc_ir::Function, v: Value) -> Option<(Value, i64)> {
    let (x, k) = adc_ir::offset::offset_through_chain(func, v);
    (x != v).then_some((x, k))
}

fn adc_ir_int_const(func: &adc_ir::Function, v: Value) -> Option<i64> {
    match def_data(func, v)? {
        InstData::Const {
            value: adc_ir::Constant::I64(c),
        } => Some(*c),
        _ => None,
    }
}
