//! `widen`'s calls: a call of a width-1 derivative becomes one call of the
//! callee's vector-mode derivative. Each laned argument goes to the callee
//! as one array of `W` lanes (a shadow kept whole as it is; a view of one,
//! or a scalar's lanes, packed into a new array and unpacked after the
//! call), and each float result comes back in a `t_ret` array of `W`.

use super::{Lanes, Widener};
use crate::ad::widen::shadows::tangent_positions;
use crate::ad::{jvp_source, AdError};
use adc_ir::ad::spec_signature;
use adc_ir::{BinaryOp, Block, BlockCall, FuncId, InstData, ParamMode, Tag, Type, Value};

/// The arrays a call's laned arguments were packed into, unpacked after it.
#[derive(Default)]
struct Packing {
    /// (the gathered array, its lanes' length, the lanes of the view it
    /// scatters back to when the callee may write it)
    views: Vec<(Value, Value, Option<Vec<Value>>)>,
    /// (the array of a scalar's lanes, the references it is stored back
    /// through)
    scalars: Vec<(Value, Option<Vec<Value>>)>,
}

impl Widener<'_> {
    /// A call of a width-1 derivative becomes one call of the callee's
    /// vector-mode derivative.
    pub(super) fn call(
        &mut self,
        callee: FuncId,
        args: &[Value],
        results: &[Value],
    ) -> Result<(), AdError> {
        let module = self.module;
        if self.reverse {
            return Err(self.err(&format!(
                "a call of `{}` in a reverse derivative (one that is not inlined)",
                jvp_source(module, callee).map_or("?", |s| module.func(s).name.as_str())
            )));
        }
        let wide = crate::ad::widen::vector_callee(module, callee, self.width)
            .ok_or_else(|| self.internal("a callee without its vector-mode derivative"))?;
        let positions = tangent_positions(module, callee)
            .ok_or_else(|| self.internal("a derivative call without a spec"))?;
        let mut dargs = Vec::new();
        let mut packing = Packing::default();
        let callee_params = &module.func(callee).params;
        for ((&a, &tangent), p) in args.iter().zip(&positions).zip(callee_params) {
            let arg = if tangent {
                self.pack(a, p.mode != ParamMode::In, &mut packing)?
            } else {
                self.one(a)?
            };
            dargs.push(arg);
        }
        // Its final signature (it may not be widened yet).
        let c = module.func(wide);
        let (params, returns) = match (&c.deriv, c.deriv.as_ref().and_then(|s| module.find(&s.of)))
        {
            (Some(spec), Some(src)) => spec_signature(module.func(src), spec),
            _ => (c.params.clone(), c.returns.clone()),
        };
        let n_primal = returns.len();
        let float_types: Vec<Type> = results[n_primal..]
            .iter()
            .map(|r| self.old.dfg.value_type(*r))
            .collect();
        if float_types.len() != params.len().saturating_sub(dargs.len()) {
            return Err(self.internal("tangent results and `t_ret` arrays differ"));
        }
        let w = i64::from(self.width);
        let mut trets = Vec::new();
        for ty in &float_types {
            let wc = self.iconst(w);
            let tmp = self.new_zeroed(wc, Type::Array(ty.elem()));
            trets.push(tmp);
            dargs.push(tmp);
        }
        let call = InstData::Call {
            func: wide,
            args: dargs,
        };
        let vals = self.emit(call, &returns, Tag::Mixed);
        self.set(&results[..n_primal], vals);
        for ((&tmp, &ty), &r) in trets.iter().zip(&float_types).zip(&results[n_primal..]) {
            let mut lanes = Vec::new();
            for k in self.lanes() {
                let index = self.iconst(k as i64);
                lanes.push(self.load(tmp, index, ty, Tag::Diff));
            }
            self.map[r.index()] = Lanes::Wide { lanes, whole: None };
            self.emit(InstData::ArrayFree { array: tmp }, &[], Tag::Diff);
        }
        self.unpack(packing);
        Ok(())
    }

    /// The lanes of `a`, a tangent argument, as one array for the call;
    /// `writable`: the callee may write it.
    fn pack(&mut self, a: Value, writable: bool, packing: &mut Packing) -> Result<Value, AdError> {
        let w = i64::from(self.width);
        let ty = self.old.dfg.value_type(a);
        match ty {
            Type::Array(_) => {
                if let Some(whole) = self.whole_of(a) {
                    return Ok(whole);
                }
                // A part of a shadow (a view): its lanes gathered into one
                // array, and scattered back after the call.
                let lanes: Vec<Value> = self
                    .lanes()
                    .map(|k| self.lane(a, k))
                    .collect::<Result<_, _>>()?;
                let m = self.emit1(
                    InstData::ArrayLen { array: lanes[0] },
                    Type::I64,
                    Tag::Primal,
                );
                let wc = self.iconst(w);
                let wm = self.int_op(BinaryOp::Mul, m, wc);
                let tmp = self.new_zeroed(wm, ty);
                self.copy_lanes(&lanes, tmp, m, true);
                packing.views.push((tmp, m, writable.then_some(lanes)));
                Ok(tmp)
            }
            Type::Scalar(_) | Type::Ref(_) => {
                let e = ty.elem();
                let wc = self.iconst(w);
                let tmp = self.new_zeroed(wc, Type::Array(e));
                let mut refs = Vec::new();
                for k in self.lanes() {
                    let index = self.iconst(k as i64);
                    let lane = self.lane(a, k)?;
                    let value = match ty {
                        Type::Ref(_) => {
                            refs.push(lane);
                            let load = InstData::RefLoad { ptr: lane };
                            self.emit1(load, Type::Scalar(e), Tag::Diff)
                        }
                        _ => lane,
                    };
                    self.store(tmp, index, value, Tag::Diff);
                }
                let is_ref = matches!(ty, Type::Ref(_));
                packing.scalars.push((tmp, is_ref.then_some(refs)));
                Ok(tmp)
            }
            Type::Pair(_) => Err(self.internal("a dpair after lower-pairs")),
        }
    }

    /// After the call: written views scattered back, references stored
    /// back, every packed array freed.
    fn unpack(&mut self, packing: Packing) {
        for (tmp, m, lanes) in packing.views {
            if let Some(lanes) = lanes {
                self.copy_lanes(&lanes, tmp, m, false);
            }
            self.emit(InstData::ArrayFree { array: tmp }, &[], Tag::Diff);
        }
        for (tmp, refs) in packing.scalars {
            for (k, r) in refs.into_iter().flatten().enumerate() {
                let index = self.iconst(k as i64);
                let e = self.out.dfg.value_type(r).elem();
                let v = self.load(tmp, index, Type::Scalar(e), Tag::Diff);
                self.emit(InstData::RefStore { ptr: r, value: v }, &[], Tag::Diff);
            }
            self.emit(InstData::ArrayFree { array: tmp }, &[], Tag::Diff);
        }
    }

    /// A loop copying each of `lanes` (`m` elements each) into its part of
    /// `whole` (`gather`), or back; emission goes on after the loop.
    fn copy_lanes(&mut self, lanes: &[Value], whole: Value, m: Value, gather: bool) {
        let (header, body, exit) = (
            self.out.dfg.make_block(),
            self.out.dfg.make_block(),
            self.out.dfg.make_block(),
        );
        let at = self
            .out
            .layout
            .iter()
            .position(|b| *b == self.cur)
            .map_or(self.out.layout.len(), |p| p + 1);
        self.out.layout.splice(at..at, [header, body, exit]);
        let zero = self.iconst(0);
        self.jump(header, vec![zero]);
        self.cur = header;
        let j = self.out.dfg.append_block_param(header, Type::I64);
        let cmp = InstData::Cmp {
            cond: adc_ir::CmpCond::Lt,
            args: [j, m],
        };
        let more = self.emit1(cmp, Type::BOOL, Tag::Primal);
        let br = InstData::Branch {
            cond: more,
            then_dest: BlockCall {
                block: body,
                args: vec![],
            },
            else_dest: BlockCall {
                block: exit,
                args: vec![],
            },
        };
        self.emit(br, &[], Tag::Primal);
        self.cur = body;
        let ty = Type::Scalar(self.out.dfg.value_type(whole).elem());
        let mut base = zero;
        for &lane in lanes {
            let at = self.int_op(BinaryOp::Add, base, j);
            let (src, si, dst, di) = if gather {
                (lane, j, whole, at)
            } else {
                (whole, at, lane, j)
            };
            let v = self.load(src, si, ty, Tag::Diff);
            self.store(dst, di, v, Tag::Diff);
            base = self.int_op(BinaryOp::Add, base, m);
        }
        let one = self.iconst(1);
        let next = self.int_op(BinaryOp::Add, j, one);
        self.jump(header, vec![next]);
        self.cur = exit;
    }

    fn jump(&mut self, block: Block, args: Vec<Value>) {
        let jump = InstData::Jump {
            dest: BlockCall { block, args },
        };
        self.emit(jump, &[], Tag::Primal);
    }
}
