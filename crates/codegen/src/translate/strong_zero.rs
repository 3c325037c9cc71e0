//! Lowering of `mulz`, the strong-zero product of docs/derivatives.md#non-smooth-and-singular-points:
//! `x * y`, except exactly zero when `x` (an adjoint or tangent) is zero,
//! even if `y` (a local partial) is infinite or NaN.
//!
//! x86-64 has no conditional move for floats, so a `select` becomes two
//! branches. They are well predicted and add no latency, but cost issue
//! slots: in a loop bound by throughput (heat's reverse stencil) masking
//! is faster, a vector compare giving lane 0 all ones when `x != 0` and an
//! `and` with the product. The mask adds two cycles of latency, though, so
//! a product on a loop-carried recurrence (an adjoint passed from one
//! iteration to the next, as in Bessel's series) keeps the branches.

use crate::translate::zero;
use adc_ir::{BinaryOp, Function, InstData, Value};
use cranelift_codegen::ir::condcodes::FloatCC;
use cranelift_codegen::ir::{self as clif, types, InstBuilder, MemFlagsData};
use cranelift_frontend::FunctionBuilder;

/// `x * y` (`x / y` for `divz`), or zero when `x` is zero.
pub(crate) fn lower(
    b: &mut FunctionBuilder,
    x: clif::Value,
    y: clif::Value,
    divide: bool,
    on_recurrence: bool,
) -> clif::Value {
    let p = if divide {
        b.ins().fdiv(x, y)
    } else {
        b.ins().fmul(x, y)
    };
    let ty = b.func.dfg.value_type(x);
    let z = zero(b, ty);
    if on_recurrence {
        let is_zero = b.ins().fcmp(FloatCC::Equal, x, z);
        return b.ins().select(is_zero, z, p);
    }
    let vty = if ty == types::F32 {
        types::F32X4
    } else {
        types::F64X2
    };
    let little = MemFlagsData::new().with_endianness(clif::Endianness::Little);
    // Only lane 0 matters; `splat` is one shuffle, `scalar_to_vector`
    // also zeroes the other lanes.
    let xv = b.ins().splat(vty, x);
    let zv = b.ins().splat(vty, z);
    // Not-equal is true for NaN: a NaN adjoint stays NaN.
    let keep = b.ins().fcmp(FloatCC::NotEqual, xv, zv);
    let keep = b.ins().bitcast(vty, little, keep);
    let keep = b.ins().extractlane(keep, 0);
    b.ins().band(p, keep)
}

/// `recurrent_values`, for a function with a float `mulz` (the only
/// instruction that asks); empty, which answers no for every value,
/// otherwise.
pub(crate) fn recurrent_values_if_needed(func: &Function) -> Vec<bool> {
    let has_float_mulz = func.layout.iter().any(|b| {
        func.dfg.block(*b).insts.iter().any(|&i| {
            matches!(
                func.dfg.inst(i),
                InstData::Binary {
                    op: BinaryOp::MulZ | BinaryOp::DivZ,
                    ..
                }
            ) && func
                .dfg
                .value_type(func.dfg.inst_results(i)[0])
                .elem()
                .is_float()
        })
    });
    if has_float_mulz {
        recurrent_values(func)
    } else {
        Vec::new()
    }
}

/// Per value of `func`, whether it lies on a cycle of the data-flow graph
/// (operands to results, branch arguments to block parameters): a value
/// computed from its own value in an earlier iteration. These are the
/// strongly connected components with more than one value (Tarjan,
/// iterative, linear in the size of `func`).
fn recurrent_values(func: &Function) -> Vec<bool> {
    let n = func.dfg.num_values();
    let mut succs: Vec<Vec<usize>> = vec![Vec::new(); n];
    for &blk in &func.layout {
        for &inst in &func.dfg.block(blk).insts {
            let data = func.dfg.inst(inst);
            for a in data.args() {
                for r in func.dfg.inst_results(inst) {
                    succs[a.index()].push(r.index());
                }
            }
            for call in data.successors() {
                let params = func.dfg.block_params(call.block);
                for (a, p) in call.args.iter().zip(params) {
                    succs[a.index()].push(p.index());
                }
            }
        }
    }
    strongly_connected(&succs)
}

/// Tarjan's algorithm with an explicit stack: which nodes are in a
/// component of two or more.
fn strongly_connected(succs: &[Vec<usize>]) -> Vec<bool> {
    const UNSEEN: usize = usize::MAX;
    let n = succs.len();
    let (mut index, mut low) = (vec![UNSEEN; n], vec![0; n]);
    let mut on_stack = vec![false; n];
    let (mut stack, mut cyclic) = (Vec::new(), vec![false; n]);
    let mut next = 0;
    for root in 0..n {
        if index[root] != UNSEEN {
            continue;
        }
        // Frames of (node, next successor to visit).
        let mut frames = vec![(root, 0)];
        index[root] = next;
        low[root] = next;
        next += 1;
        stack.push(root);
        on_stack[root] = true;
        while let Some(&mut (v, ref mut k)) = frames.last_mut() {
            if let Some(&w) = succs[v].get(*k) {
                *k += 1;
                if index[w] == UNSEEN {
                    index[w] = next;
                    low[w] = next;
                    next += 1;
                    stack.push(w);
                    on_stack[w] = true;
                    frames.push((w, 0));
                } else if on_stack[w] {
                    low[v] = low[v].min(index[w]);
                }
                continue;
            }
            frames.pop();
            if let Some(&(parent, _)) = frames.last() {
                low[parent] = low[parent].min(low[v]);
            }
            if low[v] == index[v] {
                let mut members = Vec::new();
                while let Some(w) = stack.pop() {
                    on_stack[w] = false;
                    members.push(w);
                    if w == v {
                        break;
                    }
                }
                if members.len() > 1 {
                    for w in members {
                        cyclic[w] = true;
                    }
                }
            }
        }
    }
    cyclic
}

/// Whether `v` is on a recurrence, by `recurrent_values`' table.
pub(crate) fn is_recurrent(table: &[bool], v: Value) -> bool {
    table.get(v.index()).copied().unwrap_or(false)
}

#[cfg(test)]
mod tests {
    use super::strongly_connected;

    #[test]
    fn cycles_are_found_and_chains_are_not() {
        // 0 -> 1 -> 2 -> 0 is a cycle; 3 hangs off it, 4 -> 4 is a
        // self-loop (one node, not counted), 5 -> 6 a chain.
        let succs = vec![
            vec![1],
            vec![2, 3],
            vec![0],
            vec![],
            vec![4],
            vec![6],
            vec![],
        ];
        let cyclic = strongly_connected(&succs);
        assert_eq!(cyclic, [true, true, true, false, false, false, false]);
    }
}
