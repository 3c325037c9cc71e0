//! `transpose` of vector mode's lanes: `widen` writes each differential
//! instruction `W` times, one lane after the other; transposed one by one,
//! last first, the lanes' adjoints would come out lane by lane, in
//! descending order (`W - 1` first). Here the copies of one instruction are
//! transposed as a group and their adjoint instructions then interleaved,
//! position by position, lane 0 first: the lanes of each adjoint
//! instruction stand side by side in ascending order, as forward mode's
//! do, for codegen to pair (`translate/simd/lanes.rs`).
//!
//! A group is a run of at most `W` adjacent differential instructions of
//! one kind (the same opcode), none using another's result. Its members
//! are transposed exactly as alone (the same instructions and values, the
//! same accumulation order); only their instructions' order changes, and
//! only when all of them are still the last of the current block and the
//! new order computes the same: every operand defined before its use; only
//! pure arithmetic, float division, unchecked loads and stores, and slot
//! loads and stores; and two memory accesses of different members that
//! swap places (one of them a store) never touch the same cell
//! (`alias::apart`, two different constant indices, or two different
//! `slot`s). Otherwise the group keeps
//! the one-by-one order.

use super::Transposer;
use crate::ad::AdError;
use crate::alias::Alias;
use crate::defs::{def_data, int_const};
use crate::predicates::same_opcode;
use adc_ir::{BinaryOp, Function, Inst, InstData, Value};
use std::collections::BTreeMap;

/// The differential instructions `insts` (in block order) in groups: runs
/// of at most `width` instructions of one kind, none using another's
/// result.
pub(super) fn lane_groups(func: &Function, insts: &[Inst], width: usize) -> Vec<Vec<Inst>> {
    let mut groups: Vec<Vec<Inst>> = Vec::new();
    for &i in insts {
        if let Some(g) = groups.last_mut() {
            let results: Vec<Value> = g
                .iter()
                .flat_map(|&m| func.dfg.inst_results(m).iter().copied())
                .collect();
            let mut uses = false;
            func.dfg
                .inst(i)
                .for_each_arg(|a| uses |= results.contains(&a));
            if g.len() < width && same_opcode(func.dfg.inst(g[0]), func.dfg.inst(i)) && !uses {
                g.push(i);
                continue;
            }
        }
        groups.push(vec![i]);
    }
    groups
}

/// Whether `data` may move past instructions of other lanes (memory
/// accesses only past those they never touch).
fn movable(func: &Function, data: &InstData, results: &[Value]) -> bool {
    match data {
        InstData::Binary {
            op: BinaryOp::Div, ..
        } => results
            .first()
            .is_some_and(|r| func.dfg.value_type(*r).elem().is_float()),
        InstData::Load { checked, .. } | InstData::Store { checked, .. } => !checked,
        InstData::RefLoad { .. } | InstData::RefStore { .. } => true,
        d => d.is_pure(),
    }
}

/// A memory access: an array element or a reference, and whether it writes.
fn access(data: &InstData) -> Option<(Value, Option<Value>, bool)> {
    match data {
        InstData::Load { array, index, .. } => Some((*array, Some(*index), false)),
        InstData::Store { array, index, .. } => Some((*array, Some(*index), true)),
        InstData::RefLoad { ptr } => Some((*ptr, None, false)),
        InstData::RefStore { ptr, .. } => Some((*ptr, None, true)),
        _ => None,
    }
}

/// Whether two accesses never touch the same cell: elements `alias`
/// proves apart, or two different slots (a slot is no array's element).
fn apart(
    func: &Function,
    alias: &Alias,
    a: (Value, Option<Value>),
    b: (Value, Option<Value>),
) -> bool {
    let slot = |p: Value| matches!(def_data(func, p), Some(InstData::Slot));
    match (a, b) {
        ((x, Some(i)), (y, Some(j))) => {
            let (ci, cj) = (int_const(func, i), int_const(func, j));
            (x == y && ci.is_some() && cj.is_some() && ci != cj) || alias.apart((x, i), (y, j))
        }
        ((p, None), (q, None)) => p != q && slot(p) && slot(q),
        ((p, None), _) | (_, (p, None)) => slot(p),
    }
}

/// Whether running `new` instead of `old` (the same instructions) computes
/// the same (the module comment).
fn same_effect(func: &Function, old: &[Inst], new: &[Inst]) -> bool {
    let pos: BTreeMap<Inst, usize> = new.iter().enumerate().map(|(k, &i)| (i, k)).collect();
    let defined: BTreeMap<Value, usize> = new
        .iter()
        .enumerate()
        .flat_map(|(k, &i)| func.dfg.inst_results(i).iter().map(move |&r| (r, k)))
        .collect();
    for (k, &i) in new.iter().enumerate() {
        let data = func.dfg.inst(i);
        if !movable(func, data, func.dfg.inst_results(i)) {
            return false;
        }
        let mut late = false;
        data.for_each_arg(|a| late |= defined.get(&a).is_some_and(|&d| d >= k));
        if late {
            return false;
        }
    }
    let alias = Alias::new(func);
    let mem: Vec<(Inst, (Value, Option<Value>, bool))> = old
        .iter()
        .filter_map(|&i| Some((i, access(func.dfg.inst(i))?)))
        .collect();
    for (x, &(i, (p, a, wi))) in mem.iter().enumerate() {
        for &(j, (q, b, wj)) in &mem[x + 1..] {
            if pos[&i] > pos[&j] && (wi || wj) && !apart(func, &alias, (p, a), (q, b)) {
                return false;
            }
        }
    }
    true
}

impl Transposer<'_> {
    /// Transposes one group (`lane_groups`), last member first, then
    /// interleaves the members' instructions (the module comment).
    pub(super) fn transpose_group(&mut self, group: &[Inst]) -> Result<(), AdError> {
        let blk = self.cur;
        let mut marks = Vec::new();
        for &i in group.iter().rev() {
            marks.push(self.out.dfg.num_insts());
            self.span = self.u.span(i);
            self.transpose_inst(i)?;
        }
        if group.len() > 1 && self.cur == blk {
            self.interleave(&marks);
        }
        Ok(())
    }

    /// Interleaves the instructions made since `marks[0]` (member `m`'s
    /// from `marks[m]` on), when they are the current block's last.
    fn interleave(&mut self, marks: &[usize]) {
        let insts = &self.out.dfg.block(self.cur).insts;
        // The group's instructions were appended to the block (`emit`), the
        // block's older ones made before `marks[0]`: the new ones are the
        // block's last (found from its end, not its start: a long block
        // has many groups).
        let start = insts
            .iter()
            .rposition(|i| i.index() < marks[0])
            .map_or(0, |k| k + 1);
        if start == insts.len() {
            return;
        }
        let old = &insts[start..];
        let mut lists: Vec<Vec<Inst>> = vec![Vec::new(); marks.len()];
        for &i in old {
            // Invariant: `i.index() >= marks[0]`, so some mark is at most it.
            let m = marks.iter().rposition(|&k| i.index() >= k).expect("a mark");
            lists[m].push(i);
        }
        let longest = lists.iter().map(Vec::len).max().unwrap_or(0);
        let mut new = Vec::with_capacity(old.len());
        for p in 0..longest {
            // Members were transposed last lane first: lane 0 is the last.
            new.extend(lists.iter().rev().filter_map(|l| l.get(p).copied()));
        }
        if new == old || !same_effect(&self.out, old, &new) {
            return;
        }
        self.out.dfg.block_mut(self.cur).insts.truncate(start);
        self.out.dfg.block_mut(self.cur).insts.extend(new);
    }
}
