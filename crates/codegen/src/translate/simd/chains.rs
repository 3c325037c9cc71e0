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

use adc_ir::{BinaryOp, Block, Function, Inst, InstData, ScalarType, Type, Value};
use std::collections::BTreeSet;

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
