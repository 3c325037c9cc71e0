//! Local arrays that live in the stack frame instead of on the heap.
//!
//! `new` of a small constant length whose array never leaves the call
//! (it is only indexed, measured, copied from or into, passed to callees,
//! which cannot keep it, and freed) becomes a zeroed stack slot, and its
//! `free` / `free.defer` does nothing. An array that crosses a block edge,
//! goes into a `select`, on a tape or out through `return` stays on the
//! heap: a `free` could then meet a merged value, and only heap arrays may
//! outlive the instruction that made them in a loop's next iteration.
//! Each execution of the `new` zeroes the slot again: a `new` in a loop
//! gives every iteration a fresh array in the same slot, which is safe
//! because the previous iteration's array cannot reach this one (SSA: only
//! through a block parameter, excluded above).
//!
//! A block parameter that takes such arrays (or `null`) on its edges joins
//! their family: it may be freed and passed on, and also read (indexed,
//! passed to callees) when no `new` whose array reaches it is on a cycle of
//! the CFG: each of those runs at most once per call, so its slot still
//! holds the array the parameter took. (Reverse derivatives read an array
//! made in an arm of an `if`, and its shadow, through the join's
//! parameter: `unzip`.)

use adc_ir::{Function, InstData, Value, ValueDef};
use std::collections::{BTreeMap, BTreeSet};

/// At most this many bytes per array.
const MAX_ARRAY_BYTES: i64 = 512;
/// At most this many bytes of such arrays per function, so that deep
/// recursion keeps small frames.
pub(crate) const MAX_FRAME_BYTES: i64 = 4096;

/// The `new` results of `func` that go on the stack, with their lengths,
/// and the values (those and the array variables holding only them) whose
/// `free` does nothing.
pub(crate) fn stack_arrays(func: &Function) -> (BTreeMap<Value, i64>, BTreeSet<Value>) {
    let mut candidates: BTreeMap<Value, i64> = BTreeMap::new();
    let cyclic = adc_ir::dom::blocks_on_cycles(func);
    // Candidates made on a cycle of the CFG (in a loop).
    let mut renewed: BTreeSet<Value> = BTreeSet::new();
    for &b in &func.layout {
        for &i in &func.dfg.block(b).insts {
            let InstData::ArrayNew { len, .. } = func.dfg.inst(i) else {
                continue;
            };
            let r = func.dfg.inst_results(i)[0];
            let size = i64::from(func.dfg.value_type(r).elem().size());
            if let Some(n) = const_int(func, *len) {
                if (0..=MAX_ARRAY_BYTES / size).contains(&n) {
                    candidates.insert(r, n);
                    if cyclic.contains(&b) {
                        renewed.insert(r);
                    }
                }
            }
        }
    }
    // An array variable of a loop body is a block parameter that takes
    // `null` on entry and the body's `new` on the back edge, and is only
    // freed (before the next `new`, and after the loop): it joins the
    // family of its arrays, whose frees all become no-ops.
    let mut family: BTreeSet<Value> = candidates.keys().copied().collect();
    let nulls = func.null_arrays();
    // Block parameters with the arguments their edges pass.
    let incoming = func.incoming_args();
    loop {
        let before = family.len();
        for (p, args) in &incoming {
            let fed = args.iter().all(|a| family.contains(a) || nulls.contains(a));
            if !family.contains(p) && fed && args.iter().any(|a| family.contains(a)) {
                family.insert(*p);
            }
        }
        if family.len() == before {
            break;
        }
    }
    // And the family parameters they may reach.
    loop {
        let before = renewed.len();
        for (p, args) in &incoming {
            if family.contains(p) && args.iter().any(|a| renewed.contains(a)) {
                renewed.insert(*p);
            }
        }
        if renewed.len() == before {
            break;
        }
    }
    let mut escaping: BTreeSet<Value> = BTreeSet::new();
    for &b in &func.layout {
        for &i in &func.dfg.block(b).insts {
            let data = func.dfg.inst(i);
            let freed: Vec<Value> = match data {
                InstData::ArrayFree { array } | InstData::DeferFree { array } => vec![*array],
                _ => Vec::new(),
            };
            let used: Vec<Value> = match data {
                InstData::Load { array, .. }
                | InstData::Store { array, .. }
                | InstData::ElemRef { array, .. }
                | InstData::ArrayLen { array }
                | InstData::ArrayCopy { array } => vec![*array],
                InstData::LenCheck { args, .. } => args.to_vec(),
                InstData::CopyRange { dst, src, .. } => vec![*dst, *src],
                InstData::Call { args, .. } => args.clone(),
                _ => Vec::new(),
            };
            // Edge arguments, edge by edge: a member of the family may go
            // into a parameter of the family, and into nothing else. (One
            // terminator can pass the same array to a family parameter on
            // one edge and to another parameter on the other: `unswitch`'s
            // copies of a loop nest do, and a check by value let the stack
            // array reach a real `free`.)
            for call in data.successors() {
                for (p, a) in func.dfg.block_params(call.block).iter().zip(&call.args) {
                    if family.contains(a) && !family.contains(p) {
                        escaping.insert(*a);
                    }
                }
            }
            // The other operands.
            let mut operands = data.clone();
            for call in operands.successors_mut() {
                call.args.clear();
            }
            operands.for_each_arg(|a| {
                if !family.contains(&a) || freed.contains(&a) {
                    return;
                }
                // A `new` may be read; a parameter only freed and passed
                // on, or read when no array made on a cycle reaches it.
                let readable = candidates.contains_key(&a) || !renewed.contains(&a);
                if !(readable && used.contains(&a)) {
                    escaping.insert(a);
                }
            });
        }
    }
    // Past the frame budget, arrays stay on the heap.
    let mut total = 0;
    for (v, n) in &candidates {
        if escaping.contains(v) {
            continue;
        }
        let bytes = n.max(&1) * i64::from(func.dfg.value_type(*v).elem().size());
        if total + bytes > MAX_FRAME_BYTES {
            escaping.insert(*v);
        } else {
            total += bytes;
        }
    }
    // One member on the heap sends its whole family there.
    loop {
        let before = escaping.len();
        for (p, args) in &incoming {
            if !family.contains(p) {
                continue;
            }
            let members: Vec<Value> = args
                .iter()
                .copied()
                .filter(|a| family.contains(a))
                .collect();
            if escaping.contains(p) || members.iter().any(|a| escaping.contains(a)) {
                escaping.insert(*p);
                escaping.extend(members);
            }
        }
        if escaping.len() == before {
            break;
        }
    }
    let stack = candidates
        .into_iter()
        .filter(|(v, _)| !escaping.contains(v))
        .collect();
    let quiet = family
        .into_iter()
        .filter(|v| !escaping.contains(v))
        .collect();
    (stack, quiet)
}

fn const_int(func: &Function, v: Value) -> Option<i64> {
    match func.dfg.value_def(v) {
        ValueDef::Result(i, _) => match func.dfg.inst(i) {
            InstData::Const {
                value: adc_ir::Constant::I64(n),
            } => Some(*n),
            _ => None,
        },
        _ => None,
    }
}
