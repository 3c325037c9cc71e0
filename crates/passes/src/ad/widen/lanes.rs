//! `widen`'s fallback for a forward request it cannot carry in lanes
//! (arrays on a tape, a custom derivative that writes through its
//! parameters): the width-1 derivative, kept as a function of its own
//! (`__adc_lanes_NAME`), called once per direction. The results equal the
//! lanes' to the bit, at the cost of `W` primal runs. The primal writes
//! happen once: every call but the last gets copies of the `inout`
//! arguments.

use crate::ad::AdError;
use adc_ir::ad::{forward_param_layout, linearized_activities, spec_signature};
use adc_ir::{
    Activity, BinaryOp, Block, Constant, DerivSpec, FuncId, Function, InstData, Linkage, Module,
    ParamMode, Span, Type, Value,
};

/// `id` (`lower-pairs`' output for the forward `spec`, vector mode) as
/// `W` calls of its width-1 body, which becomes a new function.
pub(super) fn lanes(module: &mut Module, id: FuncId, spec: &DerivSpec) -> Result<(), AdError> {
    let old = module.func(id);
    let span = old.deriv_span;
    let src_id = module
        .find(&spec.of)
        .ok_or_else(|| AdError::internal(format!("internal error: no `{}`", spec.of), span))?;
    let src = module.func(src_id).clone();
    let mut one = old.clone();
    one.name = format!("__adc_lanes_{}", old.name);
    one.linkage = Linkage::Static;
    one.deriv = None;
    let (params, returns) = spec_signature(&src, spec);
    let mut out = Function::new(old.name.clone(), params, returns, old.linkage);
    out.deriv_span = span;
    out.decl_span = old.decl_span;
    let callee = module.push(one);
    let b = out.dfg.make_block();
    out.layout.push(b);
    let mut e = Emit {
        out,
        b,
        span,
        width: spec.width as usize,
    };
    let param_types: Vec<Type> = e.out.params.iter().map(|p| p.ty).collect();
    let new_params: Vec<Value> = param_types
        .into_iter()
        .map(|ty| e.out.dfg.append_block_param(b, ty))
        .collect();
    let (acts, _) = linearized_activities(spec);
    let layout = forward_param_layout(&src, &acts);
    let old_types: Vec<Type> = module.func(id).params.iter().map(|p| p.ty).collect();
    // Per parameter of the width-1 derivative: the argument of each lane.
    let mut args: Vec<Vec<Value>> = Vec::new();
    for (k, (i, is_tan)) in layout.iter().enumerate() {
        let np = new_params[k];
        let p = &src.params[*i];
        if !is_tan {
            let inout = p.mode == ParamMode::Inout;
            args.push(
                (0..e.width)
                    .map(|l| {
                        let last = l + 1 == e.width;
                        if inout && !last {
                            e.copy_of(np)
                        } else {
                            np
                        }
                    })
                    .collect(),
            );
            continue;
        }
        let primal = layout[..k]
            .iter()
            .rposition(|(j, t)| j == i && !t)
            .map(|at| new_params[at])
            .ok_or_else(|| {
                AdError::internal("internal error: `widen`: a tangent before its primal", span)
            })?;
        args.push(e.tangent_lanes(np, primal, old_types[k])?);
    }
    let t_ret = new_params[layout.len()..].to_vec();
    for &p in &t_ret {
        let wc = e.iconst(e.width as i64);
        e.emit(
            InstData::LenCheck {
                args: [wc, p],
                what: adc_ir::LenCheckOf::Shadow,
            },
            &[],
        );
    }
    let n_src = src.returns.len();
    let mut primal = Vec::new();
    for l in 0..e.width {
        let lane_args: Vec<Value> = args.iter().map(|a| a[l]).collect();
        let types = module.func(callee).returns.clone();
        let r = e.emit(
            InstData::Call {
                func: callee,
                args: lane_args,
            },
            &types,
        );
        let tangents = match spec.ret {
            Activity::Const => {
                primal = r;
                continue;
            }
            Activity::DualOnly | Activity::ActiveOnly => r,
            _ => {
                primal = r[..n_src].to_vec();
                r[n_src..].to_vec()
            }
        };
        for (t, &arr) in tangents.iter().zip(&t_ret) {
            let index = e.iconst(l as i64);
            e.emit(
                InstData::Store {
                    array: arr,
                    index,
                    value: *t,
                    checked: false,
                },
                &[],
            );
        }
    }
    e.emit(InstData::Return { args: primal }, &[]);
    *module.func_mut(id) = e.out;
    Ok(())
}

struct Emit {
    out: Function,
    b: Block,
    span: Span,
    width: usize,
}

impl Emit {
    fn emit(&mut self, data: InstData, types: &[Type]) -> Vec<Value> {
        let inst = self.out.append_inst(self.b, data, types, self.span);
        self.out.dfg.inst_results(inst).to_vec()
    }

    fn emit1(&mut self, data: InstData, ty: Type) -> Value {
        self.emit(data, &[ty])[0]
    }

    fn iconst(&mut self, k: i64) -> Value {
        self.emit1(
            InstData::Const {
                value: Constant::I64(k),
            },
            Type::I64,
        )
    }

    /// A copy of an `inout` argument, for a lane whose writes are dropped.
    fn copy_of(&mut self, v: Value) -> Value {
        match self.out.dfg.value_type(v) {
            Type::Array(_) => {
                self.emit1(InstData::ArrayCopy { array: v }, self.out.dfg.value_type(v))
            }
            ty @ Type::Ref(e) => {
                let x = self.emit1(InstData::RefLoad { ptr: v }, Type::Scalar(e));
                let slot = self.emit1(InstData::Slot, ty);
                self.emit(
                    InstData::RefStore {
                        ptr: slot,
                        value: x,
                    },
                    &[],
                );
                slot
            }
            _ => v,
        }
    }

    /// The `W` lanes of the tangent parameter `np` (of the primal
    /// `primal`), whose width-1 twin has type `ty`: views of an array's,
    /// loads of a scalar's, element references of a reference's.
    fn tangent_lanes(&mut self, np: Value, primal: Value, ty: Type) -> Result<Vec<Value>, AdError> {
        let w = self.width as i64;
        match ty {
            Type::Array(_) => {
                let n = self.emit1(InstData::ArrayLen { array: primal }, Type::I64);
                let wc = self.iconst(w);
                let wn = self.emit1(
                    InstData::Binary {
                        op: BinaryOp::Mul,
                        args: [n, wc],
                    },
                    Type::I64,
                );
                self.emit(
                    InstData::LenCheck {
                        args: [wn, np],
                        what: adc_ir::LenCheckOf::Shadow,
                    },
                    &[],
                );
                let mut lanes = Vec::new();
                let mut lo = self.iconst(0);
                for _ in 0..self.width {
                    let hi = self.emit1(
                        InstData::Binary {
                            op: BinaryOp::Add,
                            args: [lo, n],
                        },
                        Type::I64,
                    );
                    lanes.push(self.emit1(InstData::ArrayView { array: np, lo, hi }, ty));
                    lo = hi;
                }
                Ok(lanes)
            }
            Type::Scalar(_) | Type::Ref(_) => {
                let wc = self.iconst(w);
                self.emit(
                    InstData::LenCheck {
                        args: [wc, np],
                        what: adc_ir::LenCheckOf::Shadow,
                    },
                    &[],
                );
                let mut lanes = Vec::new();
                for l in 0..self.width {
                    let index = self.iconst(l as i64);
                    lanes.push(match ty {
                        Type::Ref(_) => self.emit1(InstData::ElemRef { array: np, index }, ty),
                        _ => self.emit1(
                            InstData::Load {
                                array: np,
                                index,
                                checked: false,
                            },
                            ty,
                        ),
                    });
                }
                Ok(lanes)
            }
            Type::Pair(_) => Err(AdError::internal(
                "internal error: `widen`: a dpair after lower-pairs",
                self.span,
            )),
        }
    }
}

/// `id` (a reverse request of vector mode, still in forward form) as
/// `W` calls of a width-1 reverse derivative: its forward form, kept as a
/// request of its own (`__adc_lanes_NAME`) that `unzip` and `transpose`
/// turn around. Returns that request.
pub(super) fn reverse_lanes(
    module: &mut Module,
    id: FuncId,
    spec: &DerivSpec,
) -> Result<FuncId, AdError> {
    let old = module.func(id);
    let span = old.deriv_span;
    let src_id = module
        .find(&spec.of)
        .ok_or_else(|| AdError::internal(format!("internal error: no `{}`", spec.of), span))?;
    let src = module.func(src_id).clone();
    let one_spec = DerivSpec {
        width: 1,
        vector: false,
        ..spec.clone()
    };
    let mut one = old.clone();
    one.name = format!("__adc_lanes_{}", old.name);
    one.linkage = Linkage::Static;
    one.deriv = Some(one_spec.clone());
    let (one_params, one_returns) = spec_signature(&src, &one_spec);
    let (params, returns) = spec_signature(&src, spec);
    let mut out = Function::new(old.name.clone(), params, returns, old.linkage);
    out.deriv_span = span;
    out.decl_span = old.decl_span;
    let callee = module.push(one);
    let b = out.dfg.make_block();
    out.layout.push(b);
    let mut e = Emit {
        out,
        b,
        span,
        width: spec.width as usize,
    };
    let param_types: Vec<Type> = e.out.params.iter().map(|p| p.ty).collect();
    let new_params: Vec<Value> = param_types
        .into_iter()
        .map(|ty| e.out.dfg.append_block_param(b, ty))
        .collect();
    let mut next = new_params.iter().copied();
    let mut bad = || AdError::internal("internal error: `widen`: a signature too short", span);
    let mut args: Vec<Vec<Value>> = Vec::new();
    // `out T[] d_x` of each `Active` parameter, in order.
    let mut grads = Vec::new();
    let mut k = 0;
    for (p, a) in src.params.iter().zip(&spec.params) {
        let np = next.next().ok_or_else(&mut bad)?;
        k += 1;
        let inout = p.mode == ParamMode::Inout;
        args.push(
            (0..e.width)
                .map(|l| {
                    if inout && l + 1 < e.width {
                        e.copy_of(np)
                    } else {
                        np
                    }
                })
                .collect(),
        );
        match a {
            Activity::Active => {
                let d = next.next().ok_or_else(&mut bad)?;
                let wc = e.iconst(e.width as i64);
                e.emit(
                    InstData::LenCheck {
                        args: [wc, d],
                        what: adc_ir::LenCheckOf::Shadow,
                    },
                    &[],
                );
                grads.push(d);
            }
            Activity::Duplicated | Activity::DuplicatedOnly => {
                let d = next.next().ok_or_else(&mut bad)?;
                let ty = one_params.get(k).map(|q| q.ty).ok_or_else(&mut bad)?;
                k += 1;
                args.push(e.tangent_lanes(d, np, ty)?);
            }
            _ => (),
        }
    }
    let seeds: Vec<Value> = next.collect();
    for &s in &seeds {
        let ty = one_params.get(k).map(|q| q.ty).ok_or_else(&mut bad)?;
        k += 1;
        args.push(e.tangent_lanes(s, s, ty)?);
    }
    let n_primal = if spec.ret == Activity::ActiveOnly {
        0
    } else {
        src.returns.len()
    };
    let mut primal = Vec::new();
    for l in 0..e.width {
        let lane_args: Vec<Value> = args.iter().map(|a| a[l]).collect();
        let r = e.emit(
            InstData::Call {
                func: callee,
                args: lane_args,
            },
            &one_returns,
        );
        primal = r[..n_primal].to_vec();
        for (g, &d) in r[n_primal..].iter().zip(&grads) {
            let index = e.iconst(l as i64);
            e.emit(
                InstData::Store {
                    array: d,
                    index,
                    value: *g,
                    checked: false,
                },
                &[],
            );
        }
    }
    e.emit(InstData::Return { args: primal }, &[]);
    *module.func_mut(id) = e.out;
    Ok(callee)
}
