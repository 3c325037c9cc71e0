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
    adc_ir::scc::in_cycles(&succs)
}

/// Whether `v` is on a recurrence, by `recurrent_values`' table.
pub(crate) fn is_recurrent(table: &[bool], v: Value) -> bool {
    table.get(v.index()).copied().unwrap_or(false)
}
