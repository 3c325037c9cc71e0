//! Which `free`s of user IR are safe to keep.
//!
//! An array is *owned* when the function made it (`new`, `copy`, `null`)
//! or received it in a block parameter every incoming edge of which
//! passes an owned array, and it is used linearly: every instruction that
//! uses it only reads or writes its elements, asks its length, copies it
//! or passes it to a call (which cannot keep it: no function returns an
//! array and arrays hold no arrays), except *consumers*, a `free` or a
//! branch passing it on (once per target), and nothing that uses it can
//! run after a consumer before its definition runs again. A `free` of an
//! owned array stays: the array is freed exactly once and never touched
//! afterwards. Any other `free` is removed (a leak is safe, a double free
//! is not). IR that `adc ir` prints carries a loop's local array in a
//! block parameter and frees it on the next iteration, so it runs in as
//! much memory read back as it did compiled from source.

use adc_ir::{Block, Function, Inst, InstData, Type, Value, ValueDef};
use std::collections::{HashMap, HashSet};

/// Functions with more blocks than this keep no `free` (the search is
/// linear in the function per consumer).
const MAX_BLOCKS: usize = 2_000;

/// The `free` instructions of `func` that are safe to keep.
pub(super) fn safe_frees(func: &Function) -> HashSet<Inst> {
    if func.layout.len() > MAX_BLOCKS || func.layout.is_empty() {
        return HashSet::new();
    }
    let mut uses: HashMap<Value, Vec<(Block, Inst)>> = HashMap::new();
    let mut incoming: HashMap<Value, Vec<Value>> = HashMap::new();
    let mut owned: HashSet<Value> = HashSet::new();
    for &b in &func.layout {
        if b != func.layout[0] {
            for &p in func.dfg.block_params(b) {
                if matches!(func.dfg.value_type(p), Type::Array(_)) {
                    owned.insert(p);
                }
            }
        }
        for &i in &func.dfg.block(b).insts {
            let data = func.dfg.inst(i);
            data.for_each_arg(|v| uses.entry(v).or_default().push((b, i)));
            if matches!(
                data,
                InstData::ArrayNew { .. } | InstData::ArrayNull | InstData::ArrayCopy { .. }
            ) {
                owned.extend(func.dfg.inst_results(i).iter().copied());
            }
            for call in data.successors() {
                let params = func.dfg.block_params(call.block);
                for (p, a) in params.iter().zip(&call.args) {
                    incoming.entry(*p).or_default().push(*a);
                }
            }
        }
    }
    loop {
        let before = owned.len();
        let snapshot = owned.clone();
        owned.retain(|v| {
            incoming
                .get(v)
                .is_none_or(|args| args.iter().all(|a| snapshot.contains(a)))
                && linear(func, *v, uses.get(v).map_or(&[][..], |u| u))
        });
        if owned.len() == before {
            break;
        }
    }
    func.layout
        .iter()
        .flat_map(|b| func.dfg.block(*b).insts.iter().copied())
        .filter(
            |&i| matches!(func.dfg.inst(i), InstData::ArrayFree { array } if owned.contains(array)),
        )
        .collect()
}

fn def_block(func: &Function, v: Value) -> Option<Block> {
    match func.dfg.value_def(v) {
        ValueDef::Param(b, _) => Some(b),
        ValueDef::Result(i, _) => func
            .layout
            .iter()
            .copied()
            .find(|b| func.dfg.block(*b).insts.contains(&i)),
        ValueDef::Unused => None,
    }
}

/// Whether `v`'s uses are harmless or consumers, and no use can follow a
/// consumer before `v` is defined again.
fn linear(func: &Function, v: Value, uses: &[(Block, Inst)]) -> bool {
    let Some(def) = def_block(func, v) else {
        return false;
    };
    let mut consumers = Vec::new();
    for &(b, u) in uses {
        match func.dfg.inst(u) {
            InstData::Load { .. }
            | InstData::Store { .. }
            | InstData::ArrayLen { .. }
            | InstData::ArrayCopy { .. }
            | InstData::CopyRange { .. }
            | InstData::Print { .. }
            | InstData::AliasCheck { .. }
            | InstData::LenCheck { .. }
            | InstData::Call { .. } => {}
            InstData::ArrayFree { .. } => consumers.push((b, u)),
            data @ (InstData::Jump { .. } | InstData::Branch { .. }) => {
                // Passed on once per target: two parameters of one block
                // would own the same array.
                let once = data
                    .successors()
                    .iter()
                    .all(|c| c.args.iter().filter(|a| **a == v).count() <= 1);
                if !once {
                    return false;
                }
                consumers.push((b, u));
            }
            _ => return false,
        }
    }
    consumers.iter().all(|&(cb, c)| {
        let insts = &func.dfg.block(cb).insts;
        let after: HashSet<Inst> = insts
            .iter()
            .skip_while(|i| **i != c)
            .skip(1)
            .copied()
            .collect();
        let mut seen: HashSet<Block> = HashSet::new();
        // A branch consumes `v` only on the edges that pass it.
        let mut stack: Vec<Block> = match func.dfg.inst(c) {
            InstData::ArrayFree { .. } => func.successors(cb),
            data => data
                .successors()
                .iter()
                .filter(|t| t.args.contains(&v))
                .map(|t| t.block)
                .collect(),
        };
        while let Some(b) = stack.pop() {
            if b == def || !seen.insert(b) {
                continue;
            }
            stack.extend(func.successors(b));
        }
        // The consumer itself counts when its block comes round again.
        !uses
            .iter()
            .any(|&(b, u)| seen.contains(&b) || (b == cb && after.contains(&u)))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kept(text: &str) -> usize {
        let m = adc_ir::parse_module(text).expect("parses");
        safe_frees(&m.funcs[0]).len()
    }

    #[test]
    fn a_loops_local_array_freed_on_the_next_iteration_is_kept() {
        // `adc ir --after lower` of a loop declaring `double t[m]`.
        let text = "func @f(n: i64, m: i64) -> f64 {
block0(v0: i64, v1: i64):
    v2: arr<f64> = null
    v3: f64 = const 0.0
    v4: i64 = const 0
    jump block1(v2, v3, v4)
block1(v5: arr<f64>, v8: f64, v9: i64):
    v20: bool = cmp lt v9, v0
    br v20, block5(), block2(v5, v8)
block2(v10: arr<f64>, v13: f64):
    free v10
    return v13
block5():
    free v5
    v21: arr<f64> = new v1
    v23: f64 = const 1.0
    store v21, v4, v23
    v27: i64 = const 1
    v28: i64 = add v9, v27
    jump block1(v21, v8, v28)
}
";
        assert_eq!(kept(text), 2);
    }

    #[test]
    fn frees_that_could_be_double_or_followed_by_a_use_go() {
        let after_use = "func @f(a: arr<f64>, n: i64) -> f64 {
block0(v0: arr<f64>, v1: i64):
    v2: arr<f64> = new v1
    free v2
    free v0
    v3: i64 = const 0
    v4: f64 = load v2, v3
    return v4
}
";
        assert_eq!(kept(after_use), 0, "a use after the free, a parameter");
        let twice = "func @f(n: i64) {
block0(v0: i64):
    v1: arr<f64> = new v0
    jump block1(v1, v1)
block1(v2: arr<f64>, v3: arr<f64>):
    free v2
    free v3
    return
}
";
        assert_eq!(kept(twice), 0, "one array in two parameters");
        let in_a_loop = "func @f(n: i64) {
block0(v0: i64):
    v1: arr<f64> = new v0
    v2: i64 = const 0
    jump block1(v2)
block1(v3: i64):
    free v1
    v4: i64 = const 1
    v5: i64 = add v3, v4
    v6: bool = cmp lt v5, v0
    br v6, block1(v5), block2()
block2():
    return
}
";
        assert_eq!(kept(in_a_loop), 0, "freed again on the next iteration");
    }
}
