//! The lowering of the tape instructions (`tape.push`, `tape.pop`,
//! `free.defer`, `tape.lend`, ...) to the per-call tape of derivative code
//! and its deferred-free list, and the module-local `__adc_tape_grow`.
//!
//! Both are growable byte stacks on the C heap (`realloc`). The tape's
//! state (pointer, length and capacity in bytes, read position) lives in
//! SSA variables of the function, so the hot loops of derivative code keep
//! it in registers; the deferred-free list's (`[ptr, len, cap]`) in a stack
//! slot of the call. A value takes its own size on the
//! tape (a `bool`, such as an edge index, one byte), so cells are not
//! aligned. Nothing is global, so derivative functions may
//! run on many threads at once. Growth that fails is a runtime error, not
//! an abort. `return` frees everything; a call that stops on a runtime
//! error leaks its tape (the process is about to report and exit).

use super::preserve_all::{define_helper, preserve_all_signature};
use crate::translate::{FuncTranslator, PTR, TRUSTED};
use crate::CodegenError;
use adc_ir::{InstData, Type};
use cranelift_codegen::ir::condcodes::IntCC;
use cranelift_codegen::ir::{self as clif, types, InstBuilder, StackSlotData, StackSlotKind};
use cranelift_frontend::{FunctionBuilder, Variable};
use cranelift_module::Module;

/// Where the tape's pointer and capacity go to and come back from
/// `__adc_tape_grow` (pointer, unused, capacity).
const EXCHANGE: i32 = 0;
/// What `tape.lend` lends: six words, tape 0's pointer, length and
/// capacity, then the deferred list's, which are `DEFER` itself: a lend
/// copies only tape 0's words there, and taking them back only those (a
/// split-mode half is called once per call of its source, and copying the
/// list's words both ways was a tenth of GradBench det's gradient).
const LENT: i32 = 24;
/// The deferred-free list's state (pointer, length, capacity).
const DEFER: i32 = LENT + 24;
const STATE_WORDS: i32 = 9;
/// Tape contents: unaligned, never trapping.
const CELL: cranelift_codegen::ir::MemFlagsData =
    cranelift_codegen::ir::MemFlagsData::new().with_notrap();

pub(crate) fn uses_tape(func: &adc_ir::Function) -> bool {
    func.layout.iter().any(|b| {
        let insts = &func.dfg.block(*b).insts;
        insts.iter().any(|i| is_tape_inst(func.dfg.inst(*i)))
    })
}

/// Whether `data` is a tape instruction (pushes, pops, reads, deferred
/// frees, and the tape's hand-overs between split-mode halves).
fn is_tape_inst(data: &InstData) -> bool {
    matches!(
        data,
        InstData::TapePush { .. }
            | InstData::TapePop { .. }
            | InstData::TapeRead { .. }
            | InstData::DeferFree { .. }
            | InstData::TapeLend
            | InstData::TapeReclaim { .. }
            | InstData::TapeAdopt { .. }
            | InstData::TapeGive { .. }
    )
}

/// The tape an instruction uses, if it is a tape instruction.
pub(crate) fn tape_of(data: &InstData) -> Option<u8> {
    match data {
        InstData::TapePush { tape, .. }
        | InstData::TapePop { tape }
        | InstData::TapeRead { tape } => Some(*tape),
        _ => None,
    }
}

/// Whether `data` may read or write the tapes' state: a tape instruction,
/// a call, or the end of a block (a `return` frees the tapes).
fn touches_state(data: &InstData) -> bool {
    is_tape_inst(data)
        || matches!(
            data,
            InstData::Call { .. }
                | InstData::Jump { .. }
                | InstData::Branch { .. }
                | InstData::Return { .. }
        )
}

/// How many tapes the function uses (levels 0 to the highest it names).
fn tape_count(func: &adc_ir::Function) -> usize {
    func.layout
        .iter()
        .flat_map(|b| &func.dfg.block(*b).insts)
        .filter_map(|i| tape_of(func.dfg.inst(*i)))
        .map(|t| usize::from(t) + 1)
        .max()
        .unwrap_or(1)
}

/// Defines `__adc_tape_grow(state, need)`, which grows the stack (the tape
/// or the deferred-free list) whose pointer and capacity are at `state`
/// (words 0 and 2) to at least `need` bytes (at least doubling), writing
/// them back; a null pointer means out of memory. It uses the `preserve_all` convention, so the
/// grow path of a push clobbers no register and does not force the hot
/// loop around it to keep its values on the stack.
pub(crate) fn define_tape_grow<M: Module>(
    m: &mut M,
    alloc: &str,
) -> Result<cranelift_module::FuncId, CodegenError> {
    let sig = preserve_all_signature(m, &[PTR, types::I64]);
    let id = m.declare_function("__adc_tape_grow", cranelift_module::Linkage::Local, &sig)?;
    define_helper(m, id, sig, "__adc_tape_grow", |m, b, params| {
        let (ex, need) = (params[0], params[1]);
        let old = b.ins().load(PTR, TRUSTED, ex, 0);
        let cap = b.ins().load(types::I64, TRUSTED, ex, 16);
        let doubled = b.ins().ishl_imm_s(cap, 1);
        let at_least = b.ins().smax(doubled, need);
        let min = b.ins().iconst(types::I64, 128);
        let new_cap = b.ins().smax(at_least, min);
        let fref = crate::translate::declare_import(m, b, alloc, &[PTR, types::I64], &[PTR])?;
        let call = b.ins().call(fref, &[old, new_cap]);
        let p = b.inst_results(call)[0];
        b.ins().store(TRUSTED, p, ex, 0);
        b.ins().store(TRUSTED, new_cap, ex, 16);
        Ok(())
    })?;
    Ok(id)
}

/// The tapes' state: SSA variables of the function being translated.
#[derive(Clone)]
pub(crate) struct TapeState {
    /// The deferred-free list's state slot.
    defer: clif::Value,
    /// One set of variables per tape level.
    tapes: Vec<TapeVars>,
    /// Room that a block's first push checked for the pushes after it.
    pub(crate) reserve: super::tape_reserve::Reserve,
    /// Whether the instruction before this one was `tape.give`, which left
    /// tape 0 and the deferred list empty (a `return` then frees neither).
    given: bool,
    /// Whether the state words (deferred list, lending and exchange words)
    /// are the adopted handle's, the caller's (`adopted_param`).
    borrowed: bool,
}

/// Pointer, length and capacity in bytes, and read position of one tape.
#[derive(Clone, Copy)]
struct TapeVars {
    ptr: Variable,
    len: Variable,
    cap: Variable,
    front: Variable,
}

/// A growable byte stack: one of the tapes or the deferred-free list.
#[derive(Clone, Copy, PartialEq)]
enum Stack {
    Tape(u8),
    Defer,
}

/// The entry block's parameter a function adopts before anything else
/// touches its tapes (a split-mode half's `tape`), if it does. Such a
/// function works in the caller's state words (`init_state`), which
/// assumes the handle is the caller's `tape.lend` (the address of its
/// lending words) and every `return` follows `tape.give` (a return
/// without it would free tape 0, the caller's).
pub(crate) fn adopted_param(func: &adc_ir::Function) -> Option<adc_ir::Value> {
    let entry = *func.layout.first()?;
    match first_state_inst(func)? {
        InstData::TapeAdopt { handle } if func.dfg.block_params(entry).contains(handle) => {
            Some(*handle)
        }
        _ => None,
    }
}

/// The entry block's first instruction that touches the tapes' state.
fn first_state_inst(func: &adc_ir::Function) -> Option<&InstData> {
    let entry = *func.layout.first()?;
    func.dfg
        .block(entry)
        .insts
        .iter()
        .map(|&i| func.dfg.inst(i))
        .find(|d| touches_state(d))
}

/// Zeroes the tapes' state (at the entry block's start). `adopted`: the
/// handle the function adopts first (`adopted_param`), whose deferred list
/// and lending and exchange words it uses in place of a state slot of its
/// own.
pub(crate) fn init_state(
    b: &mut FunctionBuilder,
    func: &adc_ir::Function,
    adopted: Option<clif::Value>,
) -> TapeState {
    let z = b.ins().iconst(types::I64, 0);
    // A function that adopts its caller's tape first works in the caller's
    // state words: the deferred list stays where it is (adopting and giving
    // back copy tape 0's three words, not six, and zero none), its own
    // lends lend those same words on (lends nest), and its exchange words
    // are the caller's, unused while the caller waits for it. A split-mode
    // half is called once per call of the source (GradBench det's minors).
    let defer = match adopted {
        Some(h) => b.ins().iadd_imm_s(h, -(LENT as i64)),
        None => {
            let slot = b.create_sized_stack_slot(StackSlotData::new(
                StackSlotKind::ExplicitSlot,
                (STATE_WORDS * 8) as u32,
                3,
            ));
            let defer = b.ins().stack_addr(PTR, slot, 0);
            // Only the deferred list's words are read before they are
            // written (the exchange words before each growth, the lending
            // words by `tape.lend`), and a function that adopts a tape
            // overwrites those too.
            if !adopts(func) {
                for k in 0..3 {
                    b.ins().store(TRUSTED, z, defer, DEFER + k * 8);
                }
            }
            defer
        }
    };
    let mut var = || {
        let v = b.declare_var(types::I64);
        b.def_var(v, z);
        v
    };
    let tapes = (0..tape_count(func))
        .map(|_| TapeVars {
            ptr: var(),
            len: var(),
            cap: var(),
            front: var(),
        })
        .collect();
    TapeState {
        tapes,
        defer,
        borrowed: adopted.is_some(),
        reserve: Default::default(),
        given: false,
    }
}

/// Whether the first instruction of the entry block that touches the
/// tapes' state is `tape.adopt`.
fn adopts(func: &adc_ir::Function) -> bool {
    matches!(first_state_inst(func), Some(InstData::TapeAdopt { .. }))
}

/// A field of a growable stack's state.
#[derive(Clone, Copy)]
enum Field {
    Ptr,
    Len,
    Cap,
}

impl<M: Module> FuncTranslator<'_, '_, M> {
    fn state(&self) -> &TapeState {
        self.tape_state
            .as_ref()
            .expect("invariant: functions with tape instructions get a tape state")
    }

    fn state_mut(&mut self) -> &mut TapeState {
        self.tape_state
            .as_mut()
            .expect("invariant: functions with tape instructions get a tape state")
    }

    /// Plans one capacity check for the pushes of IR block `blk`
    /// (`crate::translate::tape_reserve`).
    pub(crate) fn tape_enter_block(&mut self, blk: adc_ir::Block) {
        let func = self.func;
        if let Some(state) = self.tape_state.as_mut() {
            state.given = false;
            state.reserve.enter_block(func, blk, |d| match d {
                InstData::TapePush { value, tape } => {
                    let ty = func.dfg.value_type(*value);
                    let bytes: u32 = crate::translate::clif_types(ty)
                        .iter()
                        .map(|t| t.bytes())
                        .sum();
                    Some((*tape, i64::from(bytes)))
                }
                _ => None,
            });
        }
    }

    /// Before instruction `data`: a barrier ends the block's reservations.
    pub(crate) fn tape_before(&mut self, data: &InstData) {
        if let Some(state) = self.tape_state.as_mut() {
            state.reserve.barrier(data);
            if !matches!(data, InstData::Return { .. }) {
                state.given = matches!(data, InstData::TapeGive { .. });
            }
        }
    }

    /// The variables of tape `level` (`init_state` made one set per level
    /// the function names).
    fn tape_vars(&self, level: u8) -> TapeVars {
        self.state().tapes[usize::from(level)]
    }

    /// Reads a field of a tape (an SSA variable) or of the deferred list
    /// (in the state slot).
    fn get(&mut self, stack: Stack, field: Field) -> clif::Value {
        match stack {
            Stack::Tape(level) => {
                let t = self.tape_vars(level);
                let var = match field {
                    Field::Ptr => t.ptr,
                    Field::Len => t.len,
                    Field::Cap => t.cap,
                };
                self.b.use_var(var)
            }
            Stack::Defer => {
                let defer = self.state().defer;
                self.b
                    .ins()
                    .load(types::I64, TRUSTED, defer, DEFER + 8 * field as i32)
            }
        }
    }

    fn set(&mut self, stack: Stack, field: Field, value: clif::Value) {
        match stack {
            Stack::Tape(level) => {
                let t = self.tape_vars(level);
                let var = match field {
                    Field::Ptr => t.ptr,
                    Field::Len => t.len,
                    Field::Cap => t.cap,
                };
                self.b.def_var(var, value);
            }
            Stack::Defer => {
                let defer = self.state().defer;
                self.b
                    .ins()
                    .store(TRUSTED, value, defer, DEFER + 8 * field as i32);
            }
        }
    }

    pub(crate) fn tape_push(
        &mut self,
        inst: adc_ir::Inst,
        level: u8,
        cells: &[clif::Value],
    ) -> Result<(), CodegenError> {
        self.stack_push(inst, Stack::Tape(level), cells)
    }

    /// Consecutive pushes on one tape: one capacity check, one length
    /// update.
    pub(crate) fn tape_push_run(
        &mut self,
        insts: &[adc_ir::Inst],
        level: u8,
    ) -> Result<(), CodegenError> {
        let mut cells = Vec::new();
        for &i in insts {
            if let InstData::TapePush { value, .. } = self.func.dfg.inst(i) {
                cells.extend(self.vs(*value));
            }
        }
        self.stack_push(insts[0], Stack::Tape(level), &cells)
    }

    /// Pushes cells (each of its own size) on `stack`, growing it (at
    /// least doubling) when they do not fit.
    fn stack_push(
        &mut self,
        inst: adc_ir::Inst,
        stack: Stack,
        cells: &[clif::Value],
    ) -> Result<(), CodegenError> {
        let sizes: Vec<i32> = cells
            .iter()
            .map(|c| self.b.func.dfg.value_type(*c).bytes() as i32)
            .collect();
        let n: i32 = sizes.iter().sum();
        let len = self.get(stack, Field::Len);
        let need = self.b.ins().iadd_imm_s(len, n as i64);
        // The bytes to make room for: these, and on a tape the pushes
        // after them in this block that a check here covers.
        let room = match stack {
            Stack::Tape(level) => {
                let reserve = &mut self.state_mut().reserve;
                if reserve.take_reserved(level, i64::from(n)) {
                    return self.store_cells(stack, len, need, cells, &sizes);
                }
                reserve.check_for(inst, level, i64::from(n))
            }
            Stack::Defer => i64::from(n),
        };
        let cap = self.get(stack, Field::Cap);
        let room_end = if room == i64::from(n) {
            need
        } else {
            self.b.ins().iadd_imm_s(len, room)
        };
        let full = self.b.ins().icmp(IntCC::SignedGreaterThan, room_end, cap);
        let grow = self.b.create_block();
        let cont = self.b.create_block();
        self.b.set_cold_block(grow);
        self.b.ins().brif(full, grow, &[], cont, &[]);
        self.b.switch_to_block(grow);
        // `__adc_tape_grow` reads and writes the pointer and capacity in
        // memory: the deferred list's are there already, the tape's (SSA
        // variables) go through the exchange words.
        let grow_fn = self
            .syms
            .tape_grow
            .expect("invariant: modules with tape instructions define __adc_tape_grow");
        let st = self.state().defer;
        let area = if stack == Stack::Defer {
            DEFER
        } else {
            EXCHANGE
        };
        if stack != Stack::Defer {
            let old = self.get(stack, Field::Ptr);
            self.b.ins().store(TRUSTED, old, st, area);
            self.b.ins().store(TRUSTED, cap, st, area + 16);
        }
        let fref = self.m.declare_func_in_func(grow_fn, self.b.func);
        let area_addr = self.b.ins().iadd_imm_s(st, area as i64);
        self.b.ins().call(fref, &[area_addr, room_end]);
        let p = self.b.ins().load(PTR, TRUSTED, st, area);
        let new_cap = self.b.ins().load(types::I64, TRUSTED, st, area + 16);
        let null = self.b.ins().icmp_imm_s(IntCC::Equal, p, 0);
        self.check(null, inst, "out of memory for the derivative tape")?;
        self.set(stack, Field::Ptr, p);
        self.set(stack, Field::Cap, new_cap);
        self.b.ins().jump(cont, &[]);
        self.b.switch_to_block(cont);
        self.store_cells(stack, len, need, cells, &sizes)
    }

    /// Stores cells at the top of `stack` (length `len`, room for them
    /// made), which then has length `need`.
    fn store_cells(
        &mut self,
        stack: Stack,
        len: clif::Value,
        need: clif::Value,
        cells: &[clif::Value],
        sizes: &[i32],
    ) -> Result<(), CodegenError> {
        let ptr = self.get(stack, Field::Ptr);
        let base_addr = self.b.ins().iadd(ptr, len);
        let mut off = 0;
        for (cell, size) in cells.iter().zip(sizes) {
            self.b.ins().store(CELL, *cell, base_addr, off);
            off += size;
        }
        self.set(stack, Field::Len, need);
        Ok(())
    }

    /// Consecutive pops of one tape: one length update.
    pub(crate) fn tape_pop_run(&mut self, insts: &[adc_ir::Inst], level: u8) {
        let tape = Stack::Tape(level);
        let types_of: Vec<Vec<clif::Type>> = insts
            .iter()
            .map(|i| {
                let r = self.func.dfg.inst_results(*i)[0];
                crate::translate::clif_types(self.func.dfg.value_type(r))
            })
            .collect();
        let total: i32 = types_of.iter().flatten().map(|t| t.bytes() as i32).sum();
        let len = self.get(tape, Field::Len);
        let new_len = self.b.ins().iadd_imm_s(len, -(total as i64));
        self.set(tape, Field::Len, new_len);
        let ptr = self.get(tape, Field::Ptr);
        let base = self.b.ins().iadd(ptr, new_len);
        // The first pop takes the newest cells, at the top.
        let mut top = total;
        for (&i, tys) in insts.iter().zip(&types_of) {
            top -= tys.iter().map(|t| t.bytes() as i32).sum::<i32>();
            let mut off = top;
            let mut vals = Vec::new();
            for ty in tys {
                vals.push(self.b.ins().load(*ty, CELL, base, off));
                off += ty.bytes() as i32;
            }
            self.def(i, vals);
        }
    }

    pub(crate) fn defer_free(
        &mut self,
        inst: adc_ir::Inst,
        ptr: clif::Value,
    ) -> Result<(), CodegenError> {
        self.stack_push(inst, Stack::Defer, &[ptr])
    }

    /// Two `f64` pops of tape `level` at once, as the lanes of one vector:
    /// the older cell in lane 0 (the vector pairs of `translate/simd/`
    /// counting down, whose lower lane pops second).
    pub(crate) fn tape_pop_pair(&mut self, level: u8) -> clif::Value {
        let tape = Stack::Tape(level);
        let len = self.get(tape, Field::Len);
        let at = self.b.ins().iadd_imm_s(len, -16);
        self.set(tape, Field::Len, at);
        let ptr = self.get(tape, Field::Ptr);
        let addr = self.b.ins().iadd(ptr, at);
        self.b.ins().load(types::F64X2, CELL, addr, 0)
    }

    /// Takes one value of type `ty` off tape `level`: the newest (`pop`)
    /// or the oldest unread (`read`). Arrays take two cells.
    pub(crate) fn tape_take(&mut self, ty: Type, level: u8, pop: bool) -> Vec<clif::Value> {
        let tape = Stack::Tape(level);
        let cell_types = crate::translate::clif_types(ty);
        let size: i64 = cell_types.iter().map(|t| t.bytes() as i64).sum();
        let ptr = self.get(tape, Field::Ptr);
        let at = if pop {
            let len = self.get(tape, Field::Len);
            let at = self.b.ins().iadd_imm_s(len, -size);
            self.set(tape, Field::Len, at);
            at
        } else {
            let front_var = self.tape_vars(level).front;
            let front = self.b.use_var(front_var);
            let next = self.b.ins().iadd_imm_s(front, size);
            self.b.def_var(front_var, next);
            front
        };
        let addr = self.b.ins().iadd(ptr, at);
        let mut off = 0;
        let mut out = Vec::new();
        for cty in cell_types {
            out.push(self.b.ins().load(cty, CELL, addr, off));
            off += cty.bytes() as i32;
        }
        out
    }

    /// The stacks whose state a handle's six words hold: tape 0 and, unless
    /// the handle is this call's own lending words (whose last three are
    /// this call's deferred list already), the deferred list.
    fn handle_stacks(own: bool) -> &'static [Stack] {
        if own {
            &[Stack::Tape(0)]
        } else {
            &[Stack::Tape(0), Stack::Defer]
        }
    }

    /// Copies tape 0's and the deferred list's state to the six words at
    /// `to` (pointer, length, capacity of each); `own`: `to` is this call's
    /// lending words.
    fn store_state(&mut self, to: clif::Value, own: bool) {
        for (k, &stack) in Self::handle_stacks(own).iter().enumerate() {
            for (j, field) in [Field::Ptr, Field::Len, Field::Cap].into_iter().enumerate() {
                let v = self.get(stack, field);
                self.b.ins().store(TRUSTED, v, to, 8 * (3 * k + j) as i32);
            }
        }
    }

    /// Makes tape 0's and the deferred list's state the six words at `from`
    /// (`own`: this call's lending words).
    fn load_state(&mut self, from: clif::Value, own: bool) {
        for (k, &stack) in Self::handle_stacks(own).iter().enumerate() {
            for (j, field) in [Field::Ptr, Field::Len, Field::Cap].into_iter().enumerate() {
                let v = self
                    .b
                    .ins()
                    .load(types::I64, TRUSTED, from, 8 * (3 * k + j) as i32);
                self.set(stack, field, v);
            }
        }
    }

    /// `tape.lend`: the state goes to this call's lending words, whose
    /// address is the handle.
    pub(crate) fn tape_lend(&mut self) -> clif::Value {
        let st = self.state().defer;
        let area = self.b.ins().iadd_imm_s(st, LENT as i64);
        self.store_state(area, true);
        area
    }

    /// `tape.reclaim h` and `tape.adopt h`: the state at `h` becomes this
    /// call's. `own`: `h` is this call's `tape.lend` (a reclaim).
    pub(crate) fn tape_take_over(&mut self, h: clif::Value, own: bool) {
        // A borrowed state's deferred list is the handle's already.
        let own = own || self.state().borrowed;
        self.load_state(h, own);
    }

    /// `tape.give h`: this call's state goes back to `h`, and its own is
    /// empty again.
    pub(crate) fn tape_give(&mut self, h: clif::Value) {
        // A borrowed deferred list stays where it is, the caller's.
        let borrowed = self.state().borrowed;
        self.store_state(h, borrowed);
        let z = self.b.ins().iconst(types::I64, 0);
        let stacks: &[Stack] = if borrowed {
            &[Stack::Tape(0)]
        } else {
            &[Stack::Tape(0), Stack::Defer]
        };
        for &stack in stacks {
            for field in [Field::Ptr, Field::Len, Field::Cap] {
                self.set(stack, field, z);
            }
        }
    }

    /// Frees the tapes, every deferred array, and the deferred list.
    pub(crate) fn release_tape(&mut self) -> Result<(), CodegenError> {
        let Some(state) = &self.tape_state else {
            return Ok(());
        };
        let levels = state.tapes.len() as u8;
        // Right after `tape.give`, tape 0 and the deferred list are empty.
        let given = state.given;
        let borrowed = state.borrowed;
        let free_fn = self.syms.tape_alloc.1;
        for level in u8::from(given)..levels {
            let tape = self.get(Stack::Tape(level), Field::Ptr);
            self.free_if_allocated(free_fn, tape)?;
        }
        // A borrowed deferred list is the caller's to free.
        if given || borrowed {
            return Ok(());
        }
        let head = self.b.create_block();
        let body = self.b.create_block();
        let done = self.b.create_block();
        self.b.ins().jump(head, &[]);
        self.b.switch_to_block(head);
        let len = self.get(Stack::Defer, Field::Len);
        let empty = self.b.ins().icmp_imm_s(IntCC::Equal, len, 0);
        self.b.ins().brif(empty, done, &[], body, &[]);
        self.b.switch_to_block(body);
        let i = self.b.ins().iadd_imm_s(len, -(PTR.bytes() as i64));
        self.set(Stack::Defer, Field::Len, i);
        let list = self.get(Stack::Defer, Field::Ptr);
        let addr = self.b.ins().iadd(list, i);
        let p = self.b.ins().load(PTR, CELL, addr, 0);
        self.call_symbol("free", &[PTR], &[], &[p])?;
        self.b.ins().jump(head, &[]);
        self.b.switch_to_block(done);
        // The list grew through `__adc_tape_grow`, so it goes back the same way.
        let list = self.get(Stack::Defer, Field::Ptr);
        self.free_if_allocated(free_fn, list)
    }

    /// Gives a stack's buffer back through `free_fn` unless it was never
    /// allocated (null): most calls of a recursive derivative (GradBench
    /// det's minors) tape nothing of their own, and the call cost a tenth
    /// of det's gradient.
    fn free_if_allocated(&mut self, free_fn: &str, p: clif::Value) -> Result<(), CodegenError> {
        let call = self.b.create_block();
        let done = self.b.create_block();
        self.b.ins().brif(p, call, &[], done, &[]);
        self.b.switch_to_block(call);
        self.call_symbol(free_fn, &[PTR], &[], &[p])?;
        self.b.ins().jump(done, &[]);
        self.b.switch_to_block(done);
        Ok(())
    }

    /// `copy a`: a fresh heap array with `a`'s contents.
    pub(crate) fn array_copy(
        &mut self,
        inst: adc_ir::Inst,
        array: adc_ir::Value,
    ) -> Result<Vec<clif::Value>, CodegenError> {
        let src = self.vs(array);
        let size = self.func.dfg.value_type(array).elem().size() as i64;
        let p = self.alloc_zeroed(inst, src[1], size)?;
        let bytes = self.b.ins().imul_imm_s(src[1], size);
        self.call_symbol(
            "memcpy",
            &[PTR, PTR, types::I64],
            &[PTR],
            &[p, src[0], bytes],
        )?;
        Ok(vec![p, src[1]])
    }
}
