//! An instruction's operands: its values (read and rewritten) and its
//! successor blocks.

use super::{BlockCall, InstData};
use crate::entity::Value;

impl InstData {
    /// Every value operand, in textual order (branch arguments included).
    pub fn args(&self) -> Vec<Value> {
        let mut out = Vec::new();
        self.for_each_arg(|v| out.push(v));
        out
    }

    pub fn for_each_arg(&self, mut f: impl FnMut(Value)) {
        let mut copy = self.clone();
        copy.map_args(|v| {
            f(v);
            v
        });
    }

    /// Rewrites every value operand through `f`.
    pub fn map_args(&mut self, mut f: impl FnMut(Value) -> Value) {
        match self {
            InstData::Const { .. }
            | InstData::ArrayNull
            | InstData::Slot
            | InstData::LoopCheckpoint { .. }
            | InstData::TapePop { .. }
            | InstData::TapeRead { .. }
            | InstData::TapeLend => (),
            InstData::TapePush { value, .. } => *value = f(*value),
            InstData::TapeReclaim { handle }
            | InstData::TapeAdopt { handle }
            | InstData::TapeGive { handle } => *handle = f(*handle),
            InstData::Unary { arg, .. } | InstData::Convert { arg } => *arg = f(*arg),
            InstData::Binary { args, .. }
            | InstData::Cmp { args, .. }
            | InstData::LenCheck { args, .. }
            | InstData::AliasCheck { args }
            | InstData::PairMake { args } => {
                args[0] = f(args[0]);
                args[1] = f(args[1]);
            }
            InstData::Select { cond, args } => {
                *cond = f(*cond);
                args[0] = f(args[0]);
                args[1] = f(args[1]);
            }
            InstData::Math { args, .. }
            | InstData::Call { args, .. }
            | InstData::Print { args }
            | InstData::Return { args } => args.iter_mut().for_each(|a| *a = f(*a)),
            InstData::ArrayLen { array }
            | InstData::ArrayFree { array }
            | InstData::ArrayCopy { array }
            | InstData::DeferFree { array } => *array = f(*array),
            InstData::ArrayNew { len, .. } => *len = f(*len),
            InstData::ArrayView { array, lo, hi } => {
                *array = f(*array);
                *lo = f(*lo);
                *hi = f(*hi);
            }
            InstData::Load { array, index, .. } | InstData::ElemRef { array, index } => {
                *array = f(*array);
                *index = f(*index);
            }
            InstData::Store {
                array,
                index,
                value,
                ..
            } => {
                *array = f(*array);
                *index = f(*index);
                *value = f(*value);
            }
            InstData::RefLoad { ptr } => *ptr = f(*ptr),
            InstData::CopyRange {
                dst,
                dst_index,
                src,
                src_index,
                count,
            } => {
                *dst = f(*dst);
                *dst_index = f(*dst_index);
                *src = f(*src);
                *src_index = f(*src_index);
                *count = f(*count);
            }
            InstData::PairPrimal { pair } | InstData::PairDiff { pair } => *pair = f(*pair),
            InstData::RefStore { ptr, value } => {
                *ptr = f(*ptr);
                *value = f(*value);
            }
            InstData::Jump { dest } => dest.args.iter_mut().for_each(|a| *a = f(*a)),
            InstData::Branch {
                cond,
                then_dest,
                else_dest,
            } => {
                *cond = f(*cond);
                then_dest.args.iter_mut().for_each(|a| *a = f(*a));
                else_dest.args.iter_mut().for_each(|a| *a = f(*a));
            }
        }
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
