//! Bounds-check elimination for the counted loop
//! `for (int i = 0; i < len(a); i++) ... a[i] ...`.
//!
//! Pattern: a block `H` with an `i64` parameter `i` that ends in
//! `br (cmp lt i, len a), B, ...`, where every edge into `H` passes either a
//! non-negative constant (from a block `B` does not dominate) or `add i, 1`
//! (from a block `B` dominates). Then `0 <= i < len(a)` holds in every block
//! `B` dominates, and there `load`/`store`/`elemref`-free accesses `a[i]`
//! lose their check. (`i + 1` cannot overflow there, since `i < len(a)`.)
//!
//! Assumes: verified input. Guarantees: verified output; only checks that
//! can never fail are removed.

use crate::util::incoming_edges;
use adc_ir::verify::{dominates, dominators};
use adc_ir::{BinaryOp, Block, CmpCond, Constant, Function, InstData, Value, ValueDef};

fn def_data(func: &Function, v: Value) -> Option<&InstData> {
    match func.dfg.value_def(v) {
        ValueDef::Result(inst, 0) => Some(func.dfg.inst(inst)),
        _ => None,
    }
}

fn is_increment_of(func: &Function, v: Value, i: Value) -> bool {
    match def_data(func, v) {
        Some(InstData::Binary {
            op: BinaryOp::Add,
            args,
        }) => {
            let one = |x: Value| {
                matches!(
                    def_data(func, x),
                    Some(InstData::Const {
                        value: Constant::I64(1)
                    })
                )
            };
            (args[0] == i && one(args[1])) || (args[1] == i && one(args[0]))
        }
        _ => false,
    }
}

pub fn run(func: &mut Function) -> bool {
    let (rpo, idom) = dominators(func);
    let edges = incoming_edges(func);
    let mut proven: Vec<(Block, Value, Value)> = Vec::new(); // (body, index, array)
    for &h in &rpo {
        let Some(term) = func.terminator(h) else {
            continue;
        };
        let InstData::Branch {
            cond, then_dest, ..
        } = func.dfg.inst(term)
        else {
            continue;
        };
        let body = then_dest.block;
        let Some(InstData::Cmp {
            cond: CmpCond::Lt,
            args,
        }) = def_data(func, *cond)
        else {
            continue;
        };
        let (i, bound) = (args[0], args[1]);
        let Some(InstData::ArrayLen { array }) = def_data(func, bound) else {
            continue;
        };
        let ValueDef::Param(pb, k) = func.dfg.value_def(i) else {
            continue;
        };
        if pb != h || body == h || edges.get(&body).map(|e| e.len()) != Some(1) {
            continue;
        }
        let k = k as usize;
        let ok = edges[&h].iter().all(|edge| {
            let arg = edge.args[k];
            let in_loop = idom[edge.from.index()].is_some() && dominates(&idom, body, edge.from);
            if in_loop {
                is_increment_of(func, arg, i)
            } else {
                matches!(def_data(func, arg), Some(InstData::Const { value: Constant::I64(c) }) if *c >= 0)
            }
        });
        if ok {
            proven.push((body, i, *array));
        }
    }
    let mut changed = false;
    for (body, i, array) in proven {
        for &b in &rpo {
            if !dominates(&idom, body, b) {
                continue;
            }
            for inst in func.dfg.block(b).insts.clone() {
                match func.dfg.inst_mut(inst) {
                    InstData::Load {
                        array: a,
                        index,
                        checked,
                    }
                    | InstData::Store {
                        array: a,
                        index,
                        checked,
                        ..
                    } if *a == array && *index == i && *checked => {
                        *checked = false;
                        changed = true;
                    }
                    _ => (),
                }
            }
        }
    }
    changed
}
