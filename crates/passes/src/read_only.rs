//! Arrays a function only reads: parameters of the function (which share
//! no element with another parameter, docs/arrays.md#the-aliasing-rule)
//! whose every use, through any chain of `view`s, is a `load`, a `view`,
//! a `len` or a `lencheck`. Their elements hold the same values for the
//! whole call, so a load of one is a function of its operands (`cse`,
//! `diamond-cse`). Passing one to a call or along an edge counts as a write.
//!
//! Reads only.

use adc_ir::{Function, InstData, Type, Value, ValueDef};
use std::collections::BTreeSet;

/// The function's read-only array parameters and every view of them.
pub(crate) struct ReadOnly {
    roots: BTreeSet<Value>,
}

impl ReadOnly {
    pub(crate) fn new(func: &Function) -> ReadOnly {
        let mut written: BTreeSet<Value> = BTreeSet::new();
        for &b in &func.layout {
            for &i in &func.dfg.block(b).insts {
                let data = func.dfg.inst(i);
                let reads_only = |v: Value| match data {
                    InstData::Load { array, .. } => *array == v,
                    InstData::ArrayView { array, .. } => *array == v,
                    InstData::ArrayLen { .. } | InstData::LenCheck { .. } => true,
                    _ => false,
                };
                data.for_each_arg(|v| {
                    if matches!(func.dfg.value_type(v), Type::Array(_)) && !reads_only(v) {
                        written.insert(root(func, v));
                    }
                });
            }
        }
        let roots = match func.entry_block() {
            Some(entry) => func
                .dfg
                .block_params(entry)
                .iter()
                .copied()
                .filter(|p| {
                    matches!(func.dfg.value_type(*p), Type::Array(_)) && !written.contains(p)
                })
                .collect(),
            None => BTreeSet::new(),
        };
        ReadOnly { roots }
    }

    /// Whether `array` is a read-only parameter or a view of one.
    pub(crate) fn contains(&self, func: &Function, array: Value) -> bool {
        self.roots.contains(&root(func, array))
    }

    /// Whether `data` reads a read-only array (`load`) or makes a view of one:
    /// equal such instructions give equal results.
    pub(crate) fn reads(&self, func: &Function, data: &InstData) -> bool {
        match data {
            InstData::Load { array, .. } | InstData::ArrayView { array, .. } => {
                self.contains(func, *array)
            }
            _ => false,
        }
    }
}

/// The array `v` is a view of (through any chain), or `v`.
fn root(func: &Function, mut v: Value) -> Value {
    while let ValueDef::Result(i, _) = func.dfg.value_def(v) {
        match func.dfg.inst(i) {
            InstData::ArrayView { array, .. } => v = *array,
            _ => break,
        }
    }
    v
}
