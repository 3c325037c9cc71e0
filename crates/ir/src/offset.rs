//! Index arithmetic: a value as `base + k` for a constant `k`, as passes
//! (`bce`, `carry`, `rle`, loop analysis) and codegen's element addresses
//! read it. The IR's integer arithmetic wraps, so `base + k` is the value
//! whatever a chain's intermediate values.

use crate::{BinaryOp, Constant, Function, InstData, Value, ValueDef};

fn int_const(func: &Function, v: Value) -> Option<i64> {
    match def_data(func, v)? {
        InstData::Const {
            value: Constant::I64(c),
        } => Some(*c),
        _ => None,
    }
}

fn def_data(func: &Function, v: Value) -> Option<&InstData> {
    match func.dfg.value_def(v) {
        ValueDef::Result(inst, 0) => Some(func.dfg.inst(inst)),
        _ => None,
    }
}

/// `v` as `base + d` with `d` a constant (`base` itself is `d = 0`).
pub fn offset_of(func: &Function, v: Value) -> (Value, i64) {
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

/// `v` as `base + k` through chains of additions of constants (where
/// `offset_of` looks through one).
pub fn offset_through_chain(func: &Function, mut v: Value) -> (Value, i64) {
    let mut total = 0i64;
    for _ in 0..16 {
        let (base, d) = offset_of(func, v);
        if base == v {
            break;
        }
        match total.checked_add(d) {
            Some(t) => total = t,
            None => break,
        }
        v = base;
    }
    (v, total)
}
