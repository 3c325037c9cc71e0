//! Ordered reductions in a four-copy loop: `s += x[i] * y[i]`, `dist +=
//! e * e`, `prod *= a[i]`, `s -= ...`.
//!
//! A chain is a parameter `s` of the loop block `U` (not the counter)
//! that copy 0 uses once, as one operand of an `f64` `add` or `mul` or as
//! the first operand of a `sub`; copy `k + 1` applies the same operation
//! to copy `k`'s result, and the back edge (or anything after the
//! copies) may use only copy 3's. The other operand is a value of the
//! copy (a lane of a pair) or one from outside `U`.
//!
//! The lanes of a pair are computed as vectors as before; the chain takes
//! them out one by one and applies the scalar operation in the copies'
//! order (copy 0, 1, 2, 3), so every intermediate result is exactly the
//! scalar loop's: the additions are not reassociated, unlike a vector
//! reduction that keeps partial sums per lane.
//!
//! Free-order sums: a chain of `diff` `add`s, or `sub`s from the running
//! value (`is_free_order`), sums derivative contributions, an adjoint's (`d_w += x[i] * x[i]` in a
//! reverse sweep) or a tangent's, whose order no program states:
//! derivatives are exact to rounding, not to an order of their terms. Its
//! four terms are added as a tree, `(t0 + t2) + (t1 + t3)` (one vector
//! addition of the two pairs, then the two lanes), and the tree's sum to
//! the running value: one addition on the loop-carried chain per
//! iteration instead of four, each waiting on the last (about four cycles
//! each). Primal sums keep the copies' order, bit for bit.

use super::super::FuncTranslator;
use adc_ir::{BinaryOp, Block, Function, Inst, InstData, ScalarType, Tag, Type, Value};
use cranelift_codegen::ir::{self as clif, InstBuilder};
use cranelift_module::Module;
use std::collections::{BTreeMap, BTreeSet};

/// A chain of the loop: where copy 0 applies it, and how.
#[derive(Clone, Debug)]
pub(crate) struct Chain {
    /// The block parameter the chain starts from.
    pub(crate) param: Value,
    /// The position of the chain's instruction in every copy.
    pub(crate) pos: usize,
    /// Whether the running value is the first operand.
    pub(crate) param_first: bool,
    /// Copy 3's instruction: its result is the chain's value after the
    /// four copies.
    pub(crate) last: Inst,
    /// A sum of derivative contributions, added as a tree
    /// (`is_free_order`).
    pub(crate) free_order: bool,
}

/// Whether the chain at `pos` is a free-order sum: an `add` tagged `diff`
/// in every copy, or a `sub` of each term from the running value (`s -= t`:
/// `negate`'s `s + (-t)`, whose tree `s - ((t0 + t2) + (t1 + t3))` is the
/// same bit for bit).
pub(crate) fn is_free_order(func: &Function, copies: &[Vec<Inst>; 4], pos: usize) -> bool {
    copies.iter().all(|copy| {
        func.tag(copy[pos]) == Tag::Diff
            && matches!(
                func.dfg.inst(copy[pos]),
                InstData::Binary {
                    op: BinaryOp::Add | BinaryOp::Sub,
                    ..
                }
            )
    })
}

/// The chains of `copy0`: the parameters of `blk` other than `counter` that
/// copy 0 uses, each used once, in an operation a chain may take. A
/// parameter used in any other way is left out here, and `copy_zero_is_plain`
/// rejects the loop, since the parameter is no value a copy may use.
pub(crate) fn chains_of(
    func: &Function,
    blk: Block,
    copy0: &[Inst],
    counter: Value,
) -> Vec<(Value, usize, bool)> {
    let mut out = Vec::new();
    for &p in func.dfg.block_params(blk) {
        if p == counter || func.dfg.value_type(p) != Type::Scalar(ScalarType::F64) {
            continue;
        }
        let uses: Vec<usize> = copy0
            .iter()
            .enumerate()
            .filter(|(_, x)| {
                let mut uses = false;
                func.dfg.inst(**x).for_each_arg(|a| uses |= a == p);
                uses
            })
            .map(|(n, _)| n)
            .collect();
        let [n] = uses[..] else { continue };
        let InstData::Binary { op, args } = func.dfg.inst(copy0[n]) else {
            continue;
        };
        let f64_result = func
            .dfg
            .inst_results(copy0[n])
            .first()
            .is_some_and(|r| func.dfg.value_type(*r) == Type::Scalar(ScalarType::F64));
        if !f64_result || args[0] == args[1] {
            continue;
        }
        let param_first = args[0] == p;
        let admitted = match op {
            BinaryOp::Add | BinaryOp::Mul => true,
            BinaryOp::Sub => param_first,
            _ => false,
        };
        if admitted {
            out.push((p, n, param_first));
        }
    }
    out
}

/// Whether the results of the chain instructions are used only as a chain
/// allows: copy `k`'s (k < 3) only by copy `k + 1`'s chain instruction,
/// nowhere else in `U` and not outside it. Copy 3's may be used after the
/// copies (the back edge, the exit), but not by any copy.
pub(crate) fn chain_uses_allowed(
    func: &Function,
    insts: &[Inst],
    copies: &[Vec<Inst>; 4],
    pos: usize,
    escaping: &[bool],
) -> bool {
    let result = |k: usize| func.dfg.inst_results(copies[k][pos]).first().copied();
    let in_copies: BTreeSet<Inst> = copies.iter().flatten().copied().collect();
    for k in 0..4 {
        let Some(r) = result(k) else { return false };
        let allowed: Option<Inst> = (k < 3).then(|| copies[k + 1][pos]);
        for &x in insts {
            let mut uses = false;
            func.dfg.inst(x).for_each_arg(|a| uses |= a == r);
            for call in func.dfg.inst(x).successors() {
                uses |= call.args.contains(&r);
            }
            if !uses || Some(x) == allowed {
                continue;
            }
            // Copy 3's result may be used after the copies; any other use
            // of a chain's value breaks the chain.
            if k < 3 || in_copies.contains(&x) {
                return false;
            }
        }
        if k < 3 && escaping[r.index()] {
            return false;
        }
    }
    true
}

impl<M: Module> FuncTranslator<'_, '_, M> {
    /// A chain's two steps for one pair: the lanes in the copies' order
    /// (counting down, the upper lane is the earlier copy), each applied
    /// to the running value with the scalar operation.
    pub(super) fn chain_step(
        &mut self,
        c: &Chain,
        data: &InstData,
        lanes: &BTreeMap<Value, clif::Value>,
        mut running: clif::Value,
        down: bool,
    ) -> clif::Value {
        let InstData::Binary { op, args } = data else {
            unreachable!("invariant: chains_of admits only binary operations")
        };
        let other = args[usize::from(c.param_first)];
        for lane in if down { [1u8, 0] } else { [0, 1] } {
            let x = match lanes.get(&other) {
                Some(v) => self.b.ins().extractlane(*v, lane),
                None => self.v(other),
            };
            let (a, b) = if c.param_first {
                (running, x)
            } else {
                (x, running)
            };
            running = match op {
                BinaryOp::Add => self.b.ins().fadd(a, b),
                BinaryOp::Sub => self.b.ins().fsub(a, b),
                _ => self.b.ins().fmul(a, b),
            };
        }
        running
    }

    /// A free-order chain's step for one pair: the first pair's terms wait
    /// in `deferred`; the second pair's are added to them lane by lane,
    /// the two lanes' sums to each other, and that to the running value.
    /// A term from outside the loop (the same in every copy) is added in
    /// order, after what waits.
    pub(super) fn free_order_step(
        &mut self,
        c: &Chain,
        data: &InstData,
        lanes: &BTreeMap<Value, clif::Value>,
        running: clif::Value,
        down: bool,
        deferred: &mut BTreeMap<usize, clif::Value>,
    ) -> clif::Value {
        let InstData::Binary { op, args } = data else {
            unreachable!("invariant: chains_of admits only binary operations")
        };
        let sub = *op == BinaryOp::Sub;
        let other = args[usize::from(c.param_first)];
        let Some(&terms) = lanes.get(&other) else {
            let running = match deferred.remove(&c.pos) {
                Some(waiting) => self.add_lanes(running, waiting, sub),
                None => running,
            };
            return self.chain_step(c, data, lanes, running, down);
        };
        match deferred.remove(&c.pos) {
            None => {
                deferred.insert(c.pos, terms);
                running
            }
            Some(waiting) => {
                let both = self.b.ins().fadd(waiting, terms);
                self.add_lanes(running, both, sub)
            }
        }
    }

    /// `running + (lane 0 + lane 1)` of the pair `v` (`-` for `sub`).
    fn add_lanes(&mut self, running: clif::Value, v: clif::Value, sub: bool) -> clif::Value {
        let lo = self.b.ins().extractlane(v, 0);
        let hi = self.b.ins().extractlane(v, 1);
        let sum = self.b.ins().fadd(lo, hi);
        if sub {
            self.b.ins().fsub(running, sum)
        } else {
            self.b.ins().fadd(running, sum)
        }
    }
}
