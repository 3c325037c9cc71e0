//! Common-subexpression elimination over the dominator tree: a pure
//! instruction identical to one whose block dominates it (and that comes
//! first when in the same block) is replaced by the earlier result;
//! `add a, b` and `mul a, b` are identical to `add b, a` and `mul b, a`.
//! Loads of arrays the function only reads (`read_only`), checked or not,
//! and views of them stand for their dominating twin in the keys of other
//! instructions (it read the same element), but stay: an instruction using
//! one is replaced when its twin computes the same from the earlier load
//! (the second copy of a computation), and a load merely repeated keeps its
//! own (a value loaded again after a call is cheaper than one kept across it
//! in the stack: plain ba's objective reloads `rot` after `sin` and `cos`).
//!
//! A depth-first walk of the dominator tree keeps the instructions of the
//! blocks on the current path in scope (a scoped table, popped when the
//! walk leaves a block), so each instruction is looked up once: linear in
//! the size of the function however deep the tree.
//!
//! Assumes: verified input. Guarantees: verified output.

use crate::rewrite::substitute;
use adc_ir::dom::dominators;
use adc_ir::{BinaryOp, Block, Constant, Function, InstData, Type, Value};
use rustc_hash::FxHashMap as HashMap;
use std::collections::BTreeMap;
use std::hash::{Hash, Hasher};

/// An instruction with its operands renamed, and its result type: two
/// equal keys compute the same value. Constants are equal when their bits
/// are (`0.0` is not `-0.0`; a NaN is itself), everything else by
/// `InstData`'s own equality; the hash covers the kind of instruction and
/// the operands.
struct Key {
    ty: Type,
    data: InstData,
}

impl PartialEq for Key {
    fn eq(&self, other: &Key) -> bool {
        self.ty == other.ty
            && match (&self.data, &other.data) {
                (InstData::Const { value: a }, InstData::Const { value: b }) => bits(a) == bits(b),
                (a, b) => a == b,
            }
    }
}

impl Eq for Key {}

impl Hash for Key {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.ty.hash(state);
        std::mem::discriminant(&self.data).hash(state);
        match &self.data {
            InstData::Const { value } => bits(value).hash(state),
            data => data.for_each_arg(|v| v.hash(state)),
        }
    }
}

/// A constant's kind and bits.
fn bits(c: &Constant) -> (u8, u64) {
    match *c {
        Constant::Bool(b) => (0, u64::from(b)),
        Constant::I64(i) => (1, i as u64),
        Constant::F32(x) => (2, u64::from(x.to_bits())),
        Constant::F64(x) => (3, x.to_bits()),
    }
}

pub fn run(func: &mut Function) -> bool {
    let (rpo, idom) = dominators(func);
    let Some(&entry) = rpo.first() else {
        return false;
    };
    let mut children: Vec<Vec<Block>> = vec![Vec::new(); func.dfg.num_blocks()];
    for &b in rpo.iter().skip(1) {
        if let Some(d) = idom[b.index()] {
            children[d.index()].push(b);
        }
    }
    // Key -> the value in scope (at most one: of two identical instructions
    // on one dominator-tree path, the later is replaced by the earlier).
    let mut scope: HashMap<Key, Value> = HashMap::default();
    let mut map: BTreeMap<Value, Value> = BTreeMap::new();
    // A read-only load or view -> its dominating twin, for keys only.
    let mut same: HashMap<Value, Value> = HashMap::default();
    // (block, entering?); on leaving, the keys the block put in scope go.
    let read_only = crate::read_only::ReadOnly::new(func);
    let mut stack = vec![(entry, true)];
    let mut added: Vec<Vec<Key>> = Vec::new();
    added.resize_with(func.dfg.num_blocks(), Vec::new);
    while let Some((b, enter)) = stack.pop() {
        if !enter {
            for key in std::mem::take(&mut added[b.index()]) {
                scope.remove(&key);
            }
            continue;
        }
        stack.push((b, false));
        for &c in children[b.index()].iter().rev() {
            stack.push((c, true));
        }
        for &inst in &func.dfg.block(b).insts {
            let original = func.dfg.inst(inst);
            if !original.is_pure()
                && !crate::predicates::is_float_div(func, inst)
                && !read_only.reads(func, original)
            {
                continue;
            }
            let mut data = original.clone();
            data.map_args(|v| {
                let v = *map.get(&v).unwrap_or(&v);
                *same.get(&v).unwrap_or(&v)
            });
            let keyed_only = read_only.reads(func, &data);
            // `add` and `mul` commute (on floats too, bit for bit but for
            // a NaN's payload): one key for both orders.
            if let InstData::Binary {
                op: BinaryOp::Add | BinaryOp::Mul,
                args,
            } = &mut data
            {
                args.sort();
            }
            let result = func.dfg.inst_results(inst)[0];
            let key = Key {
                ty: func.dfg.value_type(result),
                data,
            };
            match scope.get(&key) {
                Some(v) if keyed_only => {
                    same.insert(result, *v);
                }
                Some(v) => {
                    map.insert(result, *v);
                }
                // The entry block's keys are never taken out of scope: leaving
                // it ends the walk (a function of one long block once cloned
                // and then removed every key).
                None if b == entry => {
                    scope.insert(key, result);
                }
                None => {
                    let again = Key {
                        ty: key.ty,
                        data: key.data.clone(),
                    };
                    scope.insert(key, result);
                    added[b.index()].push(again);
                }
            }
        }
    }
    let changed = !map.is_empty();
    substitute(func, &map);
    changed
}
