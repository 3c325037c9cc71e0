//! Rewriting helpers: substituting values (chains resolved once),
//! removing instructions, dropping a proven check, appending instructions
//! (`Emitter`), copying them (`copy_inst`) and splitting a block at a call
//! (`split_at_call`).

use crate::defs::result_types;
use adc_ir::{BinaryOp, Block, Constant, Function, Inst, InstData, Span, Tag, Type, Value};
use std::collections::{BTreeMap, BTreeSet};

/// Applies a substitution map (followed transitively) to every operand.
pub(crate) fn substitute(func: &mut Function, map: &BTreeMap<Value, Value>) {
    if map.is_empty() {
        return;
    }
    let resolved = resolve_chains(map);
    func.substitute(&|v: Value| *resolved.get(&v).unwrap_or(&v));
}

/// Every key of `map` to the end of its chain (`a -> b -> c` gives
/// `a -> c`, `b -> c`), each chain walked once: following chains per
/// operand was quadratic when passes substitute long chains (the block
/// parameters of an `else if` chain). A cycle, which no pass makes, ends
/// where it closes.
pub(crate) fn resolve_chains(map: &BTreeMap<Value, Value>) -> BTreeMap<Value, Value> {
    let mut resolved: BTreeMap<Value, Value> = BTreeMap::new();
    for &start in map.keys() {
        if resolved.contains_key(&start) {
            continue;
        }
        let mut walk = vec![start];
        let mut on_walk: BTreeSet<Value> = [start].into_iter().collect();
        let mut end = map[&start];
        while let Some(&next) = map.get(&end) {
            if let Some(&r) = resolved.get(&end) {
                end = r;
                break;
            }
            if !on_walk.insert(end) {
                break;
            }
            walk.push(end);
            end = next;
        }
        for v in walk {
            resolved.insert(v, end);
        }
    }
    resolved
}

/// Makes a `load` or `store` unchecked (its index proven in bounds).
pub(crate) fn drop_check(func: &mut Function, inst: Inst) {
    if let InstData::Load { checked, .. } | InstData::Store { checked, .. } =
        func.dfg.inst_mut(inst)
    {
        *checked = false;
    }
}

/// Appends instructions to the end of one block, with one tag and span.
pub(crate) struct Emitter {
    pub block: Block,
    pub tag: Tag,
    pub span: Span,
}

impl Emitter {
    /// Appends `data` with at most one result, of type `ty`.
    pub fn inst(&self, func: &mut Function, data: InstData, ty: Option<Type>) -> Option<Value> {
        let types: Vec<Type> = ty.into_iter().collect();
        let inst = func.append_inst(self.block, data, &types, self.span);
        func.set_tag(inst, self.tag);
        func.dfg.inst_results(inst).first().copied()
    }

    pub fn value(&self, func: &mut Function, data: InstData, ty: Type) -> Value {
        // Invariant: an instruction appended with a result type has a result.
        self.inst(func, data, Some(ty))
            .expect("an instruction with a result type has a result")
    }

    pub fn constant(&self, func: &mut Function, value: Constant) -> Value {
        self.value(func, InstData::Const { value }, Type::Scalar(value.ty()))
    }

    /// `base + k` (`base` itself when `k` is 0).
    pub fn index(&self, func: &mut Function, base: Value, k: i64) -> Value {
        if k == 0 {
            return base;
        }
        let k = self.constant(func, Constant::I64(k));
        let data = InstData::Binary {
            op: BinaryOp::Add,
            args: [base, k],
        };
        self.value(func, data, Type::I64)
    }
}

/// A new `const k` (`i64`) in no block yet: its instruction and result.
pub(crate) fn detached_int(func: &mut Function, k: i64) -> (Inst, Value) {
    let data = InstData::Const {
        value: Constant::I64(k),
    };
    let i = func.dfg.make_inst(data, &[Type::I64]);
    (i, func.dfg.inst_results(i)[0])
}

/// Takes the instructions in `dead` out of their blocks.
pub(crate) fn remove_insts(func: &mut Function, dead: &std::collections::BTreeSet<adc_ir::Inst>) {
    for b in func.layout.clone() {
        func.dfg.block_mut(b).insts.retain(|i| !dead.contains(i));
    }
}

/// Appends to `to` a copy of `inst` with its arguments renamed by `map`,
/// same span and tag; `map` then also takes `inst`'s results to the
/// copy's. The pattern of the passes that duplicate code (`unroll`,
/// `version`, `rotate`).
pub(crate) fn copy_inst(
    func: &mut Function,
    inst: adc_ir::Inst,
    to: adc_ir::Block,
    map: &mut BTreeMap<Value, Value>,
) -> adc_ir::Inst {
    let mut data = func.dfg.inst(inst).clone();
    data.map_args(|a| *map.get(&a).unwrap_or(&a));
    let types = result_types(func, inst);
    let (span, tag) = (func.span(inst), func.tag(inst));
    let new = func.append_inst(to, data, &types, span);
    func.set_tag(new, tag);
    let olds = func.dfg.inst_results(inst).to_vec();
    let news = func.dfg.inst_results(new).to_vec();
    map.extend(olds.into_iter().zip(news));
    new
}

/// Splits `b` at `call`: the instructions after the call move to a new
/// block `cont`, whose parameters stand for the call's results; the call
/// itself leaves `b`. Returns `cont`, the results and `cont`'s parameters
/// (the caller substitutes the parameters for the results once `cont` is
/// reached from wherever the results are now computed).
pub(crate) fn split_at_call(
    func: &mut Function,
    b: Block,
    call: Inst,
) -> (Block, Vec<Value>, Vec<Value>) {
    let cont = func.dfg.make_block();
    let results = func.dfg.inst_results(call).to_vec();
    let cont_params: Vec<Value> = results
        .iter()
        .map(|r| {
            let ty = func.dfg.value_type(*r);
            func.dfg.append_block_param(cont, ty)
        })
        .collect();
    let insts = func.dfg.block(b).insts.clone();
    let at = insts
        .iter()
        .position(|&i| i == call)
        .expect("invariant: the call is in its block");
    func.dfg.block_mut(b).insts.truncate(at);
    func.dfg.block_mut(cont).insts = insts[at + 1..].to_vec();
    (cont, results, cont_params)
}

#[cfg(test)]
mod tests {
    use super::resolve_chains;
    use adc_ir::Value;
    use std::collections::BTreeMap;

    #[test]
    fn chains_resolve_to_their_ends() {
        let v = Value::new;
        // 1 -> 2 -> 3 -> 4, 7 -> 3, 5 -> 6 -> 5 (a cycle), 9 -> 9.
        let map: BTreeMap<Value, Value> = [(1, 2), (2, 3), (3, 4), (7, 3), (5, 6), (6, 5), (9, 9)]
            .into_iter()
            .map(|(a, b)| (v(a), v(b)))
            .collect();
        let r = resolve_chains(&map);
        for k in [1, 2, 3, 7] {
            assert_eq!(r[&v(k)], v(4), "key {k}");
        }
        assert!(r[&v(5)] == v(5) || r[&v(5)] == v(6));
        assert_eq!(r[&v(9)], v(9));
        assert_eq!(r.len(), map.len());
    }
}
