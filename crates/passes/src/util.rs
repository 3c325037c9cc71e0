//! Helpers shared by passes: predecessor lists, use counts, value
//! substitution.

use adc_ir::{BinaryOp, Block, Constant, Function, InstData, Value, ValueDef};
use std::collections::BTreeMap;

/// A control-flow edge into a block: the source block and the arguments
/// it passes to the target's parameters.
pub(crate) struct Edge {
    pub from: Block,
    pub args: Vec<Value>,
}

/// The incoming edges of every block in the layout (one per branch target,
/// so a block branching twice to the same target gives two edges).
pub(crate) fn incoming_edges(func: &Function) -> BTreeMap<Block, Vec<Edge>> {
    let mut edges: BTreeMap<Block, Vec<Edge>> =
        func.layout.iter().map(|b| (*b, Vec::new())).collect();
    for &b in &func.layout {
        let Some(term) = func.terminator(b) else {
            continue;
        };
        for call in func.dfg.inst(term).successors() {
            edges.entry(call.block).or_default().push(Edge {
                from: b,
                args: call.args.clone(),
            });
        }
    }
    edges
}

/// Applies a substitution map (followed transitively) to every operand.
pub(crate) fn substitute(func: &mut Function, map: &BTreeMap<Value, Value>) {
    if map.is_empty() {
        return;
    }
    let resolve = |mut v: Value| {
        let mut steps = 0;
        while let Some(&n) = map.get(&v) {
            v = n;
            steps += 1;
            if steps > map.len() {
                break;
            }
        }
        v
    };
    func.substitute(&resolve);
}

/// How many times each value is used as an operand.
pub(crate) fn use_counts(func: &Function) -> Vec<u32> {
    let mut counts = vec![0u32; func.dfg.num_values()];
    for &b in &func.layout {
        for &inst in &func.dfg.block(b).insts {
            func.dfg.inst(inst).for_each_arg(|v| counts[v.index()] += 1);
        }
    }
    counts
}

/// The instruction that defines `v` (its first result), if any.
pub(crate) fn def_data(func: &Function, v: Value) -> Option<&InstData> {
    match func.dfg.value_def(v) {
        ValueDef::Result(inst, 0) => Some(func.dfg.inst(inst)),
        _ => None,
    }
}

pub(crate) fn int_const(func: &Function, v: Value) -> Option<i64> {
    match def_data(func, v) {
        Some(InstData::Const {
            value: Constant::I64(c),
        }) => Some(*c),
        _ => None,
    }
}

/// `v` as `base + d` with `d` a constant (`base` itself is `d = 0`).
pub(crate) fn offset_of(func: &Function, v: Value) -> (Value, i64) {
    match def_data(func, v) {
        Some(InstData::Binary {
            op: BinaryOp::Add,
            args,
        }) => match (int_const(func, args[0]), int_const(func, args[1])) {
            (_, Some(d)) => (args[0], d),
            (Some(d), _) => (args[1], d),
            _ => (v, 0),
        },
        Some(InstData::Binary {
            op: BinaryOp::Sub,
            args,
        }) => match int_const(func, args[1]) {
            Some(d) if d != i64::MIN => (args[0], -d),
            _ => (v, 0),
        },
        _ => (v, 0),
    }
}
