//! `transpose`'s tape hoisting: a value that a counted loop's body reads
//! from the tape but that is defined before the loop is the same in every
//! iteration. `unzip` tapes it per iteration (each block tapes what its
//! twin reads: in GMM's triangular loop `y[r] += l[b + r] * diff[col]`,
//! `diff[col]` is 8 bytes per multiply-add). Here it is taped once per run
//! of the loop instead, at the loop's exit (`unzip` gives every counted
//! loop an exit block of its own): the exit's primal twin pushes it after
//! its own values, the exit's reverse block, which the reverse sweep passes
//! before every reverse iteration of that run, pops it first into a slot,
//! and the body's reverse blocks load it from there (`mem2reg` makes it a
//! register). The loop chosen is the outermost counted loop around the
//! reading block that the value is defined before, so a value read in a
//! nest goes on the tape once per run of the whole nest.
//!
//! Only the forward replay of `unzip`'s output could not do this (it reads
//! the tape in push order, and the loop runs before its exit); the reverse
//! sweep pops in the opposite order, which is what makes it possible.

use super::Transposer;
use adc_ir::dom::DomTree;
use adc_ir::{Block, Constant, Inst, InstData, Span, Tag, Type, Value};
use std::collections::{BTreeMap, BTreeSet};

/// One loop-invariant tape value, pushed once per run of its loop.
pub(super) struct Hoist {
    /// The differential block of the loop's exit.
    exit: Block,
    /// The primal-part value pushed.
    value: Value,
    ty: Type,
    span: Span,
    /// Where the reverse sweep keeps it (`out`).
    slot: Value,
    /// The push moved to the exit's primal twin, the pop and the slot
    /// store of the exit's reverse block, the body's slot loads (`out`).
    push: Option<Inst>,
    pop_and_store: Vec<Inst>,
    loads: Vec<Inst>,
}

impl Transposer<'_> {
    /// Chooses the tape reads of `dblocks` (the differential part, after the
    /// primal twins in `u`'s layout) to hoist, moves their pushes in `out`,
    /// and returns the slot setup instructions for the entry block.
    pub(super) fn plan_hoists(&mut self, dblocks: &[Block]) -> Vec<Inst> {
        let u = self.u;
        let dpos = u.layout.len() - dblocks.len();
        let twin: BTreeMap<Block, Block> = dblocks
            .iter()
            .copied()
            .zip(u.layout.iter().copied())
            .collect();
        let mut primal_def: BTreeMap<Value, Block> = BTreeMap::new();
        for &b in &u.layout[..dpos] {
            for &p in u.dfg.block_params(b) {
                primal_def.insert(p, b);
            }
            for &i in &u.dfg.block(b).insts {
                for &r in u.dfg.inst_results(i) {
                    primal_def.insert(r, b);
                }
            }
        }
        let primal_bodies: Vec<BTreeSet<Block>> = self
            .counted
            .iter()
            .map(|l| l.body.iter().map(|d| twin[d]).collect())
            .collect();
        let dom = DomTree::new(u);
        let mut hoist_of: BTreeMap<(usize, Value), usize> = BTreeMap::new();
        let mut moved: BTreeSet<Inst> = BTreeSet::new();
        let mut setup = Vec::new();
        for &d in dblocks {
            let reads = tape_insts(u, d, true);
            let pushes = tape_insts(u, twin[&d], false);
            if reads.len() != pushes.len() {
                continue; // `reverse_block` reports it
            }
            // A loop exit's first values (its counter, its start) are where
            // `transpose` expects them.
            let forced = self.counted.iter().find(|l| l.exit == d).map_or(0, |l| {
                1 + usize::from(matches!(l.init, crate::loops::LoopInit::Value(_)))
            });
            for (&read, &push) in reads.iter().zip(&pushes).skip(forced) {
                let InstData::TapePush { value, .. } = *u.dfg.inst(push) else {
                    continue;
                };
                let ty = u.dfg.value_type(value);
                let Some(&def) = primal_def.get(&value) else {
                    continue;
                };
                if !matches!(ty, Type::Scalar(_)) {
                    continue;
                }
                let outermost = (0..self.counted.len())
                    .filter(|&k| {
                        self.counted[k].body.contains(&d) && !primal_bodies[k].contains(&def)
                    })
                    .filter(|&k| dom.dominates(def, twin[&self.counted[k].exit]))
                    .max_by_key(|&k| self.counted[k].body.len());
                let Some(k) = outermost else {
                    continue;
                };
                let next = self.hoists.len();
                let h = *hoist_of.entry((k, value)).or_insert(next);
                if h == next {
                    let (slot, insts) = self.hoist_slot(ty);
                    setup.extend(insts);
                    self.hoists.push(Hoist {
                        exit: self.counted[k].exit,
                        value,
                        ty,
                        span: u.span(push),
                        slot,
                        push: None,
                        pop_and_store: Vec::new(),
                        loads: Vec::new(),
                    });
                }
                self.hoisted_reads.insert(read, h);
                moved.insert(push);
            }
        }
        crate::rewrite::remove_insts(&mut self.out, &moved);
        for h in 0..self.hoists.len() {
            let (exit, value, span) = {
                let x = &self.hoists[h];
                (twin[&x.exit], x.value, x.span)
            };
            let push = self
                .out
                .dfg
                .make_inst(InstData::TapePush { value, tape: 0 }, &[]);
            self.out.set_span(push, span);
            self.out.set_tag(push, Tag::Primal);
            let insts = &mut self.out.dfg.block_mut(exit).insts;
            // After the exit's own pushes, before its terminator.
            let at = insts.len() - 1;
            insts.insert(at, push);
            self.hoists[h].push = Some(push);
        }
        setup
    }

    /// A slot that starts at `zero` (`Transposer::slot_setup`): the hoisted
    /// value's own, not an adjoint.
    fn hoist_slot(&mut self, ty: Type) -> (Value, [Inst; 3]) {
        self.slot_setup(ty, Constant::zero(ty.elem()))
    }

    /// At the top of the reverse block of differential block `b`: pops the
    /// values hoisted to `b` (pushed last, so popped first) into their slots.
    pub(super) fn pop_hoisted(&mut self, b: Block) {
        for h in (0..self.hoists.len()).rev() {
            if self.hoists[h].exit != b {
                continue;
            }
            let (ty, ptr) = (self.hoists[h].ty, self.hoists[h].slot);
            let value = self.emit1(InstData::TapePop { tape: 0 }, ty);
            self.emit(InstData::RefStore { ptr, value }, &[]);
            let insts = &self.out.dfg.block(self.cur).insts;
            let pop_and_store = insts[insts.len() - 2..].to_vec();
            self.hoists[h].pop_and_store = pop_and_store;
        }
    }

    /// The reverse-block value of hoisted tape read `read`, loaded from its
    /// slot; `None` for a read that stays in its block.
    pub(super) fn load_hoisted(&mut self, read: Inst) -> Option<Value> {
        let h = *self.hoisted_reads.get(&read)?;
        let (ty, ptr) = (self.hoists[h].ty, self.hoists[h].slot);
        let v = self.emit1(InstData::RefLoad { ptr }, ty);
        let load = *self
            .out
            .dfg
            .block(self.cur)
            .insts
            .last()
            .expect("invariant: emit1 just appended the load");
        self.hoists[h].loads.push(load);
        Some(v)
    }

    /// Takes out the hoisted values no reverse block uses (their loads are
    /// all dead): loads, pop, slot store and push.
    pub(super) fn drop_unused_hoists(&mut self) {
        let uses = crate::defs::use_counts(&self.out);
        let mut dead = BTreeSet::new();
        for h in &self.hoists {
            let out = &self.out;
            let used = h
                .loads
                .iter()
                .any(|&l| out.dfg.inst_results(l).iter().any(|r| uses[r.index()] > 0));
            if !used {
                dead.extend(h.loads.iter().copied());
                dead.extend(h.pop_and_store.iter().copied());
                dead.extend(h.push);
            }
        }
        crate::rewrite::remove_insts(&mut self.out, &dead);
    }
}

/// The level-0 tape reads (`reads`) or pushes of block `b` of `u`.
fn tape_insts(u: &adc_ir::Function, b: Block, reads: bool) -> Vec<Inst> {
    u.dfg
        .block(b)
        .insts
        .iter()
        .copied()
        .filter(|i| match u.dfg.inst(*i) {
            InstData::TapeRead { tape: 0 } => reads,
            InstData::TapePush { tape: 0, .. } => !reads,
            _ => false,
        })
        .collect()
}
