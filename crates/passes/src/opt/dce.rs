//! Dead-code elimination: removes unreachable blocks, block parameters
//! nothing observable depends on, and instructions without side effects
//! whose results are unused (to a fixed point).
//!
//! A parameter is live when a side effect, a branch condition or a
//! returned value depends on it, through instructions and edges. So values
//! a loop carries only into themselves go, which use counts never find: a
//! sum nobody reads after the loop, as derivative code has when the
//! primal result or a tangent is not wanted (`ActiveOnly`, forward over
//! reverse).
//!
//! A checked load whose result is unused stays for its check, unless a
//! later unchecked load in the same block, at the same index of an array
//! as long as its own (`lencheck a, b` in the entry block), can make that
//! check instead, with nothing that has effects between them: that load
//! becomes checked (with the dead one's location) and the dead one goes;
//! so does one a later `lencheck.index` of the same index, into its array
//! or such a twin, checks already.
//! A dependency sweep loads each input and its tangent at one index and
//! uses only the tangent (sparse Jacobians' `NAME__eKm` read every point's
//! coordinates, a cache miss, only for their check).
//!
//! Assumes: verified input. Guarantees: verified output; the entry
//! block's parameters are untouched; the same runtime errors at the same
//! places.

use crate::cfg::incoming_edges;
use crate::defs::use_counts;
use adc_ir::dom::dominators;
use adc_ir::{Function, Inst, InstData, LenCheckOf, Type, Value, ValueDef};
use std::collections::BTreeSet;

pub fn run(func: &mut Function) -> bool {
    run_counted(func).0
}

/// `run`, and how many rounds it took: use counts are computed once per
/// round, and a round after the first follows one that moved checks or
/// removed instructions. A chain of dead instructions goes in one round.
pub fn run_counted(func: &mut Function) -> (bool, usize) {
    let mut reachable = vec![false; func.dfg.num_blocks()];
    for b in dominators(func).0 {
        reachable[b.index()] = true;
    }
    let before = func.layout.len();
    func.layout.retain(|b| reachable[b.index()]);
    let mut changed = func.layout.len() != before;
    changed |= dead_params(func);
    for rounds in 1.. {
        let mut counts = use_counts(func);
        let removed = remove_unused(func, &mut counts);
        if !removed && !transfer_checks(func, &counts) {
            return (changed, rounds);
        }
        changed = true;
    }
    unreachable!("invariant: `1..` does not end")
}

/// Removes every removable instruction whose results are unused, and then
/// those only they used, and so on (a work list: each instruction is
/// looked at once, not once per round); keeps `counts` up to date. Returns
/// whether it removed any.
fn remove_unused(func: &mut Function, counts: &mut [u32]) -> bool {
    let unused = |func: &Function, counts: &[u32], inst: Inst| {
        crate::predicates::is_removable(func, inst)
            && func
                .dfg
                .inst_results(inst)
                .iter()
                .all(|r| counts[r.index()] == 0)
    };
    let mut dead = vec![false; func.dfg.num_insts()];
    let mut work = Vec::new();
    for &b in &func.layout {
        for &inst in &func.dfg.block(b).insts {
            if unused(func, counts, inst) {
                dead[inst.index()] = true;
                work.push(inst);
            }
        }
    }
    if work.is_empty() {
        return false;
    }
    let mut args = Vec::new();
    while let Some(inst) = work.pop() {
        args.clear();
        func.dfg.inst(inst).for_each_arg(|a| args.push(a));
        for &a in &args {
            counts[a.index()] -= 1;
            if counts[a.index()] > 0 {
                continue;
            }
            // An operand's definition dominates its use: it is in the
            // layout, so its own operands are counted.
            if let ValueDef::Result(def, _) = func.dfg.value_def(a) {
                if !dead[def.index()] && unused(func, counts, def) {
                    dead[def.index()] = true;
                    work.push(def);
                }
            }
        }
    }
    for b in func.layout.clone() {
        func.dfg.block_mut(b).insts.retain(|i| !dead[i.index()]);
    }
    true
}

/// The pairs of arrays of one length: `lencheck a, b` in the entry block,
/// both ways.
fn same_length(func: &Function) -> BTreeSet<(Value, Value)> {
    let mut out = BTreeSet::new();
    let Some(entry) = func.entry_block() else {
        return out;
    };
    for &i in &func.dfg.block(entry).insts {
        if let InstData::LenCheck { args: [a, b], .. } = func.dfg.inst(i) {
            if [a, b]
                .iter()
                .all(|v| matches!(func.dfg.value_type(**v), Type::Array(_)))
            {
                out.insert((*a, *b));
                out.insert((*b, *a));
            }
        }
    }
    out
}

/// Moves the checks of unused checked loads to later unchecked loads (see
/// the module's doc); returns whether it moved any.
fn transfer_checks(func: &mut Function, counts: &[u32]) -> bool {
    let pairs = same_length(func);
    let mut moved = false;
    for b in func.layout.clone() {
        let insts = func.dfg.block(b).insts.clone();
        let mut dead: Vec<Inst> = Vec::new();
        for (k, &i) in insts.iter().enumerate() {
            let InstData::Load {
                array,
                index,
                checked: true,
            } = *func.dfg.inst(i)
            else {
                continue;
            };
            if func
                .dfg
                .inst_results(i)
                .iter()
                .any(|r| counts[r.index()] > 0)
            {
                continue;
            }
            for &j in &insts[k + 1..] {
                match *func.dfg.inst(j) {
                    InstData::Load {
                        array: other,
                        index: at,
                        checked: false,
                    } if at == index && pairs.contains(&(array, other)) => {
                        if let InstData::Load { checked, .. } = func.dfg.inst_mut(j) {
                            *checked = true;
                        }
                        let span = func.span(i);
                        func.set_span(j, span);
                        dead.push(i);
                        break;
                    }
                    // The same check, made without a load.
                    InstData::LenCheck {
                        args: [at, other],
                        what: LenCheckOf::Index,
                    } if at == index && (other == array || pairs.contains(&(array, other))) => {
                        let span = func.span(i);
                        func.set_span(j, span);
                        dead.push(i);
                        break;
                    }
                    _ if func.dfg.inst(j).has_side_effects() => break,
                    _ => (),
                }
            }
        }
        if !dead.is_empty() {
            func.dfg.block_mut(b).insts.retain(|i| !dead.contains(i));
            moved = true;
        }
    }
    moved
}

/// Removes the parameters of non-entry blocks that nothing observable
/// depends on; returns whether there were any.
fn dead_params(func: &mut Function) -> bool {
    let Some(&entry) = func.layout.first() else {
        return false;
    };
    let edges = incoming_edges(func);
    let mut live = vec![false; func.dfg.num_values()];
    let mut work = Vec::new();
    let mark = |v: adc_ir::Value, live: &mut Vec<bool>, work: &mut Vec<adc_ir::Value>| {
        if !live[v.index()] {
            live[v.index()] = true;
            work.push(v);
        }
    };
    // Roots: what side effects, branches and returns read (edge
    // arguments are live only through the parameters they feed).
    for &b in &func.layout {
        for &inst in &func.dfg.block(b).insts {
            match func.dfg.inst(inst) {
                InstData::Jump { .. } => {}
                InstData::Branch { cond, .. } => mark(*cond, &mut live, &mut work),
                data if data.is_terminator() || !crate::predicates::is_removable(func, inst) => {
                    data.for_each_arg(|a| mark(a, &mut live, &mut work))
                }
                _ => {}
            }
        }
    }
    while let Some(v) = work.pop() {
        match func.dfg.value_def(v) {
            ValueDef::Result(inst, _) => func
                .dfg
                .inst(inst)
                .for_each_arg(|a| mark(a, &mut live, &mut work)),
            ValueDef::Param(b, i) if b != entry => {
                for e in edges.get(&b).into_iter().flatten() {
                    mark(e.args[i as usize], &mut live, &mut work);
                }
            }
            _ => {}
        }
    }
    let dead: Vec<(adc_ir::Block, usize)> = func
        .layout
        .iter()
        .skip(1)
        .flat_map(|&b| {
            func.dfg
                .block_params(b)
                .iter()
                .enumerate()
                .filter(|(_, p)| !live[p.index()])
                .map(move |(i, _)| (b, i))
                .collect::<Vec<_>>()
        })
        .collect();
    if dead.is_empty() {
        return false;
    }
    super::block_params::remove_params(func, &edges, dead);
    true
}

#[cfg(test)]
mod tests {
    /// A chain of `n` dead instructions, each using the one before, goes in
    /// one round and a round that finds nothing more (the round-by-round
    /// sweep took `n + 1` rounds, quadratic: a 10,000-term sum under
    /// `[hessian]` spent 25 s here).
    #[test]
    fn dead_chain_in_two_rounds() {
        let n = 2000;
        let mut text = String::from("func @f(x: f64) -> f64 {\nblock0(v0: f64):\n");
        text += "    v1: f64 = mul v0, v0\n";
        for k in 2..=n {
            text += &format!("    v{k}: f64 = add v{}, v1\n", k - 1);
        }
        text += "    return v0\n}\n";
        let mut m = adc_ir::parse_module(&text).expect("parses");
        let f = &mut m.funcs[0];
        assert_eq!(super::run_counted(f), (true, 2));
        let left = f
            .layout
            .iter()
            .map(|&b| f.dfg.block(b).insts.len())
            .sum::<usize>();
        assert_eq!(left, 1, "only the return stays");
    }
}
