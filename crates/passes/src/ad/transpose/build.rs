//! `transpose`'s frame of the reverse function (`Transposer::build`): the
//! differential part found, the entry parameters (seeds in, scalar tangents
//! out), the adjoint slots, the reverse blocks in reverse order with the
//! edges back, and the final block that returns the gradients.

use super::Transposer;
use crate::ad::AdError;
use crate::cfg::incoming_edges;
use crate::loops::counted_loops;
use adc_ir::ad::{forward_param_layout, linearized_activities};
use adc_ir::{
    Activity, BinaryOp, Block, BlockCall, CmpCond, Constant, Function, InstData, Span, Tag, Type,
    Value,
};
use std::collections::{BTreeMap, BTreeSet};

impl Transposer<'_> {
    pub(super) fn build(
        &mut self,
        src: &Function,
        acts: &[Activity],
        ret: Activity,
    ) -> Result<(), AdError> {
        let DiffPart {
            exit_p,
            dentry,
            dpos,
            dblocks,
            dset,
        } = self.differential_part()?;
        let u = self.u;
        let entry = u.layout[0];
        let (grads, seeds) = self.entry_params(src, acts, ret, entry);
        let crossing = self.crossing_slots(&dblocks, &dset, &grads, entry);
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
                self.enter_loop_backwards(k, b)?;
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
            let n = if counted.is_some() {
                usize::MAX
            } else {
                es.len()
            };
            self.branch_to_edges(b, n, &edge_targets)?;
            for (e, &eb) in es.iter().zip(&edge_targets) {
                self.out.layout.push(eb);
                self.cur = eb;
                self.edge_back(e, &adjs, rblock[&e.from]);
            }
        }
        self.final_block(fin, ret, primal_returns, grads);
        self.drop_unused_tape_values();
        Ok(())
    }

    /// The differential part: the block whose mixed jump leaves the
    /// primal part, and the blocks from its target on (cut from the
    /// output's layout, where the reverse blocks take their place).
    fn differential_part(&mut self) -> Result<DiffPart, AdError> {
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
        Ok(DiffPart {
            exit_p,
            dentry,
            dpos,
            dblocks,
            dset,
        })
    }

    /// The entry block's parameters: scalar tangents dropped, a seed per
    /// float return added; returns the gradients' values and the seeds.
    fn entry_params(
        &mut self,
        src: &Function,
        acts: &[Activity],
        ret: Activity,
        entry: Block,
    ) -> (Vec<Value>, Vec<Value>) {
        let u = self.u;
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
        // Vector mode (`widen`): gradients go to the arrays that stand for
        // scalar tangents, and the seeds come from an array.
        let width = self.u.deriv.as_ref().map_or(1, |s| s.width);
        let vector = self.u.deriv.as_ref().is_some_and(|s| s.vector);
        for (k, (i, is_tan)) in layout.iter().enumerate().rev() {
            if *is_tan && matches!(src.params[*i].ty, Type::Scalar(_)) && !vector {
                self.out.dfg.remove_block_param(entry, k);
            }
        }
        for (k, (i, is_tan)) in layout.iter().enumerate() {
            if *is_tan && acts[*i] == Activity::Active && !vector {
                grads.push(old_params[k]);
            }
        }
        let seeds: Vec<Value> = if vector {
            self.vector_seeds(src, entry, width)
        } else if matches!(ret, Activity::Active | Activity::ActiveOnly) {
            src.returns
                .iter()
                .filter(|t| t.elem().is_float())
                .map(|t| self.out.dfg.append_block_param(entry, *t))
                .collect()
        } else {
            Vec::new()
        };
        (grads, seeds)
    }

    /// Vector mode's seeds: the `seed` array appended to the entry's
    /// parameters, checked to hold `width` elements, loaded at the top of
    /// the entry, lane by lane (`diff` loads; reverse vector mode has one
    /// float result).
    fn vector_seeds(&mut self, src: &Function, entry: Block, width: u32) -> Vec<Value> {
        let Some(&ty) = src.returns.iter().find(|t| t.elem().is_float()) else {
            return Vec::new();
        };
        let seed = self
            .out
            .dfg
            .append_block_param(entry, Type::Array(ty.elem()));
        let mut insts = Vec::new();
        let mut make = |out: &mut Function, data: InstData, types: &[Type]| {
            let i = out.dfg.make_inst(data, types);
            insts.push(i);
            out.dfg.inst_results(i).first().copied()
        };
        let w = make(
            &mut self.out,
            InstData::Const {
                value: Constant::I64(i64::from(width)),
            },
            &[Type::I64],
        );
        let w = w.expect("invariant: a constant has a result");
        make(
            &mut self.out,
            InstData::LenCheck {
                args: [w, seed],
                what: adc_ir::LenCheckOf::Shadow,
            },
            &[],
        );
        // The indices first: the loads stand side by side.
        let indices: Vec<Value> = (0..width)
            .map(|k| {
                make(
                    &mut self.out,
                    InstData::Const {
                        value: Constant::I64(i64::from(k)),
                    },
                    &[Type::I64],
                )
                .expect("invariant: a constant has a result")
            })
            .collect();
        let mut seeds = Vec::new();
        for index in indices {
            let load = InstData::Load {
                array: seed,
                index,
                checked: false,
            };
            seeds.push(make(&mut self.out, load, &[ty]).expect("invariant: a load has a result"));
        }
        // The seed's length check points at the attribute, as the other
        // parameters' checks do (`widen`); the rest at nothing.
        let attribute = self.out.deriv_span;
        for (n, i) in insts.into_iter().enumerate() {
            let check = matches!(self.out.dfg.inst(i), InstData::LenCheck { .. });
            self.out
                .set_span(i, if check { attribute } else { Span::UNDEFINED });
            // The seed's loads are its lanes (codegen pairs them).
            let lane = matches!(self.out.dfg.inst(i), InstData::Load { .. });
            self.out
                .set_tag(i, if lane { Tag::Diff } else { Tag::Primal });
            self.out.dfg.block_mut(entry).insts.insert(n, i);
        }
        seeds
    }

    /// The adjoint slots, made at the top of the entry block: for values
    /// used in a block other than their own, the gradients, the counted
    /// loops' counters (and their starts from the differential part), and
    /// the hoisted tape values; returns the values that cross blocks.
    fn crossing_slots(
        &mut self,
        dblocks: &[Block],
        dset: &BTreeSet<Block>,
        grads: &[Value],
        entry: Block,
    ) -> BTreeSet<Value> {
        let u = self.u;
        // Slots for adjoints that cross blocks: values used in a block
        // other than their own, and the gradients.
        let mut crossing: BTreeSet<Value> = grads.iter().copied().collect();
        let mut def_block: BTreeMap<Value, Block> = BTreeMap::new();
        for &b in dblocks {
            for &p in u.dfg.block_params(b) {
                def_block.insert(p, b);
            }
            for &i in &u.dfg.block(b).insts {
                for &r in u.dfg.inst_results(i) {
                    def_block.insert(r, b);
                }
            }
        }
        for &b in dblocks {
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
        self.counted = counted_loops(u, dset);
        self.shadow_facts = super::first_adjoint::shadow_facts(u, dset, &self.counted);
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
        let mut slot_insts = self.plan_hoists(dblocks);
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
        crossing
    }

    /// At the reverse block of counted loop `k`'s exit `b`: the counter's
    /// slot set to its value when the primal part left the loop.
    fn enter_loop_backwards(&mut self, k: usize, b: Block) -> Result<(), AdError> {
        let u = self.u;
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
                        AdError::internal("internal error: no loop start at its exit", u.deriv_span)
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

        Ok(())
    }

    /// The end of `b`'s reverse block: to the edge block of the edge the
    /// primal part took (`n` edges; `usize::MAX` when `b` is a counted
    /// loop's header, which `counted_dispatch` handled).
    fn branch_to_edges(
        &mut self,
        b: Block,
        n: usize,
        edge_targets: &[Block],
    ) -> Result<(), AdError> {
        let u = self.u;
        match n {
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
        Ok(())
    }

    /// The final block returns the primal results (unless `ActiveOnly`),
    /// then the gradients.
    fn final_block(
        &mut self,
        fin: Block,
        ret: Activity,
        primal_returns: Vec<Value>,
        grads: Vec<Value>,
    ) {
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
    }
}

/// `Transposer::differential_part`'s answer.
struct DiffPart {
    /// The primal part's exit, whose mixed jump enters the differential part.
    exit_p: Block,
    /// The differential part's first block.
    dentry: Block,
    /// Its position in the layout.
    dpos: usize,
    /// Its blocks in layout order, and as a set.
    dblocks: Vec<Block>,
    dset: BTreeSet<Block>,
}
