//! `linearize`'s arrays, references, slots and tapes: shadows made,
//! loaded and stored alongside their primals (`Linearizer::memory_tangent`).

use super::{Linearizer, Tan};
use crate::ad::AdError;
use adc_ir::{InstData, Tag, Type, Value};

impl Linearizer<'_> {
    /// The tangent or shadow of a memory instruction's result (after the
    /// instruction itself was copied), with the shadow's load, store or
    /// free; a float result of any other instruction gets zero.
    pub(super) fn memory_tangent(
        &mut self,
        data: &InstData,
        ty: Type,
        float_result: bool,
    ) -> Result<Tan, AdError> {
        let src = self.src;
        let t = |s: &Self, v: Value| s.tan_of(v);
        Ok(match data {
            // Shadow accesses are unchecked: the primal access just emitted
            // checks the same index against an array of the same length
            // (`lencheck` at entry; local shadows are made as long as their
            // primals), and derivative code replays primal indices only.
            InstData::Load { array, index, .. } if float_result => match t(self, *array) {
                Tan::Val(s) => {
                    let index = self.p(*index);
                    Tan::Val(self.emit1(
                        InstData::Load {
                            array: s,
                            index,
                            checked: false,
                        },
                        ty,
                        Tag::Diff,
                    ))
                }
                _ => Tan::Zero,
            },
            InstData::Store {
                array,
                index,
                value,
                ..
            } => {
                if let Some(s) = self.shadow(*array)? {
                    let vt = t(self, *value);
                    let d = self.mat(vt, src.dfg.value_type(*value));
                    let index = self.p(*index);
                    self.emit(
                        InstData::Store {
                            array: s,
                            index,
                            value: d,
                            checked: false,
                        },
                        &[],
                        Tag::Diff,
                    );
                }
                Tan::None
            }
            InstData::ArrayNew { len, .. } if adc_ir::ad::is_differentiable(ty) => {
                let len = self.p(*len);
                Tan::Val(self.prim(InstData::ArrayNew { len, zeroed: true }, ty))
            }
            InstData::ArrayNull if adc_ir::ad::is_differentiable(ty) => {
                Tan::Val(self.prim(InstData::ArrayNull, ty))
            }
            InstData::ArrayCopy { array } if adc_ir::ad::is_differentiable(ty) => {
                match self.shadow(*array)? {
                    Some(s) => Tan::Val(self.prim(InstData::ArrayCopy { array: s }, ty)),
                    None => Tan::None,
                }
            }
            // The shadow of a view is the same range of the shadow.
            InstData::ArrayView { array, lo, hi } if adc_ir::ad::is_differentiable(ty) => {
                match self.shadow(*array)? {
                    Some(s) => {
                        let (lo, hi) = (self.p(*lo), self.p(*hi));
                        let view = InstData::ArrayView { array: s, lo, hi };
                        Tan::Val(self.prim(view, ty))
                    }
                    None => Tan::None,
                }
            }
            InstData::ArrayFree { array } | InstData::DeferFree { array } => {
                if let Some(s) = self.shadow(*array)? {
                    let d = match data {
                        InstData::ArrayFree { .. } => InstData::ArrayFree { array: s },
                        _ => InstData::DeferFree { array: s },
                    };
                    self.emit(d, &[], Tag::Diff);
                }
                Tan::None
            }
            InstData::ElemRef { array, index } if adc_ir::ad::is_differentiable(ty) => {
                match self.shadow(*array)? {
                    Some(s) => {
                        let index = self.p(*index);
                        Tan::Val(self.prim(InstData::ElemRef { array: s, index }, ty))
                    }
                    None => Tan::None,
                }
            }
            InstData::RefLoad { ptr } if float_result => match self.shadow(*ptr)? {
                Some(s) => Tan::Val(self.emit1(InstData::RefLoad { ptr: s }, ty, Tag::Diff)),
                None => Tan::Zero,
            },
            InstData::RefStore { ptr, value } => {
                if let Some(s) = self.shadow(*ptr)? {
                    let vt = t(self, *value);
                    let d = self.mat(vt, src.dfg.value_type(*value));
                    self.emit(InstData::RefStore { ptr: s, value: d }, &[], Tag::Diff);
                }
                Tan::None
            }
            InstData::Slot if adc_ir::ad::is_differentiable(ty) => {
                Tan::Val(self.zero_slot(ty.elem()))
            }
            InstData::TapePush { value, tape } => {
                // Every differentiable value's tangent goes on the tape
                // after it, zero or not: its pop takes one (above).
                let vty = self.src.dfg.value_type(*value);
                let d = match (t(self, *value), vty) {
                    (Tan::Val(d), _) => Some(d),
                    (_, Type::Scalar(_)) if adc_ir::ad::is_differentiable(vty) => {
                        Some(self.mat(Tan::Zero, vty))
                    }
                    (_, Type::Array(_)) if adc_ir::ad::is_differentiable(vty) => {
                        Some(self.emit1(InstData::ArrayNull, vty, Tag::Primal))
                    }
                    _ => None,
                };
                if let Some(d) = d {
                    let push = InstData::TapePush {
                        value: d,
                        tape: *tape,
                    };
                    // An array's shadow is a pointer, hence primal.
                    let scalar = matches!(self.out.dfg.value_type(d), Type::Scalar(_));
                    self.emit(push, &[], if scalar { Tag::Diff } else { Tag::Primal });
                }
                Tan::None
            }
            _ if float_result => Tan::Zero,
            _ => Tan::None,
        })
    }
}
