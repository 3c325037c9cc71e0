//! `unzip`'s split of a derivative call: the primal call, after copies of
//! what the callee may change (not of a local array a `[checkpoint]` callee
//! only uses as scratch: `scratch.rs`).

use super::Unzipper;
use crate::ad::{jvp_source, AdError};
use adc_ir::{Block, FuncId, Inst, InstData, ParamMode, Tag, Type, Value, ValueDef};
use std::collections::BTreeMap;

impl Unzipper<'_> {
    /// The primal half of a derivative call: copies of what the callee may
    /// change, then the call of the source function. Returns, per argument
    /// of the derivative call, the value its differential half passes
    /// (primal-part values for primal arguments).
    pub(super) fn split_call(
        &mut self,
        b: Block,
        inst: Inst,
        jvp: FuncId,
        args: &[Value],
    ) -> Result<Vec<Value>, AdError> {
        let g = self.g;
        let pb = self.pblock[&b];
        let span = g.span(inst);
        let src = jvp_source(self.module, jvp).ok_or_else(|| {
            AdError::internal(
                "internal error: a mixed call that is not a derivative call",
                span,
            )
        })?;
        let callee = self.module.func(src);
        let split = self.split_of.get(&jvp).copied();
        let mut primal_args = Vec::new();
        // Split mode: the augmented forward half takes the shadows too.
        let mut aug_args = Vec::new();
        let mut snaps = Vec::new();
        let scratch = self.scratch_args(src, args);
        let mut k = 0;
        for (n, p) in callee.params.iter().enumerate() {
            let a = args[k];
            let pa = self.p(a);
            primal_args.push(pa);
            aug_args.push(pa);
            // The reverse half of a split call reads no writable array.
            let kept = split.is_some() && p.mode != ParamMode::In;
            let snap = match (p.ty, p.mode) {
                // The array itself, which lives until the derivative
                // returns (its `free` deferred).
                (Type::Array(_), _) if scratch[n] => {
                    self.reread.insert(pa);
                    pa
                }
                (Type::Array(_), _) if !self.read_only(a) && !kept => self.emit(
                    pb,
                    InstData::ArrayCopy { array: pa },
                    &[p.ty],
                    Tag::Primal,
                    span,
                )[0],
                (Type::Ref(e), _) => self.emit(
                    pb,
                    InstData::RefLoad { ptr: pa },
                    &[Type::Scalar(e)],
                    Tag::Primal,
                    span,
                )[0],
                _ => pa,
            };
            snaps.push(snap);
            k += 1;
            if adc_ir::ad::is_differentiable(p.ty) {
                let t = args[k];
                snaps.push(if self.kinds[t.index()] { t } else { self.p(t) });
                if !matches!(p.ty, Type::Scalar(_)) {
                    aug_args.push(self.p(t));
                }
                k += 1;
            }
        }
        let returns = callee.returns.clone();
        let vals = match split {
            Some(parts) => {
                // The forward half works on this function's tape.
                let tape = self.emit(pb, InstData::TapeLend, &[Type::I64], Tag::Primal, span)[0];
                aug_args.push(tape);
                let call = InstData::Call {
                    func: parts.aug,
                    args: aug_args,
                };
                let vals = self.emit(pb, call, &returns, Tag::Primal, span);
                self.emit(
                    pb,
                    InstData::TapeReclaim { handle: tape },
                    &[],
                    Tag::Primal,
                    span,
                );
                self.split_calls.insert(inst, parts.lin);
                vals
            }
            None => {
                let call = InstData::Call {
                    func: src,
                    args: primal_args,
                };
                self.emit(pb, call, &returns, Tag::Primal, span)
            }
        };
        for (r, v) in g.dfg.inst_results(inst).iter().zip(vals) {
            self.pmap[r.index()] = Some(v);
            self.def_block.insert(v, b);
        }
        Ok(snaps)
    }

    /// Per parameter of the callee `src` of a derivative call with `args`
    /// (primal arguments and shadows interleaved): whether the argument is
    /// given to the callee's derivative in the reverse sweep as it is, not
    /// as a snapshot. So for a scratch parameter of a `[checkpoint]` callee
    /// (it reads no element it has not written in the same call, so what
    /// the array holds when the reverse sweep runs it again does not
    /// matter) whose argument is a local array of `frozen_locals` (made
    /// once per call, so it lives until the derivative returns, and the
    /// differential part reads it again only where no write can follow,
    /// before the reverse sweep reaches the call) that no other argument
    /// views.
    fn scratch_args(&self, src: FuncId, args: &[Value]) -> Vec<bool> {
        let g = self.g;
        let callee = self.module.func(src);
        let mut primal = Vec::new();
        let mut k = 0;
        for p in &callee.params {
            primal.push(args[k]);
            k += 1 + usize::from(adc_ir::ad::is_differentiable(p.ty));
        }
        if !callee.checkpoint || callee.custom_reverse.is_some() || callee.layout.is_empty() {
            return vec![false; primal.len()];
        }
        // An integer argument that is the length of an array argument.
        let mut lens = BTreeMap::new();
        for (k, &a) in primal.iter().enumerate() {
            if let Some(InstData::ArrayLen { array }) = crate::defs::def_data(g, a) {
                if let Some(m) = primal.iter().position(|x| x == array) {
                    lens.insert(k, m);
                }
            }
        }
        let params = crate::ad::scratch::scratch_params(callee, &lens);
        let arrays: Vec<Value> = primal
            .iter()
            .filter(|a| matches!(g.dfg.value_type(**a), Type::Array(_)))
            .map(|a| g.array_root(*a))
            .collect();
        params
            .iter()
            .zip(&primal)
            .map(|(&s, &a)| {
                s && g.array_root(a) == a
                    && self.frozen_locals.contains_key(&a)
                    && arrays.iter().filter(|r| **r == a).count() == 1
            })
            .collect()
    }

    /// A read-only array parameter of the function: nobody writes it.
    pub(super) fn read_only(&self, a: Value) -> bool {
        let g = self.g;
        match g.dfg.value_def(g.array_root(a)) {
            ValueDef::Param(b, i) if b == g.layout[0] => g.params[i as usize].mode == ParamMode::In,
            _ => false,
        }
    }
}
