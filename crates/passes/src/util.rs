//! Helpers shared by passes: predecessor lists, use counts, value
//! substitution, appending instructions.

use adc_ir::{
    BinaryOp, Block, BlockCall, Constant, Function, Inst, InstData, Span, Tag, Type, Value,
    ValueDef,
};
use std::collections::{BTreeMap, BTreeSet};

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

/// The condition and targets of the `br` that ends `block`.
pub(crate) fn branch_at(func: &Function, block: Block) -> Option<(Value, &BlockCall, &BlockCall)> {
    match func.dfg.inst(func.terminator(block)?) {
        InstData::Branch {
            cond,
            then_dest,
            else_dest,
        } => Some((*cond, then_dest, else_dest)),
        _ => None,
    }
}

/// The array and index of a checked `load` or `store`.
pub(crate) fn checked_access(func: &Function, inst: Inst) -> Option<(Value, Value)> {
    match func.dfg.inst(inst) {
        InstData::Load {
            array,
            index,
            checked: true,
        }
        | InstData::Store {
            array,
            index,
            checked: true,
            ..
        } => Some((*array, *index)),
        _ => None,
    }
}

/// Makes a `load` or `store` unchecked (its index proven in bounds).
pub(crate) fn drop_check(func: &mut Function, inst: Inst) {
    if let InstData::Load { checked, .. } | InstData::Store { checked, .. } =
        func.dfg.inst_mut(inst)
    {
        *checked = false;
    }
}

pub(crate) use adc_ir::offset::{offset_of, offset_through_chain};

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

/// The blocks that lie on a cycle of the CFG: those of a strongly connected
/// component with several blocks or a self-edge (Kosaraju, linear time).
pub(crate) fn blocks_on_cycles(func: &Function) -> std::collections::BTreeSet<Block> {
    let n = func.dfg.num_blocks();
    let mut in_layout = vec![false; n];
    for b in &func.layout {
        in_layout[b.index()] = true;
    }
    let succs: Vec<Vec<Block>> = (0..n)
        .map(|i| {
            let b = Block::new(i);
            if in_layout[i] {
                func.successors(b)
            } else {
                Vec::new()
            }
        })
        .collect();
    let mut preds: Vec<Vec<Block>> = vec![Vec::new(); n];
    for (i, ss) in succs.iter().enumerate() {
        for s in ss {
            preds[s.index()].push(Block::new(i));
        }
    }
    // Post-order of the forward graph, iteratively.
    let mut order = Vec::new();
    let mut seen = vec![false; n];
    for &root in &func.layout {
        if std::mem::replace(&mut seen[root.index()], true) {
            continue;
        }
        let mut stack = vec![(root, 0usize)];
        while let Some((b, k)) = stack.pop() {
            match succs[b.index()].get(k) {
                Some(&s) => {
                    stack.push((b, k + 1));
                    if !std::mem::replace(&mut seen[s.index()], true) {
                        stack.push((s, 0));
                    }
                }
                None => order.push(b),
            }
        }
    }
    // Components of the reversed graph, in reverse post-order.
    let mut comp = vec![usize::MAX; n];
    let mut on_cycle = std::collections::BTreeSet::new();
    for (c, &root) in order.iter().rev().enumerate() {
        if comp[root.index()] != usize::MAX {
            continue;
        }
        let mut members = vec![root];
        comp[root.index()] = c;
        let mut k = 0;
        while k < members.len() {
            for &p in &preds[members[k].index()] {
                if comp[p.index()] == usize::MAX {
                    comp[p.index()] = c;
                    members.push(p);
                }
            }
            k += 1;
        }
        let self_edge = succs[root.index()].contains(&root);
        if members.len() > 1 || self_edge {
            on_cycle.extend(members);
        }
    }
    on_cycle
}

/// Whether `inst` is a float division, which (unlike an integer one)
/// cannot trap: it may be merged or removed like pure arithmetic.
pub(crate) fn is_float_div(func: &Function, inst: adc_ir::Inst) -> bool {
    matches!(
        func.dfg.inst(inst),
        InstData::Binary {
            op: BinaryOp::Div,
            ..
        }
    ) && func
        .dfg
        .inst_results(inst)
        .first()
        .is_some_and(|r| func.dfg.value_type(*r).elem().is_float())
}

/// Whether `inst` is a division or remainder that cannot trap: a float one, or an
/// integer one by a constant other than 0 and -1 (as a triangular loop's
/// offset `col * (col + 1) / 2`). Such a division may run where the
/// source would not have run it.
pub(crate) fn is_safe_div(func: &Function, inst: adc_ir::Inst) -> bool {
    match func.dfg.inst(inst) {
        InstData::Binary {
            op: BinaryOp::Div | BinaryOp::Rem,
            args,
        } => {
            let float = func
                .dfg
                .inst_results(inst)
                .first()
                .is_some_and(|r| func.dfg.value_type(*r).elem().is_float());
            float || int_const(func, args[1]).is_some_and(|c| c != 0 && c != -1)
        }
        _ => false,
    }
}

/// Whether `inst` is scalar arithmetic that cannot trap, so it can run
/// again wherever its operands are (`unzip`'s and `transpose`'s
/// recomputations): a constant, a unary operation, a comparison, a select,
/// a conversion, or a binary operation other than an integer division or
/// remainder that could trap (`is_safe_div`).
pub(crate) fn is_cheap_arith(func: &Function, inst: adc_ir::Inst) -> bool {
    match func.dfg.inst(inst) {
        InstData::Const { .. }
        | InstData::Unary { .. }
        | InstData::Cmp { .. }
        | InstData::Select { .. }
        | InstData::Convert { .. } => true,
        InstData::Binary { op, .. } => {
            !matches!(op, BinaryOp::Div | BinaryOp::Rem) || is_safe_div(func, inst)
        }
        _ => false,
    }
}

/// The float constant `v` is, as an `f64`.
pub(crate) fn float_const(func: &Function, v: Value) -> Option<f64> {
    match def_data(func, v) {
        Some(InstData::Const {
            value: Constant::F64(c),
        }) => Some(*c),
        Some(InstData::Const {
            value: Constant::F32(c),
        }) => Some(f64::from(*c)),
        _ => None,
    }
}

/// Whether removing `inst` when its results are unused changes nothing
/// (`free` of `null` does nothing either).
pub(crate) fn is_removable(func: &Function, inst: adc_ir::Inst) -> bool {
    let frees_null = match func.dfg.inst(inst) {
        InstData::ArrayFree { array } => {
            matches!(def_data(func, *array), Some(InstData::ArrayNull))
        }
        _ => false,
    };
    !func.dfg.inst(inst).has_side_effects() || is_float_div(func, inst) || frees_null
}

/// The types of `inst`'s results.
pub(crate) fn result_types(func: &Function, inst: adc_ir::Inst) -> Vec<adc_ir::Type> {
    func.dfg
        .inst_results(inst)
        .iter()
        .map(|r| func.dfg.value_type(*r))
        .collect()
}

/// Takes the instructions in `dead` out of their blocks.
pub(crate) fn remove_insts(func: &mut Function, dead: &std::collections::BTreeSet<adc_ir::Inst>) {
    for b in func.layout.clone() {
        func.dfg.block_mut(b).insts.retain(|i| !dead.contains(i));
    }
}

/// An array value that is its own object: a parameter (parameters never
/// alias, docs/arrays.md#the-aliasing-rule), or made here by `new` or `copy` (not one passed
/// along through a block parameter). Two different such values never share
/// memory.
pub(crate) fn is_fresh_array(func: &Function, a: Value) -> bool {
    match func.dfg.value_def(a) {
        ValueDef::Param(b, _) => Some(b) == func.entry_block(),
        ValueDef::Result(i, _) => matches!(
            func.dfg.inst(i),
            InstData::ArrayNew { .. } | InstData::ArrayCopy { .. }
        ),
        ValueDef::Unused => false,
    }
}

/// The reachable blocks in layout order, except that each comes after its
/// immediate dominator, so a walk in this order meets every definition
/// before its uses (layout order alone need not: a loop's step block may
/// come before the block that defines what it uses). Then the unreachable
/// blocks, in layout order.
pub(crate) fn dominator_order(func: &Function) -> Vec<Block> {
    use std::cmp::Reverse;
    let (rpo, idom) = adc_ir::dom::dominators(func);
    let mut position = vec![usize::MAX; func.dfg.num_blocks()];
    for (k, b) in func.layout.iter().enumerate() {
        position[b.index()] = k;
    }
    let mut children: BTreeMap<Block, Vec<Block>> = BTreeMap::new();
    for &b in rpo.iter().skip(1) {
        if let Some(d) = idom[b.index()] {
            children.entry(d).or_default().push(b);
        }
    }
    // Kahn's algorithm on the dominator tree, the earliest in layout first.
    let mut ready = std::collections::BinaryHeap::new();
    if let Some(&entry) = rpo.first() {
        ready.push(Reverse((position[entry.index()], entry)));
    }
    let mut order = Vec::with_capacity(func.layout.len());
    while let Some(Reverse((_, b))) = ready.pop() {
        order.push(b);
        for &c in children.get(&b).into_iter().flatten() {
            ready.push(Reverse((position[c.index()], c)));
        }
    }
    let reached: std::collections::BTreeSet<Block> = order.iter().copied().collect();
    order.extend(func.layout.iter().filter(|b| !reached.contains(b)));
    order
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
