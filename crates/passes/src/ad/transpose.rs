//! `transpose`: turns the differential part of an unzipped function
//! around, giving the reverse-mode signature of docs/derivatives.md#reverse-mode.
//!
//! Assumes: `unzip`'s output (its guarantees are this pass's input).
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
//! reads and clears it. A derivative call becomes a call of the callee's
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

mod control;
mod edges;
mod hoist;
mod insts;

use crate::ad::{diff_values, AdError};
use crate::cfg::incoming_edges;
use crate::loops::{counted_loops, CountedLoop};
use adc_ir::ad::{forward_param_layout, linearized_activities, reverse_signature};
use adc_ir::{
    Activity, AdMode, BinaryOp, Block, BlockCall, CmpCond, Constant, FuncId, Function, Inst,
    InstData, Module, Span, Tag, Type, Value,
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
    let (params, returns) = reverse_signature(&src_f, &spec.params, spec.ret);
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

    fn build(&mut self, src: &Function, acts: &[Activity], ret: Activity) -> Result<(), AdError> {
        let u = self.u;
        // The transition jump and the differential part.
        let (exit_p, dentry) = u
            .layout
            .iter()
            .find_map(|&b| {
                let t = u.terminator(b)?;
                match (u.tag(t), u.dfg.inst(t)) {
                    (Tag::Mixed, InstData::Jump { dest }) => Some((b, dest.block)),
                    _ => None,
                }
            })
            .ok_or_else(|| {
                AdError::internal(
                    "internal error: transpose needs unzip's output",
                    u.deriv_span,
                )
            })?;
        let dpos = u
            .layout
            .iter()
            .position(|b| *b == dentry)
            .expect("invariant: in layout");
        let dblocks: Vec<Block> = u.layout[dpos..].to_vec();
        let dset: BTreeSet<Block> = dblocks.iter().copied().collect();
        self.out.layout.truncate(dpos);
        let entry = u.layout[0];
        // Entry parameters: drop scalar tangents, add seeds.
        let (lin_acts, _) = linearized_activities(
            self.u
                .deriv
                .as_ref()
                .expect("invariant: `run` checked the request"),
        );
        let layout = forward_param_layout(src, &lin_acts);
        let old_params = u.dfg.block_params(entry).to_vec();
        let mut grads = Vec::new();
        for (k, (i, is_tan)) in layout.iter().enumerate().rev() {
            if *is_tan && matches!(src.params[*i].ty, Type::Scalar(_)) {
                self.out.dfg.remove_block_param(entry, k);
            }
        }
        for (k, (i, is_tan)) in layout.iter().enumerate() {
            if *is_tan && acts[*i] == Activity::Active {
                grads.push(old_params[k]);
            }
        }
        let seeds: Vec<Value> = if matches!(ret, Activity::Active | Activity::ActiveOnly) {
            src.returns
                .iter()
                .filter(|t| t.elem().is_float())
                .map(|t| self.out.dfg.append_block_param(entry, *t))
                .collect()
        } else {
            Vec::new()
        };
        // Slots for adjoints that cross blocks: values used in a block
        // other than their own, and the gradients.
        let mut crossing: BTreeSet<Value> = grads.iter().copied().collect();
        let mut def_block: BTreeMap<Value, Block> = BTreeMap::new();
        for &b in &dblocks {
            for &p in u.dfg.block_params(b) {
                def_block.insert(p, b);
            }
            for &i in &u.dfg.block(b).insts {
                for &r in u.dfg.inst_results(i) {
                    def_block.insert(r, b);
                }
            }
        }
        for &b in &dblocks {
            for &i in &u.dfg.block(b).insts {
                u.dfg.inst(i).for_each_arg(|a| {
                    if self.kinds[a.index()] && def_block.get(&a) != Some(&b) {
                        crossing.insert(a);
                    }
                });
            }
        }
        self.diff_defined = def_block.keys().copied().collect();
        // Counted loops' counters live in slots during the reverse sweep.
        self.counted = counted_loops(u, &dset);
        for k in 0..self.counted.len() {
            crossing.insert(self.counter(k));
            // A counter that entered with a value of the differential
            // part: that value, from the exit's tape (`unzip`), in a slot
            // of its own.
            if let crate::loops::LoopInit::Value(v) = self.counted[k].init {
                if self.diff_defined.contains(&v) {
                    crossing.insert(v);
                }
            }
        }
        let mut slot_insts = self.plan_hoists(&dblocks);
        for &v in &crossing {
            let ty = self.ty(v);
            let (sv, insts) = self.slot_setup(ty, Self::adjoint_zero(ty));
            slot_insts.extend(insts);
            self.slots.insert(v, sv);
        }
        for (n, i) in slot_insts.iter().enumerate() {
            self.out.set_span(*i, Span::UNDEFINED);
            self.out.set_tag(*i, Tag::Diff);
            self.out.dfg.block_mut(entry).insts.insert(n, *i);
        }
        // Reverse blocks, and the final block that returns.
        let rblock: BTreeMap<Block, Block> = dblocks
            .iter()
            .map(|&b| (b, self.out.dfg.make_block()))
            .collect();
        for &b in dblocks.iter().rev() {
            self.out.layout.push(rblock[&b]);
        }
        self.edge_adjoint_params(&dblocks, &crossing, &rblock);
        let fin = self.out.dfg.make_block();
        self.out.layout.push(fin);
        let dexit = *dblocks
            .iter()
            .find(|b| {
                matches!(
                    u.terminator(**b).map(|t| u.dfg.inst(t)),
                    Some(InstData::Return { .. })
                )
            })
            .ok_or_else(|| {
                AdError::internal(
                    "internal error: no return in the differential part",
                    u.deriv_span,
                )
            })?;
        if self.wants_turn {
            let results = crate::ad::split::forward_results(
                u,
                &mut self.out,
                &self.kinds,
                &dblocks,
                exit_p,
                dexit,
            )?;
            self.turn = Some(crate::ad::split::Turn {
                exit: exit_p,
                rev_entry: rblock[&dexit],
                forward_blocks: dpos,
                results,
            });
        }
        let t = u.terminator(exit_p).expect("found above");
        *self.out.dfg.inst_mut(t) = InstData::Jump {
            dest: BlockCall {
                block: rblock[&dexit],
                args: vec![],
            },
        };
        self.out.set_tag(t, Tag::Primal);
        let edges = incoming_edges(u);
        let mut primal_returns = Vec::new();
        // `unzip` lays the primal twins out in the same order, before.
        for (&b, &twin) in dblocks.iter().zip(&u.layout) {
            self.cur = rblock[&b];
            self.reverse_block(b, twin, &seeds, &mut primal_returns)?;
            // Back along the edge taken.
            let params: Vec<Value> = u.dfg.block_params(b).to_vec();
            let mut adjs = Vec::new();
            for &p in &params {
                adjs.push(if self.kinds[p.index()] {
                    self.take_adjoint(p)
                } else {
                    None
                });
            }
            if let Some(k) = self.counted.iter().position(|l| l.exit == b) {
                // Entering the loop backwards: its counter as the primal
                // part left it, computed from its start and bound when it
                // can be (`counter_from_bound`), else the exit's first tape
                // value.
                let init = match self.counted[k].init {
                    // A start the primal part defines (once per call) is
                    // seen here as it is; its tape copy goes unused.
                    crate::loops::LoopInit::Value(v) if !self.diff_defined.contains(&v) => v,
                    // A start the replay computed from the counters of
                    // enclosing loops (`for (r = col + 1; ...)`) is computed
                    // again here; its tape copy goes unused.
                    crate::loops::LoopInit::Value(v) => {
                        let value = match self.remade_start(k, v) {
                            Some(value) => value,
                            None => self.nth_tape_value(b, 1).ok_or_else(|| {
                                AdError::internal(
                                    "internal error: no loop start at its exit",
                                    u.deriv_span,
                                )
                            })?,
                        };
                        let ptr = self.slots[&v];
                        self.emit(InstData::RefStore { ptr, value }, &[]);
                        value
                    }
                    crate::loops::LoopInit::Const(c) => self.emit1(
                        InstData::Const {
                            value: Constant::I64(c),
                        },
                        Type::I64,
                    ),
                };
                let value = match self.counter_from_bound(k, init) {
                    Some(v) => v,
                    None => self.first_tape_value(b).ok_or_else(|| {
                        AdError::internal("internal error: no counter at a loop exit", u.deriv_span)
                    })?,
                };
                let ptr = self.counter_slot(k);
                self.emit(InstData::RefStore { ptr, value }, &[]);
            }
            if b == dentry {
                self.emit(
                    InstData::Jump {
                        dest: BlockCall {
                            block: fin,
                            args: vec![],
                        },
                    },
                    &[],
                );
                continue;
            }
            let es: Vec<_> = edges[&b]
                .iter()
                .filter(|e| dset.contains(&e.from))
                .collect();
            let edge_targets: Vec<Block> = es.iter().map(|_| self.out.dfg.make_block()).collect();
            let counted = self.counted.iter().position(|l| l.header == b);
            if let Some(k) = counted {
                self.counted_dispatch(k, &es, &edge_targets);
            }
            match if counted.is_some() {
                usize::MAX
            } else {
                es.len()
            } {
                usize::MAX => (),
                0 => {
                    return Err(AdError::internal(
                        "internal error: unreachable differential block",
                        u.deriv_span,
                    ))
                }
                1 => {
                    self.emit(
                        InstData::Jump {
                            dest: BlockCall {
                                block: edge_targets[0],
                                args: vec![],
                            },
                        },
                        &[],
                    );
                }
                n => {
                    let idx = self.first_tape_value(b).ok_or_else(|| {
                        AdError::internal("internal error: no edge index", u.deriv_span)
                    })?;
                    for (k, &e) in edge_targets.iter().enumerate().take(n - 1) {
                        let value = crate::ad::unzip::edge_index_constant(
                            self.out.dfg.value_type(idx),
                            k as i64,
                        );
                        let kc = self.emit1(InstData::Const { value }, Type::Scalar(value.ty()));
                        let c = self.emit1(
                            InstData::Cmp {
                                cond: CmpCond::Eq,
                                args: [idx, kc],
                            },
                            Type::BOOL,
                        );
                        let next = self.out.dfg.make_block();
                        self.emit(
                            InstData::Branch {
                                cond: c,
                                then_dest: BlockCall {
                                    block: e,
                                    args: vec![],
                                },
                                else_dest: BlockCall {
                                    block: next,
                                    args: vec![],
                                },
                            },
                            &[],
                        );
                        self.out.layout.push(next);
                        self.cur = next;
                    }
                    self.emit(
                        InstData::Jump {
                            dest: BlockCall {
                                block: edge_targets[n - 1],
                                args: vec![],
                            },
                        },
                        &[],
                    );
                }
            }
            for (e, &eb) in es.iter().zip(&edge_targets) {
                self.out.layout.push(eb);
                self.cur = eb;
                self.edge_back(e, &adjs, rblock[&e.from]);
            }
        }
        // The final block: primal results, then gradients.
        self.cur = fin;
        let mut rets = if ret == Activity::ActiveOnly {
            Vec::new()
        } else {
            primal_returns
        };
        for g in grads {
            let v = self.take_adjoint(g);
            let v = match v {
                // A gradient that got nothing is +0.0, not the slot's -0.0:
                // `-0.0 + 0.0` is `0.0`, anything else stays as it is.
                Some(v) if self.ty(g).elem().is_float() => {
                    let z = self.zero(self.ty(g));
                    self.bin(BinaryOp::Add, v, z)
                }
                Some(v) => v,
                None => self.zero(self.ty(g)),
            };
            rets.push(v);
        }
        self.emit(InstData::Return { args: rets }, &[]);
        self.drop_unused_tape_values();
        Ok(())
    }

    /// The reverse of one differential block, up to its control flow.
    fn reverse_block(
        &mut self,
        b: Block,
        primal_twin: Block,
        seeds: &[Value],
        primal_returns: &mut Vec<Value>,
    ) -> Result<(), AdError> {
        let u = self.u;
        self.acc.clear();
        self.map.clear();
        // What the edge taken passed back for the values only this block
        // uses (`edge_adjoint_params`).
        for &(v, param) in self.edge_adjoints.get(&b).into_iter().flatten() {
            self.acc.insert(v, param);
        }
        for k in 0..self.counted.len() {
            if self.counted[k].body.contains(&b) {
                let ptr = self.counter_slot(k);
                let i = self.emit1(InstData::RefLoad { ptr }, Type::I64);
                let counter = self.counter(k);
                self.map.insert(counter, i);
            }
        }
        let insts = u.dfg.block(b).insts.clone();
        let reads: Vec<Inst> = insts
            .iter()
            .copied()
            .filter(|i| matches!(u.dfg.inst(*i), InstData::TapeRead { tape: 0 }))
            .collect();
        // The primal twin's pushes, in the same order as these reads.
        let pushes: Vec<Inst> = u
            .dfg
            .block(primal_twin)
            .insts
            .iter()
            .copied()
            .filter(|i| matches!(u.dfg.inst(*i), InstData::TapePush { tape: 0, .. }))
            .collect();
        if pushes.len() != reads.len() {
            return Err(AdError::internal(
                "internal error: tape pushes and reads do not pair up",
                u.deriv_span,
            ));
        }
        self.pop_hoisted(b);
        for (&i, &push) in reads.iter().zip(&pushes).rev() {
            let r = u.dfg.inst_results(i)[0];
            if let Some(v) = self.load_hoisted(i) {
                self.map.insert(r, v);
                continue;
            }
            let v = self.emit1(InstData::TapePop { tape: 0 }, self.ty(r));
            self.map.insert(r, v);
            self.tape_pairs.push((v, push));
        }
        for &i in &insts {
            if u.tag(i) == Tag::Primal
                && !matches!(u.dfg.inst(i), InstData::TapeRead { tape: 0 })
                && !u.dfg.inst(i).is_terminator()
            {
                let mut d = u.dfg.inst(i).clone();
                d.map_args(|a| self.p(a));
                let types = crate::defs::result_types(u, i);
                let vals = self.emit(d, &types);
                if let Some(&last) = self.out.dfg.block(self.cur).insts.last() {
                    self.replayed.push(last);
                }
                for (r, v) in u.dfg.inst_results(i).iter().zip(vals) {
                    self.map.insert(*r, v);
                }
            }
        }
        let term = *insts.last().expect("invariant: blocks end in a terminator");
        if let InstData::Return { args } = u.dfg.inst(term) {
            let mut k = 0;
            for &a in args {
                if self.kinds[a.index()] {
                    if let Some(&s) = seeds.get(k) {
                        self.accumulate(a, s);
                    }
                    k += 1;
                } else {
                    primal_returns.push(self.p(a));
                }
            }
        }
        for &i in insts.iter().rev() {
            if u.tag(i) != Tag::Primal && !u.dfg.inst(i).is_terminator() {
                self.span = u.span(i);
                self.transpose_inst(i)?;
            }
        }
        Ok(())
    }
}
