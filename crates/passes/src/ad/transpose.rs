//! `transpose`: turns the differential part of an unzipped function
//! around, giving the reverse-mode signature of docs/derivatives.md#reverse-mode.
//!
//! Assumes: `unzip`'s output (its guarantees are this pass's input). In
//! vector mode (`widen`), scalar tangents are already arrays that receive
//! the gradients, and the result's `W` tangents are seeded from a `seed`
//! array parameter appended last (`build.rs`, `vector_seeds`).
//! Guarantees (check with `adc ir --after transpose`): the primal part is
//! unchanged, except that its exit jumps to the reverse sweep instead of the
//! forward replay. Each differential block `D` becomes a reverse block that
//! pops what `D` read from the tape (newest first; a value that a counted
//! loop's body reads but that is defined before the loop is pushed once at
//! the loop's exit instead, popped by the exit's reverse block into a slot
//! and loaded from there: `transpose/hoist.rs`), runs `D`'s differential
//! instructions backwards with adjoints accumulated, and goes back along
//! the edge the primal part took (the popped edge index). A counted loop's
//! counter (the `i64` parameter of its header's differential twin) lives in
//! a slot: at its exit block it is set from the loop's start and the bound
//! its header compares it with, when that bound is a constant or a value
//! of the primal part (`control.rs`, `counter_from_bound`; the taped
//! counter then goes unused and off the tape), else from the exit's first
//! tape value; its header goes back to the preheader when it equals the
//! start (a constant, a primal-part value, or the exit's second tape
//! value) and otherwise steps it back and goes to the latch. Adjoints of values used only in their
//! own block are SSA values: what its terminator passed along the edge
//! taken comes back as a parameter of its reverse block, from that edge's
//! block (`transpose/edges.rs`). Those that cross blocks (values used in
//! another block, gradients) live in stack slots zeroed at entry and reset
//! to zero when their definition is passed, so a loop's iterations do not
//! mix. Shadow memory is its own adjoint store:
//! the transpose of a shadow load adds to the element, of a shadow store
//! reads and clears it (a load stores, a store does not clear, where the
//! element is zero or is next overwritten: `transpose/first_adjoint.rs`). A derivative call becomes a call of the callee's
//! reverse derivative on the arguments' values before the call. Shadows of
//! local arrays are freed when the function returns (`free.defer`).
//!
//! **Invariant (adjoint slots):** the slot of a differential value `v` used
//! in another block than its own holds zero whenever the reverse sweep is not between a
//! use of `v` and `v`'s definition (reverse order: uses come first). It is
//! zeroed at entry; uses add to it; the definition (an instruction, or the
//! block parameter at the top of its block) takes its whole content and
//! stores zero. A value the next loop iteration redefines (a loop-carried
//! block parameter, say `y = b` in a loop) so gets the adjoint of this
//! iteration only, never what an earlier-reversed iteration left. Every
//! adjoint that crosses a block boundary goes through such a slot (values
//! used in a later block, the gradients of `Active` parameters) or along a
//! reverse edge (a block parameter's adjoint, taken at the top of its
//! block, is added to the argument of the edge taken: into its slot, or
//! into the edge block's argument to the source's reverse block when only
//! the source uses it; the source's reverse starts from that argument, so
//! an iteration again gets its own adjoint only). `mem2reg` must keep the reset: a
//! loop header that stores zero into a slot is in its own dominance
//! frontier (`tests/ir/mem2reg/header_store.adir`).

mod block;
mod build;
mod control;
mod edges;
mod first_adjoint;
mod hoist;
mod insts;
mod lanes;

use crate::ad::{diff_values, AdError};
use crate::loops::CountedLoop;
use adc_ir::{
    AdMode, BinaryOp, Block, Constant, FuncId, Function, Inst, InstData, Module, Span, Tag, Type,
    Value,
};
use std::collections::{BTreeMap, BTreeSet};

/// `split`: whether split mode is on (`ad::split::enabled`); then an
/// internal derivative `__adc_vjp_g` of a qualifying `g` is also cut into
/// `__adc_aug_g` and `__adc_rev_g`.
pub fn run(module: &mut Module, id: FuncId, split: bool) -> Result<(), AdError> {
    let u = module.func(id).clone();
    let split_of = u
        .name
        .strip_prefix("__adc_vjp_")
        .and_then(|g| module.find(g))
        .filter(|g| split && crate::ad::split::qualifies(module, *g));
    let kinds = diff_values(module, &u);
    let spec = u.deriv.clone().ok_or_else(|| {
        AdError::internal("internal error: transpose without a request", u.deriv_span)
    })?;
    let src = module
        .find(&spec.of)
        .ok_or_else(|| AdError::new(format!("cannot find `{}`", spec.of), u.deriv_span))?;
    let src_f = module.func(src).clone();
    let (params, returns) = adc_ir::ad::spec_signature(&src_f, &spec);
    let mut t = Transposer {
        module,
        u: &u,
        kinds,
        out: u.clone(),
        slots: BTreeMap::new(),
        acc: BTreeMap::new(),
        edge_adjoints: BTreeMap::new(),
        map: BTreeMap::new(),
        cur: Block::new(0),
        span: Span::UNDEFINED,
        tape_pairs: Vec::new(),
        replayed: Vec::new(),
        counted: Vec::new(),
        diff_defined: BTreeSet::new(),
        turn: None,
        wants_turn: split_of.is_some(),
        hoists: Vec::new(),
        hoisted_reads: BTreeMap::new(),
        cleared: None,
        shadow_facts: first_adjoint::ShadowFacts::default(),
    };
    t.out.params = params;
    t.out.returns = returns;
    t.out.deriv = None;
    t.build(&src_f, &spec.params, spec.ret)?;
    let (out, turn) = (t.out, t.turn);
    if let (Some(g), Some(turn)) = (split_of, turn) {
        let jvp = crate::ad::derivative_of(module, g, AdMode::Forward, out.deriv_span)?;
        let parts = crate::ad::split::declare(module, g, jvp);
        crate::ad::split::build(module, g, &out, parts, &turn)?;
    }
    *module.func_mut(id) = out;
    Ok(())
}

/// A cell of shadow memory: an array element (array, index, checked) or a
/// reference (no index), with its scalar type.
type ShadowCell = (Value, Option<(Value, bool)>, Type);

struct Transposer<'a> {
    module: &'a Module,
    u: &'a Function,
    kinds: Vec<bool>,
    out: Function,
    /// Adjoint slots of differential values that cross blocks.
    slots: BTreeMap<Value, Value>,
    /// Adjoints accumulated as SSA values in the current reverse block.
    acc: BTreeMap<Value, Value>,
    /// Per differential block, the values only it uses that its
    /// terminator passes along edges, with the parameter of its reverse
    /// block that receives their adjoint from the edge taken.
    edge_adjoints: BTreeMap<Block, Vec<(Value, Value)>>,
    /// Primal values of the differential block -> their reverse-block values.
    map: BTreeMap<Value, Value>,
    cur: Block,
    span: Span,
    /// Each pop of the reverse sweep with the push it undoes.
    tape_pairs: Vec<(Value, Inst)>,
    /// Primal instructions of differential blocks replayed in reverse blocks.
    replayed: Vec<Inst>,
    /// Counted loops of the differential part (`crate::loops`): their
    /// counter lives in its slot during the reverse sweep.
    counted: Vec<CountedLoop>,
    /// Values defined in differential blocks (the others, of the primal
    /// part, are defined once per call and seen by every reverse block).
    diff_defined: BTreeSet<Value>,
    /// Where the forward sweep turns into the reverse sweep, when
    /// `wants_turn` (split mode cuts the function there).
    turn: Option<crate::ad::split::Turn>,
    wants_turn: bool,
    /// Loop-invariant tape values pushed once per run of their loop
    /// (`hoist.rs`), and the tape reads of loop bodies they replace.
    hoists: Vec<hoist::Hoist>,
    hoisted_reads: BTreeMap<Inst, usize>,
    /// The shadow cell the last `consume_cell` cleared, with its zero store.
    cleared: Option<(ShadowCell, Inst)>,
    /// Shadow loads whose transpose stores the adjoint (the element is zero
    /// there) and shadow stores whose transpose need not clear the element
    /// (`first_adjoint.rs`).
    shadow_facts: first_adjoint::ShadowFacts,
}

impl Transposer<'_> {
    fn emit(&mut self, data: InstData, types: &[Type]) -> Vec<Value> {
        let inst = self.out.append_inst(self.cur, data, types, self.span);
        self.out.set_tag(inst, Tag::Diff);
        self.out.dfg.inst_results(inst).to_vec()
    }

    fn emit1(&mut self, data: InstData, ty: Type) -> Value {
        self.emit(data, &[ty])[0]
    }

    /// The zero an adjoint slot is cleared to: -0.0 for floats, which adds
    /// to anything exactly (`const-fold` then drops `-0.0 + x`; +0.0 would
    /// turn a -0.0 into +0.0, so `0 + adjoint` stayed in reverse loops).
    fn adjoint_zero(ty: Type) -> Constant {
        match ty.elem() {
            adc_ir::ScalarType::F64 => Constant::F64(-0.0),
            adc_ir::ScalarType::F32 => Constant::F32(-0.0),
            e => Constant::zero(e),
        }
    }

    /// A stack slot for a value of type `ty`, and its store of `init`: the
    /// instructions `build` puts at the top of the entry block.
    fn slot_setup(&mut self, ty: Type, init: Constant) -> (Value, [Inst; 3]) {
        let slot = self
            .out
            .dfg
            .make_inst(InstData::Slot, &[Type::Ref(ty.elem())]);
        let sv = self.out.dfg.inst_results(slot)[0];
        let z = self
            .out
            .dfg
            .make_inst(InstData::Const { value: init }, &[ty]);
        let zv = self.out.dfg.inst_results(z)[0];
        let st = self
            .out
            .dfg
            .make_inst(InstData::RefStore { ptr: sv, value: zv }, &[]);
        (sv, [slot, z, st])
    }

    fn zero(&mut self, ty: Type) -> Value {
        self.emit1(
            InstData::Const {
                value: Constant::zero(ty.elem()),
            },
            ty,
        )
    }

    fn bin(&mut self, op: BinaryOp, a: Value, b: Value) -> Value {
        let ty = self.out.dfg.value_type(a);
        self.emit1(InstData::Binary { op, args: [a, b] }, ty)
    }

    fn ty(&self, v: Value) -> Type {
        self.u.dfg.value_type(v)
    }

    /// A primal operand as seen from the current reverse block.
    fn p(&self, v: Value) -> Value {
        self.map.get(&v).copied().unwrap_or(v)
    }

    /// Adds `c` to the adjoint of differential value `v`.
    fn accumulate(&mut self, v: Value, c: Value) {
        if !self.kinds[v.index()] {
            return;
        }
        if let Some(&slot) = self.slots.get(&v) {
            let old = self.emit1(InstData::RefLoad { ptr: slot }, self.ty(v));
            let new = self.bin(BinaryOp::Add, old, c);
            self.emit(
                InstData::RefStore {
                    ptr: slot,
                    value: new,
                },
                &[],
            );
        } else {
            let new = match self.acc.get(&v) {
                Some(&old) => self.bin(BinaryOp::Add, old, c),
                None => c,
            };
            self.acc.insert(v, new);
        }
    }

    /// The whole adjoint of `v` at its definition, leaving its slot zero.
    fn take_adjoint(&mut self, v: Value) -> Option<Value> {
        let local = self.acc.remove(&v);
        let Some(&slot) = self.slots.get(&v) else {
            return local;
        };
        let ty = self.ty(v);
        let s = self.emit1(InstData::RefLoad { ptr: slot }, ty);
        let z = self.emit1(
            InstData::Const {
                value: Self::adjoint_zero(ty),
            },
            ty,
        );
        self.emit(
            InstData::RefStore {
                ptr: slot,
                value: z,
            },
            &[],
        );
        Some(match local {
            Some(l) => self.bin(BinaryOp::Add, s, l),
            None => s,
        })
    }
}
