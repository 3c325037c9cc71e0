//! Loop-entry reloads: each value a loop uses but does not define gets a
//! stack slot of its own (its home), written where the value is defined,
//! and the loop uses a copy loaded from the home in the loop's preheader.
//!
//! Why: a value that lives across a call stays in a stack slot (the C
//! calling convention keeps no float and few integer registers across
//! calls), and Cranelift's register allocator splits its live range where
//! it sees fit, sometimes inside a loop. In a dot product nested in a loop
//! that calls `exp`, the array pointer was stored to its slot and loaded
//! back on every iteration: a loop-carried dependency through memory, 1.4x
//! the loop's time. A copy loaded in front of the loop lives only in the
//! loop, so the allocator keeps it in a register when the loop makes no
//! call.
//!
//! The homes' loads and stores carry alias regions of their own (16,
//! shared in turn, which nothing else uses), so Cranelift's alias analysis
//! forwards the stored value to a load that no call separates from the
//! store (no array store clobbers a home): where nothing calls, the copies
//! are the values themselves and nothing changes. A function that makes no
//! call gets no homes at all.
//!
//! The preheader of a loop is the one predecessor of its header outside
//! the loop; a loop entered from several blocks gets no copies (its uses
//! take the copy of the next loop out, or the value itself). A use takes
//! the copy of the innermost loop around it that does not define the
//! value. Constants are left alone (Cranelift rematerialises them).

use crate::translate::{clif_types, FuncTranslator, PTR, TRUSTED};
use adc_ir::{Block, Function, InstData, MathFunc, Value, ValueDef};
use cranelift_codegen::ir::{self as clif, InstBuilder, MemFlagsData};
use cranelift_module::Module;
use std::collections::{BTreeMap, BTreeSet, HashMap};

/// Where each copy is loaded and which copy each block uses.
#[derive(Default)]
pub(crate) struct Homes {
    /// The values that have a home.
    pub homed: BTreeSet<Value>,
    /// Per preheader: the values whose copies are loaded before its
    /// terminator.
    pub reload_at: HashMap<Block, Vec<Value>>,
    /// Per block: for each value it uses through a copy, the preheader
    /// that loaded the copy.
    pub use_copy: HashMap<Block, Vec<(Value, Block)>>,
}

/// Finds the homes of `func`'s values (`rpo`: its reachable blocks in
/// reverse post-order).
pub(crate) fn homes(func: &Function, rpo: &[Block]) -> Homes {
    // Without a call, nothing forces a value onto the stack, and the
    // copies would only be more values (kmeans' distance loops ran 1.3x
    // slower with them).
    if !rpo.iter().any(|b| block_calls(func, *b)) {
        return Homes::default();
    }
    let dom = adc_ir::dom::DomTree::new(func);
    let mut preds: HashMap<Block, Vec<Block>> = HashMap::new();
    for &b in rpo {
        for s in func.successors(b) {
            preds.entry(s).or_default().push(b);
        }
    }
    // Natural loops: a back edge u -> h (h dominates u) adds to h's body
    // every block that reaches u without passing h.
    let mut bodies: BTreeMap<Block, BTreeSet<Block>> = BTreeMap::new();
    for &u in rpo {
        for h in func.successors(u) {
            if !dom.is_reachable(h) || !dom.dominates(h, u) {
                continue;
            }
            let body = bodies.entry(h).or_insert_with(|| BTreeSet::from([h]));
            let mut stack = vec![u];
            while let Some(x) = stack.pop() {
                if body.insert(x) {
                    stack.extend(preds.get(&x).into_iter().flatten().copied());
                }
            }
        }
    }
    // Loops with a preheader and no call, innermost (smallest) first.
    let mut loops: Vec<(Block, Block, &BTreeSet<Block>)> = bodies
        .iter()
        .filter(|(_, body)| !body.iter().any(|b| block_calls(func, *b)))
        .filter_map(|(h, body)| {
            let outside: Vec<Block> = preds
                .get(h)
                .into_iter()
                .flatten()
                .copied()
                .filter(|p| !body.contains(p))
                .collect();
            match outside[..] {
                [p] => Some((*h, p, body)),
                _ => None,
            }
        })
        .collect();
    loops.sort_by_key(|(_, _, body)| body.len());
    // Per block, the loops around it, innermost first.
    let mut around: HashMap<Block, Vec<usize>> = HashMap::new();
    for (k, (_, _, body)) in loops.iter().enumerate() {
        for b in body.iter() {
            around.entry(*b).or_default().push(k);
        }
    }
    let mut def_block: HashMap<Value, Block> = HashMap::new();
    for &b in rpo {
        for &p in func.dfg.block_params(b) {
            def_block.insert(p, b);
        }
        for &i in &func.dfg.block(b).insts {
            if matches!(func.dfg.inst(i), InstData::Const { .. }) {
                continue;
            }
            for &r in func.dfg.inst_results(i) {
                def_block.insert(r, b);
            }
        }
    }
    let mut out = Homes::default();
    for &b in rpo {
        let mut used: BTreeSet<Value> = BTreeSet::new();
        for &i in &func.dfg.block(b).insts {
            func.dfg.inst(i).for_each_arg(|v| {
                used.insert(v);
            });
        }
        for v in used {
            let Some(&d) = def_block.get(&v) else {
                continue;
            };
            if d == b {
                continue;
            }
            let innermost = around
                .get(&b)
                .into_iter()
                .flatten()
                .map(|k| &loops[*k])
                .find(|(_, _, body)| !body.contains(&d));
            if let Some(&(_, pre, _)) = innermost {
                out.homed.insert(v);
                out.use_copy.entry(b).or_default().push((v, pre));
                let at = out.reload_at.entry(pre).or_default();
                if !at.contains(&v) {
                    at.push(v);
                }
            }
        }
    }
    // A value defined by a preheader's own terminator cannot be reloaded
    // before it; terminators define nothing, so this cannot happen.
    debug_assert!(out.reload_at.iter().all(|(p, vs)| vs.iter().all(|v| {
        match func.dfg.value_def(*v) {
            ValueDef::Result(i, _) => func.terminator(*p) != Some(i),
            _ => true,
        }
    })));
    out
}

/// Whether `b` calls out on its common path: a copy live across a call
/// would be spilled like the value it copies. (A tape push grows the tape
/// only on a cold path, and `copyrange` calls `__adc_copy`: both with
/// Cranelift's `preserve_all` convention, which clobbers no register.)
fn block_calls(func: &Function, b: Block) -> bool {
    func.dfg
        .block(b)
        .insts
        .iter()
        .any(|&i| match func.dfg.inst(i) {
            InstData::Math { func, .. } => !matches!(
                func,
                MathFunc::Abs
                    | MathFunc::Sqrt
                    | MathFunc::Floor
                    | MathFunc::Ceil
                    | MathFunc::Trunc
                    | MathFunc::Fma
            ),
            InstData::Call { .. }
            | InstData::ArrayNew { .. }
            | InstData::ArrayFree { .. }
            | InstData::Print { .. }
            | InstData::ArrayCopy { .. }
            | InstData::CopyRange { .. }
            | InstData::DeferFree { .. }
            | InstData::LoopCheckpoint { .. }
            | InstData::TapeLend
            | InstData::TapeReclaim { .. }
            | InstData::TapeAdopt { .. }
            | InstData::TapeGive { .. } => true,
            _ => false,
        })
}

/// Alias regions the homes share in turn.
const REGIONS: usize = 16;

/// The translator's side: the slots, the copies and which value each IR
/// value currently stands for.
#[derive(Default)]
pub(crate) struct HomeState {
    pub plan: Homes,
    /// The alias regions of the homes, `REGIONS` at most (created as
    /// needed), handed out in turn: a store to one home does not stop
    /// Cranelift from forwarding another's value in a loop.
    regions: Vec<clif::AliasRegion>,
    slots: HashMap<Value, (MemFlagsData, Vec<clif::StackSlot>)>,
    /// The Cranelift values of each IR value where it is defined, while a
    /// copy stands for it.
    originals: HashMap<Value, Vec<clif::Value>>,
    copies: HashMap<(Block, Value), Vec<clif::Value>>,
}

impl HomeState {
    /// Whether a copy stands for `v` in the block being translated.
    pub(crate) fn stands_in(&self, v: Value) -> bool {
        self.originals.contains_key(&v)
    }

    /// A bound on the frame bytes the homes take.
    pub(crate) fn frame_bytes(&self, func: &Function) -> i64 {
        self.plan
            .homed
            .iter()
            .map(|v| 8 * clif_types(func.dfg.value_type(*v)).len() as i64)
            .sum()
    }
}

impl<M: Module> FuncTranslator<'_, '_, M> {
    /// The flags of the `k`-th home's loads and stores.
    fn home_flags(&mut self, k: usize) -> MemFlagsData {
        let k = k % REGIONS;
        while self.homes.regions.len() <= k {
            let n = self.homes.regions.len() as u32;
            let region = self.b.func.dfg.alias_regions.insert(clif::AliasRegionData {
                user_id: 0xad_0000 + n,
                description: format!("adc home {n}").into(),
            });
            self.homes.regions.push(region);
        }
        TRUSTED.with_alias_region(Some(self.homes.regions[k]))
    }

    /// Stores `v` to its home, if it has one (where `v` is defined).
    pub(crate) fn store_home(&mut self, v: Value) {
        if !self.homes.plan.homed.contains(&v) {
            return;
        }
        let flags = self.home_flags(self.homes.slots.len());
        let vals = self.values[v.index()].clone();
        let mut slots = Vec::with_capacity(vals.len());
        for x in vals {
            let slot = self.b.create_sized_stack_slot(clif::StackSlotData::new(
                clif::StackSlotKind::ExplicitSlot,
                8,
                3,
            ));
            let addr = self.b.ins().stack_addr(PTR, slot, 0);
            self.b.ins().store(flags, x, addr, 0);
            slots.push(slot);
        }
        self.homes.slots.insert(v, (flags, slots));
    }

    /// At the start of `blk`'s translation: its parameters go to their
    /// homes, and the copies `blk` uses stand for their values (the
    /// copies of the block translated before are put back).
    pub(crate) fn enter_block_homes(&mut self, blk: Block) {
        for (v, vals) in std::mem::take(&mut self.homes.originals) {
            self.values[v.index()] = vals;
        }
        for &p in self.func.dfg.block_params(blk) {
            self.store_home(p);
        }
        let uses = self
            .homes
            .plan
            .use_copy
            .get(&blk)
            .cloned()
            .unwrap_or_default();
        for (v, pre) in uses {
            // Invariant: `pre` dominates `blk`, so the RPO translated it
            // (and loaded the copy) before.
            if let Some(copy) = self.homes.copies.get(&(pre, v)) {
                let original = std::mem::replace(&mut self.values[v.index()], copy.clone());
                self.homes.originals.insert(v, original);
            }
        }
    }

    /// Before the terminator of a preheader: load the copies of the
    /// values its loop uses.
    pub(crate) fn load_copies(&mut self, pre: Block) {
        let Some(vs) = self.homes.plan.reload_at.get(&pre).cloned() else {
            return;
        };
        for v in vs {
            let Some((flags, slots)) = self.homes.slots.get(&v).cloned() else {
                continue;
            };
            let tys = clif_types(self.func.dfg.value_type(v));
            let copy: Vec<clif::Value> = slots
                .iter()
                .zip(tys)
                .map(|(slot, ty)| {
                    let addr = self.b.ins().stack_addr(PTR, *slot, 0);
                    self.b.ins().load(ty, flags, addr, 0)
                })
                .collect();
            self.homes.copies.insert((pre, v), copy);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A dot product (versioned: checked and unchecked copies) in a loop
    /// that calls `exp`, as `adc ir --after final` prints it.
    const NEST: &str = "func @f(w: arr<f64>, x: arr<f64>, rows: i64) -> f64 {
block0(v0: arr<f64>, v1: arr<f64>, v2: i64):
    v3: f64 = const 0.0
    v4: i64 = const 0
    v32: i64 = len v1
    v38: i64 = const 1
    v14: bool = cmp lt v4, v2
    v59: bool = cmp lt v4, v32
    v70: bool = const true
    br v14, block5(v3, v4), block2(v3)
block2(v74: f64):
    return v74
block5(v72: f64, v73: i64):
    br v70, block17(), block6()
block6():
    br v59, block10(v3, v4), block7(v3)
block7(v71: f64):
    v40: f64 = math exp v71
    v41: f64 = add v72, v40
    v43: i64 = add v73, v38
    v75: bool = cmp lt v43, v2
    br v75, block5(v41, v43), block2(v41)
block10(v76: f64, v77: i64):
    v34: f64 = load v0, v77
    v35: f64 = load.unchecked v1, v77
    v36: f64 = mul v34, v35
    v37: f64 = add v76, v36
    v39: i64 = add v77, v38
    v78: bool = cmp lt v39, v32
    br v78, block10(v37, v39), block7(v37)
block17():
    br v59, block18(v3, v4), block7(v3)
block18(v79: f64, v80: i64):
    v48: f64 = load.unchecked v0, v80
    v49: f64 = load.unchecked v1, v80
    v50: f64 = mul v48, v49
    v51: f64 = add v79, v50
    v52: i64 = add v80, v38
    v81: bool = cmp lt v52, v32
    br v81, block18(v51, v52), block7(v51)
}
";

    #[test]
    fn call_free_inner_loops_reload_in_their_preheaders() {
        let m = adc_ir::parse_module(NEST).expect("parses");
        let f = &m.funcs[0];
        let (rpo, _) = adc_ir::dom::dominators(f);
        let plan = homes(f, &rpo);
        let block = |n: usize| Block::new(n);
        let value = |n: usize| Value::new(n);
        let names = |vs: &[Value]| {
            let mut s: Vec<usize> = vs.iter().map(|v| v.index()).collect();
            s.sort();
            s
        };
        // Both copies of the dot product load w, x and len(x) in front of
        // the loop (constants are not reloaded; the counter and the sum
        // are the loop's own).
        for (pre, body) in [(6, 10), (17, 18)] {
            assert_eq!(
                names(&plan.reload_at[&block(pre)]),
                [0, 1, 32],
                "block{pre}"
            );
            let uses = &plan.use_copy[&block(body)];
            assert!(uses.contains(&(value(1), block(pre))), "{uses:?}");
            assert!(uses.iter().all(|(_, p)| *p == block(pre)));
        }
        // The outer loop calls `exp`: a copy there would be spilled too.
        assert!(!plan.reload_at.contains_key(&block(0)));
        assert!(!plan.use_copy.contains_key(&block(7)));
        assert!(!plan.use_copy.contains_key(&block(5)));
    }
}
