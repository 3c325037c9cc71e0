//! `promote-fixed`: array elements at constant indices that a loop reads
//! and writes, under branches or not, kept in stack slots (then values:
//! `mem2reg` runs after it) for the loop's duration. `promote` takes one
//! element loaded then stored once per iteration; a state machine kept in
//! an array (`ad::band`'s recording copy of `F`: `@__adc_band_step`'s
//! `info[s]`, `info[s + 1]`, `info[s + 2]`, each read, compared and written
//! on some paths only) went through memory every iteration, a store then
//! a load of one element (store forwarding) on its critical path.
//!
//! Pattern: a natural loop (header `h` with one entry edge, from a block
//! `P` outside it, and one back edge) and an array `a` defined outside it
//! that the loop accesses only by `load`/`store` (checked or not) at
//! constant indices `k`. Nothing else in the loop may touch memory `a`
//! could share: every other array access is to an array `alias` proves
//! disjoint from `a`, and every other instruction is one that touches no
//! array's elements (arithmetic, `len`, `view`, `lencheck`, pairs, branches:
//! no call, reference, copy, allocation, `free` or tape operation). Each `a[k]` is accessed outside
//! the loop in a block that dominates `P`, so it is in bounds (arrays never
//! shrink) and loading it in `P` cannot trap.
//!
//! Rewrite: for each `a[k]`, a slot made in the entry block (it holds
//! zero when made: there, once); `P` loads `a[k]` (unchecked) and stores
//! it in the slot before its terminator; the loop's loads and stores of
//! `a[k]` read and write the slot; every edge that leaves the loop goes
//! through a new block that stores the slot back into `a[k]`, then jumps
//! on with the edge's arguments. Memory holds the same values as before
//! wherever code outside the loop can read it: inside, only the loop reads
//! `a[k]`, through the slot that holds what memory would.
//!
//! Assumes: verified input. Guarantees: verified output (the loop's
//! accesses to `a[k]` lose their checks, proven in bounds).

use crate::alias::Alias;
use crate::cfg::incoming_edges;
use crate::defs::int_const;
use crate::loops::natural_loop;
use crate::opt::promote::accessed_before;
use adc_ir::dom::DomTree;
use adc_ir::{Block, BlockCall, Function, Inst, InstData, Type, Value, ValueDef};
use std::collections::{BTreeMap, BTreeSet};

/// Elements promoted per loop at most.
const MAX_ELEMENTS: usize = 8;

pub fn run(func: &mut Function) -> bool {
    let mut changed = false;
    // Each rewrite adds blocks: find the loops again.
    for _ in 0..16 {
        let Some(site) = find(func) else { break };
        rewrite(func, &site);
        changed = true;
    }
    changed
}

struct Site {
    entry: Block,
    body: BTreeSet<Block>,
    array: Value,
    /// The promoted indices.
    elements: Vec<i64>,
    /// Every access of the loop to `array`: (instruction, constant index).
    accesses: Vec<(Inst, i64)>,
}

fn find(func: &Function) -> Option<Site> {
    let dom = DomTree::new(func);
    let edges = incoming_edges(func);
    let alias = Alias::new(func);
    for &h in &dom.rpo {
        let Some(es) = edges.get(&h) else { continue };
        let [a, b] = es.as_slice() else { continue };
        let (entry, back) = match (dom.dominates(h, a.from), dom.dominates(h, b.from)) {
            (false, true) => (a, b),
            (true, false) => (b, a),
            _ => continue,
        };
        if !dom.is_reachable(entry.from) {
            continue;
        }
        let body = natural_loop(&edges, h, back.from);
        if let Some(site) = candidate(func, &dom, &alias, entry.from, body) {
            return Some(site);
        }
    }
    None
}

/// The loop's array accesses (array, index, instruction), or `None` when it
/// holds an instruction that may touch memory otherwise.
fn accesses(func: &Function, body: &BTreeSet<Block>) -> Option<Vec<(Value, Value, Inst)>> {
    let mut out = Vec::new();
    for &b in body {
        for &i in &func.dfg.block(b).insts {
            match func.dfg.inst(i) {
                InstData::Load { array, index, .. } | InstData::Store { array, index, .. } => {
                    out.push((*array, *index, i))
                }
                // Everything else that cannot read or write an array's
                // elements; any other instruction (a call, a reference, a
                // copy, the tape's) leaves the loop alone.
                InstData::Const { .. }
                | InstData::Unary { .. }
                | InstData::Binary { .. }
                | InstData::Cmp { .. }
                | InstData::Select { .. }
                | InstData::Convert { .. }
                | InstData::Math { .. }
                | InstData::ArrayLen { .. }
                | InstData::ArrayView { .. }
                | InstData::LenCheck { .. }
                | InstData::PairMake { .. }
                | InstData::PairPrimal { .. }
                | InstData::PairDiff { .. }
                | InstData::Jump { .. }
                | InstData::Branch { .. }
                | InstData::Return { .. } => (),
                _ => return None,
            }
        }
    }
    Some(out)
}

fn candidate(
    func: &Function,
    dom: &DomTree,
    alias: &Alias,
    entry: Block,
    body: BTreeSet<Block>,
) -> Option<Site> {
    let all = accesses(func, &body)?;
    let arrays: BTreeSet<Value> = all.iter().map(|a| a.0).collect();
    'next: for &array in &arrays {
        if defined_in(func, array, &body) {
            continue;
        }
        let mut site = Site {
            entry,
            body: body.clone(),
            array,
            elements: Vec::new(),
            accesses: Vec::new(),
        };
        for &(x, index, inst) in &all {
            if x != array {
                if !alias.disjoint(x, array) {
                    continue 'next;
                }
                continue;
            }
            let Some(k) = int_const(func, index) else {
                continue 'next;
            };
            if !site.elements.contains(&k) {
                site.elements.push(k);
            }
            site.accesses.push((inst, k));
        }
        let stores = site
            .accesses
            .iter()
            .any(|&(i, _)| matches!(func.dfg.inst(i), InstData::Store { .. }));
        let in_bounds = site.elements.iter().all(|&k| {
            accessed_before(func, dom, &body, entry, array, |x| {
                int_const(func, x) == Some(k)
            })
        });
        if stores && in_bounds && site.elements.len() <= MAX_ELEMENTS {
            return Some(site);
        }
    }
    None
}

fn defined_in(func: &Function, v: Value, blocks: &BTreeSet<Block>) -> bool {
    match func.dfg.value_def(v) {
        ValueDef::Param(b, _) => blocks.contains(&b),
        ValueDef::Result(i, _) => blocks.iter().any(|b| func.dfg.block(*b).insts.contains(&i)),
        ValueDef::Unused => true,
    }
}

fn rewrite(func: &mut Function, site: &Site) {
    let elem = func.dfg.value_type(site.array).elem();
    let (span, tag) = {
        let first = site.accesses[0].0;
        (func.span(first), func.tag(first))
    };
    let make = |func: &mut Function, data: InstData, ty: Option<Type>| {
        let inst = func.dfg.make_inst(data, ty.as_slice());
        func.set_span(inst, span);
        func.set_tag(inst, tag);
        inst
    };
    // The slots and the indices, made in the entry block (which runs once
    // and dominates every use).
    let start = func.layout[0];
    let mut slots: BTreeMap<i64, (Value, Value)> = BTreeMap::new();
    for (n, &k) in site.elements.iter().enumerate() {
        let slot = make(func, InstData::Slot, Some(Type::Ref(elem)));
        let value = adc_ir::Constant::I64(k);
        let index = make(func, InstData::Const { value }, Some(Type::I64));
        func.dfg
            .block_mut(start)
            .insts
            .splice(2 * n..2 * n, [slot, index]);
        let slot = func.dfg.inst_results(slot)[0];
        let index = func.dfg.inst_results(index)[0];
        slots.insert(k, (slot, index));
        // Before the loop's entry edge's branch.
        // Before the entry block's terminator.
        let load = InstData::Load {
            array: site.array,
            index,
            checked: false,
        };
        let load = make(func, load, Some(Type::Scalar(elem)));
        let value = func.dfg.inst_results(load)[0];
        let put = make(func, InstData::RefStore { ptr: slot, value }, None);
        let insts = &mut func.dfg.block_mut(site.entry).insts;
        let at = insts.len() - 1;
        insts.splice(at..at, [load, put]);
    }
    for &(inst, k) in &site.accesses {
        let ptr = slots[&k].0;
        let data = match func.dfg.inst(inst) {
            InstData::Store { value, .. } => InstData::RefStore { ptr, value: *value },
            _ => InstData::RefLoad { ptr },
        };
        *func.dfg.inst_mut(inst) = data;
    }
    // Every edge out of the loop through a block that stores back.
    for &b in &site.body {
        let Some(term) = func.terminator(b) else {
            continue;
        };
        let calls = func.dfg.inst(term).successors().len();
        for c in 0..calls {
            let target = func.dfg.inst(term).successors()[c].block;
            if site.body.contains(&target) {
                continue;
            }
            let out = func.dfg.make_block();
            let at = func
                .layout
                .iter()
                .position(|&x| x == b)
                .map_or(func.layout.len(), |p| p + 1);
            func.layout.insert(at, out);
            for &(ptr, index) in slots.values() {
                let get = make(func, InstData::RefLoad { ptr }, Some(Type::Scalar(elem)));
                let value = func.dfg.inst_results(get)[0];
                let store = InstData::Store {
                    array: site.array,
                    index,
                    value,
                    checked: false,
                };
                let store = make(func, store, None);
                func.dfg.block_mut(out).insts.extend([get, store]);
            }
            let call = &mut func.dfg.inst_mut(term).successors_mut()[c];
            let dest = std::mem::replace(
                *call,
                BlockCall {
                    block: out,
                    args: Vec::new(),
                },
            );
            let jump = make(func, InstData::Jump { dest }, None);
            func.dfg.block_mut(out).insts.push(jump);
        }
    }
}
