//! Instructions on memory (arrays, references, slots, copies) and on the
//! tapes of the derivative code.

use super::{get, level, scalar, InterpError, Machine, Val};
use crate::entity::Value;
use crate::function::Function;
use crate::inst::{Constant, InstData, LenCheckOf};
use crate::types::ScalarType;

/// The runtime error of a reference to a stack slot used after the call
/// that made it returned (compiled code would use a dead frame).
const DEAD_SLOT: &str = "a reference to a stack slot of a call that has returned";

impl Machine<'_> {
    pub(super) fn memory_inst(
        &mut self,
        func: &Function,
        inst: crate::entity::Inst,
        env: &[Option<Val>],
    ) -> Result<Option<Val>, InterpError> {
        let span = func.span(inst);
        let fail = |what: &'static str| {
            Err(InterpError::Runtime {
                what: what.into(),
                span,
            })
        };
        let results = func.dfg.inst_results(inst);
        let result_ty = results.first().map(|r| func.dfg.value_type(*r));
        Ok(match func.dfg.inst(inst) {
            InstData::ArrayLen { array } => match get(&env, *array) {
                Val::Arr(_, _, len) => Some(Val::S(Constant::I64(len as i64))),
                _ => None,
            },
            InstData::Load { array, index, .. } | InstData::ElemRef { array, index } => {
                let Some((id, i)) = self.element(get(&env, *array), scalar(&env, *index)) else {
                    return fail("index out of bounds");
                };
                match func.dfg.inst(inst) {
                    InstData::Load { .. } => Some(Val::S(self.memory[id][i])),
                    _ => Some(Val::Ref(id, i)),
                }
            }
            InstData::Store {
                array,
                index,
                value,
                ..
            } => {
                let Some((id, i)) = self.element(get(&env, *array), scalar(&env, *index)) else {
                    return fail("index out of bounds");
                };
                self.memory[id][i] = scalar(&env, *value);
                None
            }
            InstData::ArrayNew { len, .. } => {
                let Constant::I64(n) = scalar(&env, *len) else {
                    return fail("bad length");
                };
                if n < 0 {
                    return fail("negative array length");
                }
                let elem = result_ty.map(|t| t.elem()).unwrap_or(ScalarType::F64);
                if n > 1 << 32 {
                    return fail("out of memory");
                }
                self.memory.push(vec![Constant::zero(elem); n as usize]);
                Some(Val::Arr(self.memory.len() - 1, 0, n as usize))
            }
            InstData::ArrayFree { .. } => None,
            InstData::ArrayNull => {
                self.memory.push(Vec::new());
                Some(Val::Arr(self.memory.len() - 1, 0, 0))
            }
            // A slot of a frame that has returned is empty (`run`).
            InstData::RefLoad { ptr } => match get(&env, *ptr) {
                Val::Ref(id, i) => match self.memory[id].get(i) {
                    Some(c) => Some(Val::S(*c)),
                    None => return fail(DEAD_SLOT),
                },
                _ => None,
            },
            InstData::RefStore { ptr, value } => {
                if let Val::Ref(id, i) = get(&env, *ptr) {
                    let Some(cell) = self.memory[id].get_mut(i) else {
                        return fail(DEAD_SLOT);
                    };
                    *cell = scalar(&env, *value);
                }
                None
            }
            // One cell per slot instruction and call, zeroed each time
            // the instruction executes, as in compiled code's frame.
            InstData::Slot => {
                let elem = result_ty.map(|t| t.elem()).unwrap_or(ScalarType::F64);
                let frame = self
                    .frames
                    .last_mut()
                    .expect("invariant: `run` pushes the frame of the call it runs");
                let id = match frame.iter().find(|(i, _)| *i == inst) {
                    Some((_, id)) => *id,
                    None => {
                        self.memory.push(Vec::new());
                        frame.push((inst, self.memory.len() - 1));
                        self.memory.len() - 1
                    }
                };
                self.memory[id] = vec![Constant::zero(elem)];
                Some(Val::Ref(id, 0))
            }
            InstData::Print { .. }
            | InstData::DeferFree { .. }
            | InstData::LoopCheckpoint { .. } => None,
            InstData::ArrayCopy { array } => match get(&env, *array) {
                Val::Arr(id, off, len) => {
                    self.memory.push(self.memory[id][off..off + len].to_vec());
                    Some(Val::Arr(self.memory.len() - 1, 0, len))
                }
                _ => None,
            },
            InstData::ArrayView { array, lo, hi } => {
                match (get(&env, *array), scalar(&env, *lo), scalar(&env, *hi)) {
                    (Val::Arr(id, off, len), Constant::I64(lo), Constant::I64(hi))
                        if 0 <= lo && lo <= hi && hi as usize <= len =>
                    {
                        Some(Val::Arr(id, off + lo as usize, (hi - lo) as usize))
                    }
                    _ => return fail("array view out of bounds"),
                }
            }
            InstData::AliasCheck { args } => match (get(&env, args[0]), get(&env, args[1])) {
                (Val::Arr(a, a0, an), Val::Arr(b, b0, bn))
                    if a == b && an > 0 && bn > 0 && a0 < b0 + bn && b0 < a0 + an =>
                {
                    return fail("arguments alias")
                }
                _ => None,
            },
            InstData::LenCheck { args, what } => match (get(&env, args[0]), get(&env, args[1])) {
                (Val::S(Constant::I64(i)), Val::Arr(_, _, n)) if *what == LenCheckOf::Index => {
                    if i < 0 || i >= n as i64 {
                        return fail(what.message());
                    }
                    None
                }
                (Val::S(Constant::I64(n)), Val::Arr(_, _, b)) => {
                    let (b, at_least) = (b as i64, what.at_least());
                    if (at_least && b < n) || (!at_least && b != n) {
                        let what = what.message_with(n, b).into();
                        return Err(InterpError::Runtime { what, span });
                    }
                    None
                }
                (Val::Arr(_, _, a), Val::Arr(_, _, b)) if a != b => return fail(what.message()),
                _ => None,
            },
            InstData::CopyRange {
                dst,
                dst_index,
                src,
                src_index,
                count,
            } => {
                let int = |v: Value| match scalar(&env, v) {
                    Constant::I64(x) => x,
                    _ => 0,
                };
                let (Val::Arr(d, doff, dlen), Val::Arr(s, soff, slen)) =
                    (get(&env, *dst), get(&env, *src))
                else {
                    return fail("copyrange of non-arrays");
                };
                let (di, si, n) = (int(*dst_index), int(*src_index), int(*count));
                if n > 0 {
                    let in_bounds = |start: i64, len: usize| {
                        start >= 0 && start.checked_add(n).is_some_and(|e| e <= len as i64)
                    };
                    if !in_bounds(di, dlen) || !in_bounds(si, slen) {
                        return fail("index out of bounds");
                    }
                    let (di, si, n) = (doff + di as usize, soff + si as usize, n as usize);
                    let part = self.memory[s][si..si + n].to_vec();
                    self.memory[d][di..di + n].copy_from_slice(&part);
                }
                None
            }
            _ => unreachable!("invariant: `run` passes memory instructions only"),
        })
    }

    /// Tape pushes, pops and reads, and a tape lent, reclaimed, adopted or
    /// given back between the two halves of split mode.
    pub(super) fn tape_inst(
        &mut self,
        func: &Function,
        inst: crate::entity::Inst,
        env: &[Option<Val>],
        tapes: &mut Vec<(Vec<Val>, usize)>,
    ) -> Result<Option<Val>, InterpError> {
        Ok(match func.dfg.inst(inst) {
            InstData::TapePush { value, tape } => {
                let v = get(&env, *value);
                level(tapes, *tape).0.push(v);
                None
            }
            InstData::TapePop { tape } => match level(tapes, *tape).0.pop() {
                Some(v) => Some(v),
                None => return Err(InterpError::Unsupported("pop of an empty tape".into())),
            },
            InstData::TapeLend => {
                self.saved_tapes.push(Some(std::mem::take(tapes)));
                Some(Val::S(Constant::I64(self.saved_tapes.len() as i64 - 1)))
            }
            InstData::TapeReclaim { handle } | InstData::TapeAdopt { handle } => {
                let lent = match scalar(&env, *handle) {
                    Constant::I64(h) => self.saved_tapes.get_mut(h as usize).and_then(Option::take),
                    _ => None,
                };
                match lent {
                    Some(t) => *tapes = t,
                    None => {
                        return Err(InterpError::Unsupported(
                            "a tape handle that holds no tape".into(),
                        ))
                    }
                }
                None
            }
            InstData::TapeGive { handle } => {
                let slot = match scalar(&env, *handle) {
                    Constant::I64(h) => self.saved_tapes.get_mut(h as usize),
                    _ => None,
                };
                match slot {
                    Some(s) if s.is_none() => *s = Some(std::mem::take(tapes)),
                    _ => {
                        return Err(InterpError::Unsupported(
                            "a tape given back to a handle that holds one".into(),
                        ))
                    }
                }
                None
            }
            InstData::TapeRead { tape } => match level(tapes, *tape) {
                (values, front) if *front < values.len() => {
                    *front += 1;
                    Some(values[*front - 1])
                }
                _ => return Err(InterpError::Unsupported("read past the tape".into())),
            },
            _ => unreachable!("invariant: `run` passes tape instructions only"),
        })
    }
}
