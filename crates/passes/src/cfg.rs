//! The control-flow graph as the passes read it: the incoming edges of
//! each block, the `br` ending a block (and the `cmp` it tests), the
//! blocks on cycles, and an order
//! that meets every definition before its uses. Reads only.

use adc_ir::{Block, BlockCall, CmpCond, Function, Inst, InstData, Value, ValueDef};
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
        for call in func.dfg.inst(term).successor_calls() {
            edges.entry(call.block).or_default().push(Edge {
                from: b,
                args: call.args.clone(),
            });
        }
    }
    edges
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

/// A block's closing test: `br c, then, else` where `c` is the result of
/// `cmp cond args[0], args[1]` (defined anywhere before).
pub(crate) struct BranchTest<'a> {
    pub cmp: Inst,
    pub cond: CmpCond,
    pub args: [Value; 2],
    pub then_dest: &'a BlockCall,
    pub else_dest: &'a BlockCall,
}

/// The `cmp` and targets of the `br` that ends `block`, if it branches on
/// a comparison.
pub(crate) fn branch_test(func: &Function, block: Block) -> Option<BranchTest<'_>> {
    let (c, then_dest, else_dest) = branch_at(func, block)?;
    let ValueDef::Result(cmp, 0) = func.dfg.value_def(c) else {
        return None;
    };
    let &InstData::Cmp { cond, args } = func.dfg.inst(cmp) else {
        return None;
    };
    Some(BranchTest {
        cmp,
        cond,
        args,
        then_dest,
        else_dest,
    })
}

pub(crate) use adc_ir::dom::blocks_on_cycles;

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
