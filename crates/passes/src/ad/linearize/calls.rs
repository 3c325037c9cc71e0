//! `linearize`'s calls (to the callee's derivative, generated on demand,
//! or its custom forward derivative) and returns.

use super::{Linearizer, Tan};
use crate::ad::{derivative_of, forward_derivative_with, AdError};
use adc_ir::{Activity, AdMode, FuncId, InstData, ParamMode, Tag, Type, Value};

/// Whether calls of `c` from a derivative in `mode` get a derivative
/// specialised on their arguments' activities (see `call`).
pub(super) fn specialisable(mode: AdMode, c: &adc_ir::Function) -> bool {
    mode == AdMode::Forward && c.custom_forward.is_none() && !c.is_import()
}

impl Linearizer<'_> {
    /// A call: the primal call when nothing about it is differentiable,
    /// else the callee's derivative (results: primal, then tangents).
    pub(super) fn call(
        &mut self,
        callee: FuncId,
        args: &[Value],
        results: &[Value],
    ) -> Result<(), AdError> {
        let src = self.src;
        let c = self.module.func(callee).clone();
        let diff_args = args
            .iter()
            .any(|a| adc_ir::ad::is_differentiable(src.dfg.value_type(*a)));
        let float_rets = c.returns.iter().any(|t| t.elem().is_float());
        let set_results = |s: &mut Self, vals: &[Value]| {
            for (r, v) in results.iter().zip(vals) {
                s.vmap[r.index()] = Some(*v);
            }
        };
        let pargs: Vec<Value> = args.iter().map(|a| self.p(*a)).collect();
        let primal_call = |s: &mut Self, args: Vec<Value>| {
            let call = InstData::Call { func: callee, args };
            let vals = s.emit(call, &c.returns, Tag::Primal);
            set_results(s, &vals);
        };
        let inactive: Vec<bool> = args
            .iter()
            .zip(&c.params)
            .map(|(&a, p)| self.inactive_arg(a, p))
            .collect();
        // Forward mode specialises the callee's derivative: `Const` where
        // no tangent flows in (not for custom derivatives and externs;
        // reverse mode's `unzip` and `transpose` pair `__adc_jvp_g` with
        // `__adc_vjp_g`).
        let acts: Option<Vec<Activity>> = specialisable(self.mode, &c).then(|| {
            inactive
                .iter()
                .map(|&i| if i { Activity::Const } else { Activity::Dual })
                .collect()
        });
        // No tangent flows in, in either mode: the results' tangents are
        // zero and the call stays the primal call, which needs no
        // derivative of the callee (an extern without a custom derivative
        // called on constants is fine). (Not for a callee that is itself
        // an internal forward derivative: later passes take every call of
        // one for a derivative call.)
        let all_const =
            inactive.iter().all(|&i| i) && crate::ad::jvp_source(self.module, callee).is_none();
        if (!diff_args && !float_rets) || all_const {
            primal_call(self, pargs);
            for r in results {
                let float = src.dfg.value_type(*r).elem().is_float();
                self.set_tan(*r, if float { Tan::Zero } else { Tan::None });
            }
            return Ok(());
        }
        // Arguments of the derivative: each primal, then its tangent or
        // shadow (none for a parameter it is specialised `Const` on).
        let mut dargs = Vec::new();
        let mut temps = Vec::new();
        for (k, (&a, &pa)) in args.iter().zip(&pargs).enumerate() {
            dargs.push(pa);
            let ty = src.dfg.value_type(a);
            if !adc_ir::ad::is_differentiable(ty)
                || acts.as_ref().is_some_and(|acts| !acts[k].is_active())
            {
                continue;
            }
            let t = self.tan_of(a);
            let d = match (t, ty) {
                (Tan::Val(d), _) => d,
                (_, Type::Scalar(_)) => self.mat(t, ty),
                (_, Type::Array(_)) => {
                    let n = self.prim(InstData::ArrayLen { array: pa }, Type::I64);
                    let s = self.prim(
                        InstData::ArrayNew {
                            len: n,
                            zeroed: true,
                        },
                        ty,
                    );
                    temps.push(s);
                    s
                }
                (_, Type::Ref(e)) => self.zero_slot(e),
                // Invariant: `src` is lowered source code, which has no dpair.
                (_, Type::Pair(_)) => unreachable!("a dpair in source code"),
            };
            dargs.push(d);
        }
        let tangent_types: Vec<Type> = c
            .returns
            .iter()
            .filter(|t| t.elem().is_float())
            .copied()
            .collect();
        let use_custom = self.mode == AdMode::Forward && c.custom_forward.is_some();
        let tangents: Vec<Value> = if use_custom {
            let h = c
                .custom_forward
                .clone()
                .expect("invariant: this branch is taken only when `custom_forward` is set");
            let hid = self
                .module
                .find(&h)
                .ok_or_else(|| AdError::new(format!("cannot find `{h}`"), self.span))?;
            self.custom_forward_primal(&c, callee, pargs, results)?;
            self.emit(
                InstData::Call {
                    func: hid,
                    args: dargs,
                },
                &tangent_types,
                Tag::Diff,
            )
        } else {
            if self.mode == AdMode::Forward && c.is_import() {
                return Err(AdError::new(
                    format!("cannot differentiate through `extern {}` in forward mode: give it a `[forward_derivative(...)]`", c.name),
                    self.span,
                ));
            }
            let jvp = match acts {
                Some(acts) => forward_derivative_with(self.module, callee, acts, self.span)?,
                None => derivative_of(self.module, callee, AdMode::Forward, self.span)?,
            };
            if self.mode == AdMode::Reverse {
                derivative_of(self.module, callee, AdMode::Reverse, self.span)?;
            }
            let types: Vec<Type> = c.returns.iter().chain(&tangent_types).copied().collect();
            let vals = self.emit(
                InstData::Call {
                    func: jvp,
                    args: dargs,
                },
                &types,
                Tag::Mixed,
            );
            set_results(self, &vals[..c.returns.len()]);
            vals[c.returns.len()..].to_vec()
        };
        let mut k = 0;
        for r in results {
            if src.dfg.value_type(*r).elem().is_float() {
                self.set_tan(*r, Tan::Val(tangents[k]));
                k += 1;
            } else {
                self.set_tan(*r, Tan::None);
            }
        }
        for s in temps {
            self.emit(InstData::ArrayFree { array: s }, &[], Tag::Diff);
        }
        Ok(())
    }

    /// The primal side of a call through a custom forward derivative `H`.
    /// `H` has the generated derivative's signature, so it makes the
    /// callee's writes to `inout`/`out` parameters itself: the primal call
    /// must not make them first (`H` would see them done) and is needed
    /// only for the results, which it computes on copies of the writable
    /// arguments, made before `H` runs.
    fn custom_forward_primal(
        &mut self,
        c: &adc_ir::Function,
        callee: FuncId,
        pargs: Vec<Value>,
        results: &[Value],
    ) -> Result<(), AdError> {
        let writable: Vec<usize> = (0..c.params.len())
            .filter(|&k| c.params[k].mode != ParamMode::In)
            .collect();
        if !writable.is_empty() && c.returns.is_empty() {
            return Ok(());
        }
        let mut args = pargs;
        let mut copies = Vec::new();
        for k in writable {
            let a = args[k];
            args[k] = match self.out.dfg.value_type(a) {
                ty @ Type::Array(_) => {
                    let copy = self.prim(InstData::ArrayCopy { array: a }, ty);
                    copies.push(copy);
                    copy
                }
                Type::Ref(e) => {
                    let slot = self.prim(InstData::Slot, Type::Ref(e));
                    let v = self.prim(InstData::RefLoad { ptr: a }, Type::Scalar(e));
                    self.emit(
                        InstData::RefStore {
                            ptr: slot,
                            value: v,
                        },
                        &[],
                        Tag::Primal,
                    );
                    slot
                }
                _ => a,
            };
        }
        let vals = self.emit(
            InstData::Call { func: callee, args },
            &c.returns,
            Tag::Primal,
        );
        for (r, v) in results.iter().zip(&vals) {
            self.vmap[r.index()] = Some(*v);
        }
        for copy in copies {
            self.emit(InstData::ArrayFree { array: copy }, &[], Tag::Primal);
        }
        Ok(())
    }

    /// Whether no tangent flows into the call through `a` (an argument for
    /// `param`): it is not differentiable, or it is a scalar with a zero
    /// tangent, or an array without a shadow that the callee only reads.
    fn inactive_arg(&self, a: Value, param: &adc_ir::Param) -> bool {
        let ty = self.src.dfg.value_type(a);
        let zero = matches!(self.tan_of(a), Tan::Zero | Tan::None);
        let read_only = match ty {
            Type::Scalar(_) => true,
            Type::Array(_) => param.mode == ParamMode::In,
            _ => false,
        };
        !adc_ir::ad::is_differentiable(ty) || (zero && read_only)
    }

    pub(super) fn ret(&mut self, args: &[Value]) -> Result<(), AdError> {
        for s in self.const_shadows.clone() {
            self.emit(InstData::ArrayFree { array: s }, &[], Tag::Diff);
        }
        let mut vals = Vec::new();
        if self.ret != Activity::DualOnly {
            vals.extend(args.iter().map(|a| self.p(*a)));
        }
        if self.ret.is_active() {
            for &a in args {
                let ty = self.src.dfg.value_type(a);
                if ty.elem().is_float() {
                    let t = self.tan_of(a);
                    vals.push(self.mat(t, ty));
                }
            }
        }
        self.emit(InstData::Return { args: vals }, &[], Tag::Mixed);
        Ok(())
    }
}
