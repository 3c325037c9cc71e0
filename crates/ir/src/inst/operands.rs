//! An instruction's operands: its values (read and rewritten) and its
//! successor blocks.

use super::{BlockCall, InstData};
use crate::entity::Value;

/// One walk over an instruction's value operands for `for_each_arg`
/// (`$inst: &InstData`) and `map_args` (`&mut InstData`): `$visit!(v)`
/// on each operand's reference `v`, in textual order; `$iter` is `iter`
/// or `iter_mut`.
macro_rules! operands {
    ($inst:expr, $visit:ident, $iter:ident) => {
        match $inst {
            InstData::Const { .. }
            | InstData::ArrayNull
            | InstData::Slot
            | InstData::LoopCheckpoint { .. }
            | InstData::TapePop { .. }
            | InstData::TapeRead { .. }
            | InstData::TapeLend => (),
            InstData::TapePush { value, .. } => $visit!(value),
            InstData::TapeReclaim { handle }
            | InstData::TapeAdopt { handle }
            | InstData::TapeGive { handle } => $visit!(handle),
            InstData::Unary { arg, .. } | InstData::Convert { arg } => $visit!(arg),
            InstData::Binary { args, .. }
            | InstData::Cmp { args, .. }
            | InstData::LenCheck { args, .. }
            | InstData::AliasCheck { args }
            | InstData::PairMake { args } => args.$iter().for_each(|a| $visit!(a)),
            InstData::Select { cond, args } => {
                $visit!(cond);
                args.$iter().for_each(|a| $visit!(a));
            }
            InstData::Math { args, .. }
            | InstData::Call { args, .. }
            | InstData::Print { args }
            | InstData::Return { args } => args.$iter().for_each(|a| $visit!(a)),
            InstData::ArrayLen { array }
            | InstData::ArrayFree { array }
            | InstData::ArrayCopy { array }
            | InstData::DeferFree { array } => $visit!(array),
            InstData::ArrayNew { len, .. } => $visit!(len),
            InstData::ArrayView { array, lo, hi } => {
                $visit!(array);
                $visit!(lo);
                $visit!(hi);
            }
            InstData::Load { array, index, .. } | InstData::ElemRef { array, index } => {
                $visit!(array);
                $visit!(index);
            }
            InstData::Store {
                array,
                index,
                value,
                ..
            } => {
                $visit!(array);
                $visit!(index);
                $visit!(value);
            }
            InstData::RefLoad { ptr } => $visit!(ptr),
            InstData::CopyRange {
                dst,
                dst_index,
                src,
                src_index,
                count,
            } => {
                $visit!(dst);
                $visit!(dst_index);
                $visit!(src);
                $visit!(src_index);
                $visit!(count);
            }
            InstData::PairPrimal { pair } | InstData::PairDiff { pair } => $visit!(pair),
            InstData::RefStore { ptr, value } => {
                $visit!(ptr);
                $visit!(value);
            }
            InstData::Jump { dest } => dest.args.$iter().for_each(|a| $visit!(a)),
            InstData::Branch {
                cond,
                then_dest,
                else_dest,
            } => {
                $visit!(cond);
                then_dest.args.$iter().for_each(|a| $visit!(a));
                else_dest.args.$iter().for_each(|a| $visit!(a));
            }
        }
    };
}

impl InstData {
    /// Every value operand, in textual order (branch arguments included).
    pub fn args(&self) -> Vec<Value> {
        let mut out = Vec::new();
        self.for_each_arg(|v| out.push(v));
        out
    }

    /// Calls `f` on every value operand, in the order of `args`, without
    /// copying the instruction.
    pub fn for_each_arg(&self, mut f: impl FnMut(Value)) {
        macro_rules! visit {
            ($v:expr) => {
                f(*$v)
            };
        }
        operands!(self, visit, iter);
    }

    /// Rewrites every value operand through `f`.
    pub fn map_args(&mut self, mut f: impl FnMut(Value) -> Value) {
        macro_rules! visit {
            ($v:expr) => {
                *$v = f(*$v)
            };
        }
        operands!(self, visit, iter_mut);
    }

    /// The branch targets of a terminator (empty for anything else).
    pub fn successors(&self) -> Vec<&BlockCall> {
        match self {
            InstData::Jump { dest } => vec![dest],
            InstData::Branch {
                then_dest,
                else_dest,
                ..
            } => vec![then_dest, else_dest],
            _ => Vec::new(),
        }
    }

    /// The same as `successors`, without allocating.
    pub fn successor_calls(&self) -> impl Iterator<Item = &BlockCall> {
        let (first, second) = match self {
            InstData::Jump { dest } => (Some(dest), None),
            InstData::Branch {
                then_dest,
                else_dest,
                ..
            } => (Some(then_dest), Some(else_dest)),
            _ => (None, None),
        };
        first.into_iter().chain(second)
    }

    pub fn successors_mut(&mut self) -> Vec<&mut BlockCall> {
        match self {
            InstData::Jump { dest } => vec![dest],
            InstData::Branch {
                then_dest,
                else_dest,
                ..
            } => vec![then_dest, else_dest],
            _ => Vec::new(),
        }
    }
}
