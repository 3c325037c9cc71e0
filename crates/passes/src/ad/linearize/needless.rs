//! Instructions whose derivative nothing needs: `no_diff(j0(x))`, an
//! extern whose result only feeds a comparison, an `int` cast or nothing,
//! one returning an `int`, the arithmetic under a `no_diff`. `linearize`
//! keeps them primal (no derivative of a callee is asked for, so an extern
//! needs no custom derivative there, and nothing is taped for them).
//!
//! Arithmetic (`Binary`, `Unary`, `Math`, `Select`, `Convert`) qualifies
//! when its float result is not useful (below). A call qualifies when its callee takes and returns scalars by value only
//! (so its derivative could only give its results' tangents: it writes no
//! array or reference) and is not itself a derivative, and when none of
//! its float results is *useful*. Useful float values are found backwards
//! from the roots: the arguments of `return` and every float operand of
//! an instruction with effects (stores, calls of other callees, anything
//! not known to be pure). A useful value makes the float operands of the
//! instruction defining it useful (none for `no_diff`), and a useful block
//! parameter the arguments every edge passes to it. Comparisons, `int`
//! conversions and `print` consume no tangent, so their operands are not
//! useful through them.

use adc_ir::{Function, Inst, InstData, Module, Type, UnaryOp, Value, ValueDef};
use std::collections::BTreeSet;

/// Whether calling `callee` can have no derivative effect but its
/// results' tangents.
fn scalar_only(module: &Module, callee: adc_ir::FuncId) -> bool {
    let c = module.func(callee);
    c.deriv.is_none()
        && c.params.iter().all(|p| matches!(p.ty, Type::Scalar(_)))
        && c.returns.iter().all(|t| matches!(t, Type::Scalar(_)))
}

/// Instructions that are pure for derivatives: a useful result makes their
/// float operands useful, and nothing else does.
fn pure(module: &Module, data: &InstData) -> bool {
    match data {
        InstData::Call { func, .. } => scalar_only(module, *func),
        InstData::Binary { .. }
        | InstData::Unary { .. }
        | InstData::Math { .. }
        | InstData::Select { .. }
        | InstData::Cmp { .. }
        | InstData::Convert { .. }
        | InstData::Const { .. }
        | InstData::Print { .. }
        | InstData::Jump { .. }
        | InstData::Branch { .. } => true,
        _ => false,
    }
}

/// The instructions of `src` that `linearize` copies as primal code with
/// zero tangents.
pub(super) fn needless(module: &Module, src: &Function) -> BTreeSet<Inst> {
    let is_float = |v: Value| matches!(src.dfg.value_type(v), Type::Scalar(s) if s.is_float());
    let mut useful = vec![false; src.dfg.num_values()];
    let mut work: Vec<Value> = Vec::new();
    let mark = |v: Value, useful: &mut Vec<bool>, work: &mut Vec<Value>| {
        if is_float(v) && !useful[v.index()] {
            useful[v.index()] = true;
            work.push(v);
        }
    };
    let mut candidates = Vec::new();
    for &b in &src.layout {
        for &i in &src.dfg.block(b).insts {
            let data = src.dfg.inst(i);
            let candidate = match data {
                InstData::Call { func, .. } => scalar_only(module, *func),
                InstData::Binary { .. }
                | InstData::Unary { .. }
                | InstData::Math { .. }
                | InstData::Select { .. }
                | InstData::Convert { .. } => src.dfg.inst_results(i).iter().any(|&r| is_float(r)),
                _ => false,
            };
            if candidate {
                candidates.push(i);
            }
            if !pure(module, data) {
                data.for_each_arg(|a| mark(a, &mut useful, &mut work));
            }
        }
    }
    let edges = crate::util::incoming_edges(src);
    while let Some(v) = work.pop() {
        match src.dfg.value_def(v) {
            ValueDef::Param(b, k) => {
                for e in edges.get(&b).into_iter().flatten() {
                    mark(e.args[k as usize], &mut useful, &mut work);
                }
            }
            ValueDef::Result(i, _) => match src.dfg.inst(i) {
                InstData::Unary {
                    op: UnaryOp::NoDiff,
                    ..
                } => (),
                data => data.for_each_arg(|a| mark(a, &mut useful, &mut work)),
            },
            ValueDef::Unused => (),
        }
    }
    candidates
        .into_iter()
        .filter(|&i| !src.dfg.inst_results(i).iter().any(|r| useful[r.index()]))
        .collect()
}
