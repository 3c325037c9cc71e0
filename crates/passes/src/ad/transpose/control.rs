//! `transpose`'s bookkeeping of the tape and of counted loops: unused
//! tape values dropped, the first tape value of a block, a counted loop's
//! way back and its start computed again.

use super::Transposer;
use crate::cfg::Edge;
use crate::loops::LoopInit;
use adc_ir::{
    BinaryOp, Block, BlockCall, CmpCond, Constant, Inst, InstData, Tag, Type, UnaryOp, Value,
    ValueDef,
};
use std::collections::BTreeSet;

impl Transposer<'_> {
    /// A taped value the reverse sweep does not use (a branch condition,
    /// say, which only the forward replay needed) is neither pushed nor
    /// popped.
    pub(super) fn drop_unused_tape_values(&mut self) {
        // First the primal values recomputed in reverse blocks that the
        // reverse sweep does not use (they may be all that reads a pop).
        loop {
            let uses = crate::defs::use_counts(&self.out);
            let out = &self.out;
            let dead: BTreeSet<Inst> = self
                .replayed
                .iter()
                .copied()
                .filter(|&i| {
                    let results = out.dfg.inst_results(i);
                    !results.is_empty()
                        && results.iter().all(|r| uses[r.index()] == 0)
                        && crate::predicates::is_removable(out, i)
                })
                .collect();
            if dead.is_empty() {
                break;
            }
            self.replayed.retain(|i| !dead.contains(i));
            crate::rewrite::remove_insts(&mut self.out, &dead);
        }
        self.drop_unused_hoists();
        let uses = crate::defs::use_counts(&self.out);
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
        crate::rewrite::remove_insts(&mut self.out, &unused);
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

    /// Counted loop `k`'s start `v` (a value of the replay), computed
    /// again in the current block when the replay computed it from
    /// constants, values of the primal part and the counters of loops
    /// around loop `k`, whose slots hold the iteration being reversed; at
    /// most 8 deep. `None` (nothing emitted): the exit's tape copy is used.
    pub(super) fn remade_start(&mut self, k: usize, v: Value) -> Option<Value> {
        if !self.remakeable_start(k, v, 0) {
            return None;
        }
        Some(self.remake_start(k, v))
    }

    /// The counted loop around loop `k` whose counter is `v`.
    fn enclosing_counter(&self, k: usize, v: Value) -> Option<usize> {
        let exit = self.counted[k].exit;
        (0..self.counted.len())
            .find(|&j| j != k && self.counter(j) == v && self.counted[j].body.contains(&exit))
    }

    fn remakeable_start(&self, k: usize, v: Value, depth: usize) -> bool {
        let u = self.u;
        if !self.diff_defined.contains(&v) || self.enclosing_counter(k, v).is_some() {
            return true;
        }
        let ValueDef::Result(i, _) = u.dfg.value_def(v) else {
            return false;
        };
        let cheap = crate::predicates::is_cheap_arith(u, i);
        let mut ok = cheap && depth < 8 && u.tag(i) == Tag::Primal;
        u.dfg.inst(i).for_each_arg(|a| {
            ok = ok && self.remakeable_start(k, a, depth + 1);
        });
        ok
    }

    fn remake_start(&mut self, k: usize, v: Value) -> Value {
        let u = self.u;
        if !self.diff_defined.contains(&v) {
            return v;
        }
        if let Some(j) = self.enclosing_counter(k, v) {
            let ptr = self.counter_slot(j);
            return self.emit1(InstData::RefLoad { ptr }, Type::I64);
        }
        let ValueDef::Result(i, _) = u.dfg.value_def(v) else {
            unreachable!("remakeable_start checked the definition");
        };
        let mut data = u.dfg.inst(i).clone();
        let mut args = Vec::new();
        data.for_each_arg(|a| args.push(a));
        let made: Vec<Value> = args.iter().map(|&a| self.remake_start(k, a)).collect();
        let mut n = 0;
        data.map_args(|_| {
            n += 1;
            made[n - 1]
        });
        self.emit1(data, u.dfg.value_type(v))
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
            // Of the primal part: seen everywhere.
            LoopInit::Value(v) if !self.diff_defined.contains(&v) => v,
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

    /// Counted loop `k`'s counter as the primal part left it, computed
    /// from where it started (`init`: a constant, or the exit's second
    /// tape value) and the bound its header compares it with, when the
    /// reverse sweep can see that bound: a constant, or a value of the
    /// primal part (defined once per call, so the same at every visit of
    /// the header). `for (j = s; j < n; j += c)` leaves `j` at
    /// `s + c * ceil(max(0, n - s) / c)`, `j != n` at `n`. Then the
    /// counter the exit tapes goes unused, and `drop_unused_tape_values`
    /// takes it off the tape. `None`: any other exit test, left to the
    /// tape.
    pub(super) fn counter_from_bound(&mut self, k: usize, init: Value) -> Option<Value> {
        let u = self.u;
        let (header, exit, step) = {
            let lp = &self.counted[k];
            (lp.header, lp.exit, lp.step)
        };
        let counter = self.counter(k);
        let term = *u.dfg.block(header).insts.last()?;
        let InstData::Branch {
            cond, then_dest, ..
        } = u.dfg.inst(term)
        else {
            return None;
        };
        let (cond, stays_if) = match crate::defs::def_data(u, *cond) {
            Some(InstData::Unary {
                op: UnaryOp::Not,
                arg,
            }) => (*arg, then_dest.block == exit),
            _ => (*cond, then_dest.block != exit),
        };
        let Some(InstData::Cmp { cond: op, args }) = crate::defs::def_data(u, cond) else {
            return None;
        };
        // `counter OP bound` holds while the loop goes on.
        let (mut op, bound) = if args[0] == counter {
            (*op, args[1])
        } else if args[1] == counter {
            (flip(*op), args[0])
        } else {
            return None;
        };
        if !stays_if {
            op = negate(op)?;
        }
        if u.dfg.value_type(bound) != Type::I64 {
            return None;
        }
        let bound = match crate::defs::int_const(u, bound) {
            Some(c) => self.emit1(
                InstData::Const {
                    value: Constant::I64(c),
                },
                Type::I64,
            ),
            None if !self.diff_defined.contains(&bound) => bound,
            None => return None,
        };
        let int = |t: &mut Self, c: i64| {
            t.emit1(
                InstData::Const {
                    value: Constant::I64(c),
                },
                Type::I64,
            )
        };
        // The first value that fails the test, counting from `init` by
        // `step`; `limit` is the first value past the test's range.
        let (limit, up) = match (op, step > 0) {
            (CmpCond::Ne, _) => return Some(bound),
            (CmpCond::Lt, true) => (bound, true),
            (CmpCond::Le, true) => {
                let one = int(self, 1);
                (self.bin(BinaryOp::Add, bound, one), true)
            }
            (CmpCond::Gt, false) => (bound, false),
            (CmpCond::Ge, false) => {
                let one = int(self, 1);
                (self.bin(BinaryOp::Sub, bound, one), false)
            }
            _ => return None,
        };
        let c = step.checked_abs()?;
        if c == 1 {
            let op = if up { BinaryOp::Max } else { BinaryOp::Min };
            return Some(self.bin(op, init, limit));
        }
        // distance = |limit - init| in the direction of travel, 0 when the
        // loop did not run (tested first: from -6e18 down to 4e18 the
        // difference wraps); trips = ceil(distance / c). A distance that
        // does not fit an i64 takes more iterations than any run makes
        // (`loops::MAX_STEP`).
        let (far, near) = if up { (limit, init) } else { (init, limit) };
        let ahead = self.emit1(
            InstData::Cmp {
                cond: CmpCond::Gt,
                args: [far, near],
            },
            Type::BOOL,
        );
        let diff = self.bin(BinaryOp::Sub, far, near);
        let zero = int(self, 0);
        let distance = self.emit1(
            InstData::Select {
                cond: ahead,
                args: [diff, zero],
            },
            Type::I64,
        );
        let round = int(self, c - 1);
        let padded = self.bin(BinaryOp::Add, distance, round);
        let cv = int(self, c);
        let trips = self.bin(BinaryOp::Div, padded, cv);
        let moved = self.bin(BinaryOp::Mul, trips, cv);
        Some(if up {
            self.bin(BinaryOp::Add, init, moved)
        } else {
            self.bin(BinaryOp::Sub, init, moved)
        })
    }
}

/// `a OP b` as `b OP' a`.
fn flip(op: CmpCond) -> CmpCond {
    match op {
        CmpCond::Lt => CmpCond::Gt,
        CmpCond::Le => CmpCond::Ge,
        CmpCond::Gt => CmpCond::Lt,
        CmpCond::Ge => CmpCond::Le,
        other => other,
    }
}

/// `!(a OP b)` on integers; `None` for `!=` (a loop that goes on while its
/// counter equals a bound runs at most once: not worth a rule).
fn negate(op: CmpCond) -> Option<CmpCond> {
    Some(match op {
        CmpCond::Lt => CmpCond::Ge,
        CmpCond::Le => CmpCond::Gt,
        CmpCond::Gt => CmpCond::Le,
        CmpCond::Ge => CmpCond::Lt,
        CmpCond::Eq => CmpCond::Ne,
        CmpCond::Ne => return None,
    })
}
