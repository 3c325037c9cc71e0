//! IR function bodies to Cranelift IR, one block for one block.
//!
//! Every adc function is compiled to an internal function
//! `__adc_impl_NAME(ctx, params...)`. `ctx` points to a two-word runtime
//! context `{ message: *const u8, message_len: u64 }`: a failing runtime
//! check stores its message there and returns zeros, and every caller checks
//! `ctx.message` after each call and propagates. So runtime errors never
//! unwind through foreign frames and need no global state.
//!
//! The translator's parts: `inst` (one instruction), `address` (element
//! addresses), `frame` (frame bound and stack guard), `c_abi` (calls of
//! externs, C layouts), `tape_lowering` (the tape instructions),
//! `strong_zero` (`mulz`, `divz`), `sincos`, `simd` (vector pairs of
//! `unroll-inner`'s copies, and of vector mode's lanes), `homes` (loop-entry copies), `stack_arrays`
//! (small arrays in the frame), `views`, `copy` (`copyrange`),
//! `preserve_all` (the module's cold-path helpers) and `symbols` (what the
//! module has declared). Dependencies point one way: the rest of the crate
//! (`compile.rs`, `wrappers.rs`, the JIT and object-file parts) uses the
//! translator; nothing here uses them (a test in `lib.rs` checks).

use crate::CodegenError;
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

mod address;
pub(crate) mod c_abi;
pub(crate) mod copy;
mod frame;
mod homes;
mod inst;
mod preserve_all;
mod simd;
mod sincos;
mod stack_arrays;
mod strong_zero;
mod symbols;
pub(crate) mod tape_lowering;
mod tape_reserve;
mod views;

pub(crate) use frame::{
    single_pass, zeroed_ctx, zeroed_slot16, FrameGuard, CTX_ERROR_NEEDED, CTX_STACK_FLOOR,
};
pub(crate) use symbols::Symbols;

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
    /// Per message, its cold block, which takes the length a `lencheck.nnz`
    /// needed as a parameter when the message has a `%lld` for it.
    error_sites: BTreeMap<String, clif::Block>,
    ret_area: Option<clif::Value>,
    /// The tape and deferred-free list of this call (`crate::translate::tape_lowering`).
    pub(crate) tape_state: Option<crate::translate::tape_lowering::TapeState>,
    /// Per value, whether it is on a loop-carried recurrence
    /// (`crate::translate::strong_zero`).
    recurrent: Vec<bool>,
    /// Local arrays that live in the frame, with their lengths, and the
    /// values whose `free` does nothing (`crate::translate::stack_arrays`).
    stack_arrays: BTreeMap<adc_ir::Value, i64>,
    quiet_frees: std::collections::BTreeSet<adc_ir::Value>,
    /// Loop-entry copies of values loops use (`crate::translate::homes`).
    pub(crate) homes: crate::translate::homes::HomeState,
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
    /// Vector mode's lanes in pairs (`simd/lanes.rs`): the plan, each IR
    /// value's vector and lane where it has one, and the vectors combined
    /// from two scalars in the block being translated.
    lanes: simd::lanes::LanePlan,
    lane_vec: Vec<Option<(clif::Value, u8)>>,
    gathered: BTreeMap<(Value, Value), clif::Value>,
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
        recurrent: crate::translate::strong_zero::recurrent_values_if_needed(func),
        stack_arrays: BTreeMap::new(),
        quiet_frees: Default::default(),
        homes: Default::default(),
        frame_bound: None,
        own_frame: 0,
        cur_block: entry_ir,
        cur_self_loop: false,
        inst_block: inst_blocks(func),
        sincos: sincos::SinCos::plan(ir, func),
        lanes: Default::default(),
        lane_vec: vec![None; func.dfg.num_values()],
        gathered: BTreeMap::new(),
    };
    t.lanes = simd::lanes::plan(func, &t.recurrent);
    // Reverse post-order visits a value's definition before its uses
    // (dominators first), whatever the layout order.
    let (rpo, _) = adc_ir::dom::dominators(func);
    t.homes.plan = crate::translate::homes::homes(func, &rpo);
    (t.stack_arrays, t.quiet_frees) = crate::translate::stack_arrays::stack_arrays(func);
    let entry_params: Vec<clif::Value> = t.b.block_params(entry)[n_hidden..].to_vec();
    let mut k = 0;
    for &v in func.dfg.block_params(entry_ir) {
        let n = clif_types(func.dfg.value_type(v)).len();
        t.values[v.index()] = entry_params[k..k + n].to_vec();
        k += n;
    }
    if crate::translate::tape_lowering::uses_tape(func) {
        t.b.switch_to_block(entry);
        let adopted =
            crate::translate::tape_lowering::adopted_param(func).map(|p| t.values[p.index()][0]);
        t.tape_state = Some(crate::translate::tape_lowering::init_state(
            &mut t.b, func, adopted,
        ));
    }
    t.stack_guard(entry)?;
    for &blk in func.layout.iter().skip(1) {
        t.append_params(blk);
    }
    let escaping = if func.layout.iter().any(|b| func.successors(*b).contains(b)) {
        simd::escaping(func, &t.inst_block)
    } else {
        Vec::new()
    };
    for &blk in &rpo {
        t.block(blk, &escaping)?;
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
        estimate: if frame::single_pass(t.b.func) {
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
    /// Translates IR block `blk` (`escaping`: the values `simd` may not
    /// keep in lanes).
    fn block(&mut self, blk: adc_ir::Block, escaping: &[bool]) -> Result<(), CodegenError> {
        let cb = self.blocks[&blk];
        if self.b.current_block() != Some(cb) {
            self.b.switch_to_block(cb);
        }
        self.enter_block_lanes(blk);
        self.enter_block_homes(blk);
        self.cur_block = blk;
        self.cur_self_loop = self.func.successors(blk).contains(&blk);
        self.tape_enter_block(blk);
        let insts = &self.func.dfg.block(blk).insts;
        let mut k = 0;
        if self.cur_self_loop {
            if let Some(pairs) = simd::plan(self.func, blk, escaping) {
                k = self.vector_pairs(&pairs)?;
            }
        }
        while k < insts.len() {
            if let Some(second) = self.lanes.partner(insts[k]) {
                self.lane_pair(insts[k], second)?;
                k += 2;
                continue;
            }
            if k + 1 == insts.len() {
                // The terminator: a preheader loads its loop's copies first.
                self.load_copies(blk);
            }
            // A run of pushes (or pops) on one tape shares one capacity
            // check (or one length update).
            let first = self.func.dfg.inst(insts[k]);
            self.tape_before(first);
            // Only tape instructions form runs: measuring a run of any
            // other kind made a block of n adds cost O(n^2).
            let run = if matches!(first, InstData::TapePush { .. } | InstData::TapePop { .. }) {
                insts[k..]
                    .iter()
                    .take_while(|i| {
                        let d = self.func.dfg.inst(**i);
                        std::mem::discriminant(d) == std::mem::discriminant(first)
                            && crate::translate::tape_lowering::tape_of(d)
                                == crate::translate::tape_lowering::tape_of(first)
                    })
                    .count()
            } else {
                1
            };
            match *first {
                InstData::TapePush { tape, .. } if run > 1 => {
                    self.tape_push_run(&insts[k..k + run], tape)?
                }
                InstData::TapePop { tape } if run > 1 => {
                    self.tape_pop_run(&insts[k..k + run], tape)
                }
                _ => {
                    self.inst(insts[k])?;
                    k += 1;
                    continue;
                }
            }
            k += run;
        }
        Ok(())
    }
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

    /// Like [`Self::check`], for a check whose message names lengths
    /// (`[needed, actual]`: the check's operands): the message is stored
    /// without them, and the failing site records each, in the order of
    /// the message, and where it goes ([`CTX_ERROR_NEEDED`]).
    pub(crate) fn check_needing(
        &mut self,
        fail: clif::Value,
        inst: adc_ir::Inst,
        what: adc_ir::LenCheckOf,
        [needed, actual]: [clif::Value; 2],
    ) -> Result<(), CodegenError> {
        let location = (self.locate)(self.func.span(inst));
        let text = format!("runtime error: {} at {location}\n", what.message());
        let named = what.placeholders();
        let err = match self.error_sites.get(&text) {
            Some(b) => *b,
            None => {
                self.error_exit();
                let blk = self.b.create_block();
                self.b.set_cold_block(blk);
                for _ in &named {
                    self.b.append_block_param(blk, types::I64);
                }
                self.error_sites.insert(text, blk);
                blk
            }
        };
        let ok = self.b.create_block();
        let args: Vec<clif::BlockArg> = named
            .iter()
            .map(|p| {
                let v = if *p == adc_ir::LenCheckOf::NEEDED {
                    needed
                } else {
                    actual
                };
                clif::BlockArg::Value(v)
            })
            .collect();
        self.b.ins().brif(fail, err, &args, ok, &[]);
        self.b.switch_to_block(ok);
        Ok(())
    }

    fn finish(&mut self) -> Result<(), CodegenError> {
        for (text, blk) in std::mem::take(&mut self.error_sites) {
            self.b.switch_to_block(blk);
            let mut text = text;
            let numbers = self.b.block_params(blk).to_vec();
            for (i, n) in numbers.into_iter().enumerate() {
                // The first placeholder left, which the `i`-th number fills.
                let first = [adc_ir::LenCheckOf::NEEDED, adc_ir::LenCheckOf::ACTUAL]
                    .into_iter()
                    .filter_map(|p| text.find(p).map(|at| (at, p.len())))
                    .min();
                let (at, len) = first.unwrap_or((text.len(), 0));
                text.replace_range(at..at + len, "");
                let at = self.b.ins().iconst(types::I64, at as i64);
                let (ins, ctx) = (self.b.ins(), self.ctx_ptr);
                let slot = CTX_ERROR_NEEDED + 16 * i as i32;
                ins.store(TRUSTED, n, ctx, slot);
                self.b.ins().store(TRUSTED, at, ctx, slot + 8);
            }
            let data = self.syms.message(self.m, &text)?;
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

    fn block_args(&mut self, call: &adc_ir::BlockCall) -> Vec<clif::BlockArg> {
        if !self.lanes.param_pairs(call.block).is_empty() {
            return self.paired_block_args(call);
        }
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
        self.alloc(inst, n, size, true)
    }

    /// `calloc` (`zeroed`) or `malloc` of `n` elements of `size` bytes;
    /// null is a runtime error.
    pub(crate) fn alloc(
        &mut self,
        inst: adc_ir::Inst,
        n: clif::Value,
        size: i64,
        zeroed: bool,
    ) -> Result<clif::Value, CodegenError> {
        let size_v = self.b.ins().iconst(types::I64, size);
        // calloc(0, ...) may return null; ask for at least one element.
        let one = self.b.ins().iconst(types::I64, 1);
        let count = self.b.ins().smax(n, one);
        let p = if zeroed {
            self.call_symbol(
                "calloc",
                &[types::I64, types::I64],
                &[PTR],
                &[count, size_v],
            )?[0]
        } else {
            // `calloc` refuses a product that overflows; `malloc` is
            // asked only for one that does not.
            let big = self
                .b
                .ins()
                .icmp_imm_s(IntCC::SignedGreaterThan, count, i64::MAX / size);
            self.check(big, inst, "out of memory")?;
            let bytes = self.b.ins().imul(count, size_v);
            self.call_symbol("malloc", &[types::I64], &[PTR], &[bytes])?[0]
        };
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

fn adc_ir_int_const(func: &adc_ir::Function, v: Value) -> Option<i64> {
    match def_data(func, v)? {
        InstData::Const {
            value: adc_ir::Constant::I64(c),
        } => Some(*c),
        _ => None,
    }
}
