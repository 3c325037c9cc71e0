//! Interactions: the records of a sparse Hessian's sweep
//! (docs/jacobians.md#sparse-hessians), a dependency sweep (`ad::sets`)
//! whose request has `interactions`. `linearize` puts after each
//! nonlinear operation `v` a call of the marker `@__adc_interacts(a, b, v)`
//! with two tangents whose columns interact (`linearize/interact.rs`);
//! `sets` turns each into a call of `@__adc_set_interacts(arena, a, b, v)`
//! and [`finish`] keeps those whose operation's result is used, with
//! three arguments, and drops those another in their block holds.
//!
//! Assumes: `sets`' rewritten sweep, with a marker after every operation
//! whose second derivative may be nonzero. Guarantees: every pair of
//! columns `(r, c)` with a nonzero second derivative of a used operation
//! along this run is in the sets `a` and `b` (or `b` and `a`) of a record
//! the run makes: the rows of the Hessian's pattern, read both ways, are
//! a superset of its nonzeros.

use crate::ad::sets::{drop_dead_unions, is_zero, union_parts};
use adc_ir::{FuncId, Function, InstData, Module, ParamMode, ScalarType, Type, Value};
use std::collections::{BTreeMap, BTreeSet};

const INTERACTS: &str = "__adc_set_interacts";
/// The marker `linearize` calls.
pub const MARKER: &str = "__adc_interacts";
/// The marker for `float` operations, `@__adc_interacts_f32(a: f32, b:
/// f32, v: f32)`.
pub const MARKER_F32: &str = "__adc_interacts_f32";

/// After `sets` rewrote `func`: the records of interactions of used
/// results only, none another holds, and no set of the result, which no
/// record reads (the sweep's result is `Const`).
pub fn finish(func: &mut Function, interacts: FuncId, union: FuncId) {
    keep_used_interactions(func, interacts);
    drop_dead_unions(func, union);
    drop_subsumed_records(func, interacts, union);
}

/// `@__adc_set_interacts(arena, a, b)`: records that the columns of set
/// `a` interact with those of set `b` (a list in the arena, headed by
/// `arena[4]`), added to the module the first time a sweep with
/// `interactions` needs it.
pub fn interacts_function(module: &mut Module) -> FuncId {
    crate::ad::helper_function(module, INTERACTS, include_str!("set_interacts.adir"))
}

/// The records of interactions (`rewrite` gave each a last argument, the
/// nonlinear operation's result) whose operation's result is used: the
/// others (a product stored only to an unread output) add no entry to
/// the Hessian of the result, whose derivative does not reach them. A
/// result is used when `opt::dce` keeps it without the records. Leaves
/// each record its three arguments, `arena, a, b`.
fn keep_used_interactions(func: &mut Function, interacts: FuncId) {
    let is_record = |func: &Function, i: adc_ir::Inst| matches!(func.dfg.inst(i), InstData::Call { func: f, .. } if *f == interacts);
    let mut bare = func.clone();
    for b in bare.layout.clone() {
        let kept: Vec<adc_ir::Inst> = (bare.dfg.block(b).insts.iter().copied())
            .filter(|&i| !is_record(func, i))
            .collect();
        bare.dfg.block_mut(b).insts = kept;
    }
    crate::opt::dce::run(&mut bare);
    let live: BTreeSet<adc_ir::Inst> = bare
        .layout
        .iter()
        .flat_map(|&b| bare.dfg.block(b).insts.iter().copied())
        .collect();
    for b in func.layout.clone() {
        let mut kept = Vec::new();
        for i in func.dfg.block(b).insts.clone() {
            if let InstData::Call { func: f, args } = func.dfg.inst(i) {
                if *f == interacts && args.len() == 4 {
                    let used = match func.dfg.value_def(args[3]) {
                        adc_ir::ValueDef::Result(d, _) => live.contains(&d),
                        _ => true,
                    };
                    if !used {
                        continue;
                    }
                    let args = args[..3].to_vec();
                    *func.dfg.inst_mut(i) = InstData::Call {
                        func: f.to_owned(),
                        args,
                    };
                }
            }
            kept.push(i);
        }
        func.dfg.block_mut(b).insts = kept;
    }
    crate::opt::dce::run(func);
}

/// Drops each record of interactions that another one in its block
/// holds: `(a, b)` beside `(A, B)` or `(B, A)` where `A` is `a` or a union
/// of it and `B` is `b` or a union of it (`x * x` and `x * (y - x * x)`),
/// of two equal records the later; every entry it would add, the other
/// adds, in the same run of the block.
fn drop_subsumed_records(func: &mut Function, interacts: FuncId, union: FuncId) {
    let mut parts: BTreeMap<Value, BTreeSet<Value>> = BTreeMap::new();
    for b in func.layout.clone() {
        let mut records: Vec<(adc_ir::Inst, Value, Value)> = Vec::new();
        for &i in &func.dfg.block(b).insts {
            if let InstData::Call { func: f, args } = func.dfg.inst(i) {
                if *f == union {
                    let r = func.dfg.inst_results(i)[0];
                    parts.insert(r, union_parts(&parts, args[1], args[2]));
                } else if *f == interacts {
                    records.push((i, args[1], args[2]));
                }
            }
        }
        let part = |u: Value, v: Value| u == v || parts.get(&u).is_some_and(|p| p.contains(&v));
        let holds = |(x, y): (Value, Value), (a, c): (Value, Value)| {
            (part(x, a) && part(y, c)) || (part(x, c) && part(y, a))
        };
        let mut drop = BTreeSet::new();
        for (k, &(i, a, c)) in records.iter().enumerate() {
            let held = records.iter().enumerate().any(|(j, &(_, x, y))| {
                j != k
                    && !drop.contains(&records[j].0)
                    && holds((x, y), (a, c))
                    && (j < k || !holds((a, c), (x, y)))
            });
            if held || is_zero(func, a) || is_zero(func, c) {
                drop.insert(i);
            }
        }
        func.dfg.block_mut(b).insts.retain(|i| !drop.contains(i));
    }
}

/// `@__adc_interacts(a: f64, b: f64, v: f64)`, which does nothing: `linearize`
/// calls it in a sweep with `interactions` after each nonlinear
/// operation `v`, with the two tangents whose columns interact; `rewrite`
/// turns each call into one of `@__adc_set_interacts` with the arena.
/// With `ty` `f32`, [`MARKER_F32`], the same for `float` operations
/// (`sets` makes their tangents `f64` handles).
pub fn interact_marker(module: &mut Module, ty: ScalarType) -> FuncId {
    let name = if ty == ScalarType::F32 {
        MARKER_F32
    } else {
        MARKER
    };
    if let Some(id) = module.find(name) {
        return id;
    }
    let ty = Type::Scalar(ty);
    let param = |name: &str| adc_ir::Param {
        name: name.into(),
        ty,
        mode: ParamMode::In,
    };
    let mut f = Function::new(
        name.to_string(),
        vec![param("a"), param("b"), param("v")],
        Vec::new(),
        adc_ir::Linkage::Static,
    );
    let entry = f.dfg.make_block();
    f.layout.push(entry);
    for _ in 0..3 {
        f.dfg.append_block_param(entry, ty);
    }
    f.append_inst(
        entry,
        InstData::Return { args: Vec::new() },
        &[],
        adc_ir::Span::UNDEFINED,
    );
    module.push(f)
}

#[cfg(test)]
mod tests {
    /// The helpers the derivative passes add to modules parse and verify.
    #[test]
    fn ad_helpers_parse() {
        for text in [
            include_str!("set_union.adir"),
            include_str!("set_interacts.adir"),
            include_str!("digamma.adir"),
        ] {
            let m = adc_ir::parse_module(text).expect("parses");
            assert_eq!(m.funcs.len(), 1);
            adc_ir::verify::verify(&m).expect("verifies");
        }
    }
}
