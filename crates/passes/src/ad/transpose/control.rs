//! `transpose`'s bookkeeping of the tape and of counted loops: unused
//! tape values dropped, the first tape value of a block, a counted loop's
//! way back.

use super::Transposer;
use crate::loops::LoopInit;
use crate::util::Edge;
use adc_ir::{BinaryOp, Block, BlockCall, CmpCond, Constant, Inst, InstData, Type, Value};
use std::collections::BTreeSet;

impl Transposer<'_> {
    /// A taped value the reverse sweep does not use (a branch condition,
    /// say, which only the forward replay needed) is neither pushed nor
    /// popped.
    pub(super) fn drop_unused_tape_values(&mut self) {
        // First the primal values recomputed in reverse blocks that the
        // reverse sweep does not use (they may be all that reads a pop).
        loop {
            let uses = crate::util::use_counts(&self.out);
            let out = &self.out;
            let dead: BTreeSet<Inst> = self
                .replayed
                .iter()
                .copied()
                .filter(|&i| {
                    let results = out.dfg.inst_results(i);
                    !results.is_empty()
                        && results.iter().all(|r| uses[r.index()] == 0)
                        && crate::util::is_removable(out, i)
                })
                .collect();
            if dead.is_empty() {
                break;
            }
            self.replayed.retain(|i| !dead.contains(i));
            crate::util::remove_insts(&mut self.out, &dead);
        }
        let uses = crate::util::use_counts(&self.out);
        let unused: BTreeSet<Inst> = self
            .tape_pairs
            .iter()
            .filter(|(v, _)| uses[v.index()] == 0)
            .flat_map(|(v, push)| {
                let pop = match self.out.dfg.value_def(*v) {
                    adc_ir::ValueDef::Result(i, _) => Some(i),
                    _ => None,
                };
                pop.into_iter().chain([*push])
            })
            .collect();
        crate::util::remove_insts(&mut self.out, &unused);
    }

    /// The reverse-block value of the first tape read of differential block
    /// `b` (its edge index, or the counter at a loop exit).
    pub(super) fn first_tape_value(&self, b: Block) -> Option<Value> {
        self.nth_tape_value(b, 0)
    }

    /// The `n`th tape value (from 0) block `b` reads, as seen from its
    /// reverse block.
    pub(super) fn nth_tape_value(&self, b: Block, n: usize) -> Option<Value> {
        let u = self.u;
        let read = u
            .dfg
            .block(b)
            .insts
            .iter()
            .copied()
            .filter(|i| matches!(u.dfg.inst(*i), InstData::TapeRead { tape: 0 }))
            .nth(n)?;
        Some(self.p(u.dfg.inst_results(read)[0]))
    }

    /// Counted loop `k`'s counter: its header's parameter.
    pub(super) fn counter(&self, k: usize) -> Value {
        let lp = &self.counted[k];
        self.u.dfg.block_params(lp.header)[lp.param]
    }

    pub(super) fn counter_slot(&self, k: usize) -> Value {
        self.slots[&self.counter(k)]
    }

    /// The way back from counted loop `k`'s header: to the entry edge
    /// when the counter is at its initial value, else along the back edge,
    /// with the counter stepped back.
    pub(super) fn counted_dispatch(&mut self, k: usize, es: &[&Edge], targets: &[Block]) {
        let (init, step, latch) = {
            let lp = &self.counted[k];
            (lp.init, lp.step, lp.latch)
        };
        let back = es
            .iter()
            .position(|e| e.from == latch)
            .expect("invariant: a counted loop has a back edge");
        let entry = 1 - back;
        let i = self.p(self.counter(k));
        let c0 = match init {
            LoopInit::Const(c) => self.emit1(
                InstData::Const {
                    value: Constant::I64(c),
                },
                Type::I64,
            ),
            // Set when the sweep entered the loop backwards, at its exit.
            LoopInit::Value(v) => self.emit1(
                InstData::RefLoad {
                    ptr: self.slots[&v],
                },
                Type::I64,
            ),
        };
        let first = self.emit1(
            InstData::Cmp {
                cond: CmpCond::Eq,
                args: [i, c0],
            },
            Type::BOOL,
        );
        self.emit(
            InstData::Branch {
                cond: first,
                then_dest: BlockCall {
                    block: targets[entry],
                    args: vec![],
                },
                else_dest: BlockCall {
                    block: targets[back],
                    args: vec![],
                },
            },
            &[],
        );
        // The back edge's own block steps the counter back first.
        let cur = self.cur;
        self.cur = targets[back];
        let c = self.emit1(
            InstData::Const {
                value: Constant::I64(step),
            },
            Type::I64,
        );
        let prev = self.bin(BinaryOp::Sub, i, c);
        let ptr = self.counter_slot(k);
        self.emit(InstData::RefStore { ptr, value: prev }, &[]);
        self.cur = cur;
    }
}
