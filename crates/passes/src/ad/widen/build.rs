//! `widen`'s walk: the function rebuilt with every differential value and
//! shadow in `W` lanes.

mod call;

use super::shadows::{shadows, whole};
use crate::ad::{diff_values, jvp_source, AdError};
use adc_ir::ad::{forward_param_layout, linearized_activities, spec_signature};
use adc_ir::{
    Activity, BinaryOp, Block, BlockCall, Constant, DerivSpec, FuncId, Function, Inst, InstData,
    Module, ParamMode, Span, Tag, Type, Value,
};

/// How a value of the input stands in the output.
#[derive(Clone, Debug)]
enum Lanes {
    Unmapped,
    /// A primal value: once.
    One(Value),
    /// A differential value or shadow: one per direction; `whole`: the
    /// array of `W` times the elements the lanes view (see
    /// `shadows::whole`).
    Wide {
        lanes: Vec<Value>,
        whole: Option<Value>,
    },
}

pub(super) struct Widener<'a> {
    module: &'a Module,
    old: &'a Function,
    out: Function,
    width: u32,
    /// Differential values and shadows of `old`: they get lanes.
    laned: Vec<bool>,
    whole: Vec<bool>,
    map: Vec<Lanes>,
    bmap: Vec<Option<Block>>,
    cur: Block,
    span: Span,
    /// `t_ret` parameters: each float result's `W` tangents go there.
    t_ret: Vec<Value>,
    /// A reverse request (see `widen`).
    reverse: bool,
    ret: Activity,
    n_returns: usize,
}

/// The widened `id`, whose spec is `spec` (vector mode). A reverse
/// request stays in forward form for `unzip` and `transpose`: its spec
/// kept, the lanes of the result's tangent returned after the primal
/// results (`transpose` seeds them from the `seed` array), and the
/// gradients' arrays zeroed at entry (the loads of their lanes become
/// accumulations into them).
pub(super) fn widen(module: &Module, id: FuncId, spec: &DerivSpec) -> Result<Function, AdError> {
    let old = module.func(id);
    let src_id = module.find(&spec.of).ok_or_else(|| {
        AdError::internal(format!("internal error: no `{}`", spec.of), old.deriv_span)
    })?;
    let src = module.func(src_id);
    let diff = diff_values(module, old);
    let shadow = shadows(module, old, src, spec);
    let whole = whole(old, &shadow);
    let laned: Vec<bool> = diff.iter().zip(&shadow).map(|(d, s)| *d || *s).collect();
    let reverse = spec.mode == adc_ir::AdMode::Reverse;
    let (params, returns) = if reverse {
        let (acts, _) = linearized_activities(spec);
        let (params, mut returns) =
            adc_ir::ad::vector_forward_signature(src, &acts, Activity::Const);
        for t in src.returns.iter().filter(|t| t.elem().is_float()) {
            returns.extend(std::iter::repeat_n(*t, spec.width as usize));
        }
        (params, returns)
    } else {
        spec_signature(src, spec)
    };
    let mut out = Function::new(old.name.clone(), params, returns, old.linkage);
    if reverse {
        out.deriv = Some(spec.clone());
    }
    out.deriv_span = old.deriv_span;
    out.decl_span = old.decl_span;
    let mut w = Widener {
        module,
        old,
        out,
        width: spec.width,
        laned,
        whole,
        map: vec![Lanes::Unmapped; old.dfg.num_values()],
        bmap: vec![None; old.dfg.num_blocks()],
        cur: Block::new(0),
        span: old.deriv_span,
        t_ret: Vec::new(),
        reverse,
        ret: spec.ret,
        n_returns: src.returns.len(),
    };
    w.blocks();
    w.entry(src, spec)?;
    for b in crate::cfg::dominator_order(old) {
        w.cur = w.block(b)?;
        for &i in &old.dfg.block(b).insts {
            w.span = old.span(i);
            w.inst(i)?;
        }
    }
    Ok(w.out)
}

impl Widener<'_> {
    fn err(&self, what: &str) -> AdError {
        AdError::new(
            format!("vector mode (`width`) cannot yet handle {what}"),
            self.span,
        )
    }

    fn internal(&self, what: &str) -> AdError {
        AdError::internal(format!("internal error: `widen`: {what}"), self.span)
    }

    fn block(&self, b: Block) -> Result<Block, AdError> {
        self.bmap[b.index()].ok_or_else(|| self.internal("a block without a twin"))
    }

    fn emit(&mut self, data: InstData, types: &[Type], tag: Tag) -> Vec<Value> {
        let inst = self.out.append_inst(self.cur, data, types, self.span);
        self.out.set_tag(inst, tag);
        self.out.dfg.inst_results(inst).to_vec()
    }

    fn emit1(&mut self, data: InstData, ty: Type, tag: Tag) -> Value {
        self.emit(data, &[ty], tag)[0]
    }

    fn iconst(&mut self, k: i64) -> Value {
        self.emit1(
            InstData::Const {
                value: Constant::I64(k),
            },
            Type::I64,
            Tag::Primal,
        )
    }

    /// `a op b` on indices.
    fn int_op(&mut self, op: BinaryOp, a: Value, b: Value) -> Value {
        self.emit1(
            InstData::Binary { op, args: [a, b] },
            Type::I64,
            Tag::Primal,
        )
    }

    /// A new zero-filled array of `len` elements of type `ty`.
    fn new_zeroed(&mut self, len: Value, ty: Type) -> Value {
        self.emit1(InstData::ArrayNew { len, zeroed: true }, ty, Tag::Primal)
    }

    fn load(&mut self, array: Value, index: Value, ty: Type, tag: Tag) -> Value {
        let load = InstData::Load {
            array,
            index,
            checked: false,
        };
        self.emit1(load, ty, tag)
    }

    fn store(&mut self, array: Value, index: Value, value: Value, tag: Tag) {
        let store = InstData::Store {
            array,
            index,
            value,
            checked: false,
        };
        self.emit(store, &[], tag);
    }

    /// The runtime check that `shadow` has `len` elements.
    fn check_shadow_len(&mut self, len: Value, shadow: Value) {
        let check = InstData::LenCheck {
            args: [len, shadow],
            what: adc_ir::LenCheckOf::Shadow,
        };
        self.emit(check, &[], Tag::Primal);
    }

    /// `v` once (a primal value).
    fn one(&self, v: Value) -> Result<Value, AdError> {
        match &self.map[v.index()] {
            Lanes::One(x) => Ok(*x),
            Lanes::Wide { .. } => Err(self.internal(&format!("{v} has lanes where one is used"))),
            Lanes::Unmapped => Err(self.internal(&format!("{v} used before it is defined"))),
        }
    }

    /// Lane `k` of `v` (a primal value is the same in every lane).
    fn lane(&self, v: Value, k: usize) -> Result<Value, AdError> {
        match &self.map[v.index()] {
            Lanes::One(x) => Ok(*x),
            Lanes::Wide { lanes, .. } => Ok(lanes[k]),
            Lanes::Unmapped => Err(self.internal(&format!("{v} used before it is defined"))),
        }
    }

    fn whole_of(&self, v: Value) -> Option<Value> {
        match &self.map[v.index()] {
            Lanes::Wide { whole, .. } => *whole,
            _ => None,
        }
    }

    fn lanes(&self) -> std::ops::Range<usize> {
        0..self.width as usize
    }

    /// Twins of the blocks, with their parameters: `W` per laned one (and
    /// the whole array after them when it is kept whole).
    fn blocks(&mut self) {
        let old = self.old;
        for (k, &b) in old.layout.iter().enumerate() {
            let nb = self.out.dfg.make_block();
            self.out.layout.push(nb);
            self.bmap[b.index()] = Some(nb);
            if k == 0 {
                continue;
            }
            for &p in old.dfg.block_params(b) {
                let ty = old.dfg.value_type(p);
                self.map[p.index()] = if self.laned[p.index()] {
                    let lanes = self
                        .lanes()
                        .map(|_| self.out.dfg.append_block_param(nb, ty))
                        .collect();
                    let whole =
                        self.whole[p.index()].then(|| self.out.dfg.append_block_param(nb, ty));
                    Lanes::Wide { lanes, whole }
                } else {
                    Lanes::One(self.out.dfg.append_block_param(nb, ty))
                };
            }
        }
    }

    /// The entry's parameters: primal ones as they are, tangents split
    /// into lanes after a check of their length, and the `t_ret` arrays.
    fn entry(&mut self, src: &Function, spec: &DerivSpec) -> Result<(), AdError> {
        let old = self.old;
        let entry = old.entry_block().ok_or_else(|| self.internal("no body"))?;
        self.cur = self.block(entry)?;
        let param_types: Vec<Type> = self.out.params.iter().map(|p| p.ty).collect();
        let new_params: Vec<Value> = param_types
            .into_iter()
            .map(|ty| self.out.dfg.append_block_param(self.cur, ty))
            .collect();
        let (acts, _) = linearized_activities(spec);
        let layout = forward_param_layout(src, &acts);
        let old_params = old.dfg.block_params(entry).to_vec();
        let w = i64::from(self.width);
        let mut primal_of = Vec::new();
        for (k, ((i, is_tan), &op)) in layout.iter().zip(&old_params).enumerate() {
            let np = new_params[k];
            if !is_tan {
                self.map[op.index()] = Lanes::One(np);
                primal_of.push((*i, np));
                continue;
            }
            let ty = old.dfg.value_type(op);
            let primal = primal_of
                .iter()
                .find(|(j, _)| j == i)
                .map(|(_, v)| *v)
                .ok_or_else(|| self.internal("a tangent before its primal"))?;
            self.map[op.index()] = match ty {
                Type::Array(_) => {
                    let n =
                        self.emit1(InstData::ArrayLen { array: primal }, Type::I64, Tag::Primal);
                    let wc = self.iconst(w);
                    let wn = self.int_op(BinaryOp::Mul, n, wc);
                    self.check_shadow_len(wn, np);
                    let lanes = self.views(np, n)?;
                    Lanes::Wide {
                        lanes,
                        whole: Some(np),
                    }
                }
                Type::Ref(_) | Type::Scalar(_) => {
                    let wc = self.iconst(w);
                    self.check_shadow_len(wc, np);
                    if self.reverse && matches!(ty, Type::Scalar(_)) {
                        // An `out` array of gradients.
                        let zero = self.emit1(
                            InstData::Const {
                                value: Constant::zero(ty.elem()),
                            },
                            ty,
                            Tag::Primal,
                        );
                        for k in self.lanes() {
                            let index = self.iconst(k as i64);
                            self.store(np, index, zero, Tag::Primal);
                        }
                    }
                    let mut lanes = Vec::new();
                    for k in self.lanes() {
                        let index = self.iconst(k as i64);
                        lanes.push(match ty {
                            Type::Ref(_) => {
                                self.emit1(InstData::ElemRef { array: np, index }, ty, Tag::Primal)
                            }
                            _ => self.load(np, index, ty, Tag::Diff),
                        });
                    }
                    Lanes::Wide { lanes, whole: None }
                }
                Type::Pair(_) => return Err(self.internal("a dpair after lower-pairs")),
            };
        }
        for &p in &new_params[layout.len()..] {
            let wc = self.iconst(w);
            self.check_shadow_len(wc, p);
            self.t_ret.push(p);
        }
        Ok(())
    }

    /// `W` views of `whole`, `n` elements each, direction after direction.
    fn views(&mut self, whole: Value, n: Value) -> Result<Vec<Value>, AdError> {
        let ty = self.out.dfg.value_type(whole);
        let mut lanes = Vec::new();
        let mut lo = self.iconst(0);
        for _ in self.lanes() {
            let hi = self.int_op(BinaryOp::Add, lo, n);
            lanes.push(self.emit1(
                InstData::ArrayView {
                    array: whole,
                    lo,
                    hi,
                },
                ty,
                Tag::Primal,
            ));
            lo = hi;
        }
        Ok(lanes)
    }

    fn set(&mut self, old_results: &[Value], new: Vec<Value>) {
        for (r, v) in old_results.iter().zip(new) {
            self.map[r.index()] = Lanes::One(v);
        }
    }

    fn inst(&mut self, i: Inst) -> Result<(), AdError> {
        let old = self.old;
        let data = old.dfg.inst(i).clone();
        let results = old.dfg.inst_results(i).to_vec();
        let types = crate::defs::result_types(old, i);
        if data.is_terminator() {
            return self.terminator(data);
        }
        let laned_result = results.first().is_some_and(|r| self.laned[r.index()]);
        let laned_arg = data.args().iter().any(|a| self.laned[a.index()]);
        match (old.tag(i), &data) {
            (Tag::Mixed, InstData::Call { func, args })
                if jvp_source(self.module, *func).is_some() =>
            {
                self.call(*func, args, &results)
            }
            (Tag::Primal, InstData::LenCheck { args, .. }) if self.laned[args[1].index()] => Ok(()),
            (Tag::Primal, _) if laned_result => self.shadow_inst(&data, &results, &types),
            (Tag::Primal, _) if laned_arg => Err(self.err(&format!(
                "`{}` on a shadow",
                adc_ir::print::fmt_inst_data(Some(self.module), &data)
            ))),
            (Tag::Primal, _) => {
                let d = try_map_args(&data, |a| self.one(a))?;
                let vals = self.emit(d, &types, Tag::Primal);
                self.set(&results, vals);
                Ok(())
            }
            (_, InstData::ArrayFree { array } | InstData::DeferFree { array })
                if self.laned[array.index()] =>
            {
                let whole = self
                    .whole_of(*array)
                    .ok_or_else(|| self.err("freeing a shadow that is not one array"))?;
                let mut d = data.clone();
                d.map_args(|_| whole);
                self.emit(d, &[], Tag::Diff);
                Ok(())
            }
            (Tag::Diff, InstData::Call { func, .. })
                if self
                    .module
                    .func(*func)
                    .params
                    .iter()
                    .any(|p| p.mode != ParamMode::In) =>
            {
                Err(self.err("a custom forward derivative that writes through its parameters"))
            }
            (tag, _) => {
                // Tape pops come off newest first: the last lane pushed.
                let order: Vec<usize> = match data {
                    InstData::TapePop { .. } => self.lanes().rev().collect(),
                    _ => self.lanes().collect(),
                };
                let mut per_lane = vec![Vec::new(); self.width as usize];
                for k in order {
                    let d = try_map_args(&data, |a| self.lane(a, k))?;
                    per_lane[k] = self.emit(d, &types, tag);
                }
                for (j, r) in results.iter().enumerate() {
                    let lanes = per_lane.iter().map(|vals| vals[j]).collect();
                    self.map[r.index()] = Lanes::Wide { lanes, whole: None };
                }
                Ok(())
            }
        }
    }

    /// A primal instruction that makes a shadow.
    fn shadow_inst(
        &mut self,
        data: &InstData,
        results: &[Value],
        types: &[Type],
    ) -> Result<(), AdError> {
        let ty = types[0];
        let w = i64::from(self.width);
        let lanes = match data {
            InstData::ArrayNew { len, .. } => {
                let n = self.one(*len)?;
                let wc = self.iconst(w);
                let wn = self.int_op(BinaryOp::Mul, n, wc);
                let whole = self.new_zeroed(wn, ty);
                let lanes = self.views(whole, n)?;
                Lanes::Wide {
                    lanes,
                    whole: Some(whole),
                }
            }
            InstData::ArrayNull => {
                let null = self.emit1(InstData::ArrayNull, ty, Tag::Primal);
                Lanes::Wide {
                    lanes: vec![null; self.width as usize],
                    whole: Some(null),
                }
            }
            InstData::ArrayCopy { array } => {
                let whole = self
                    .whole_of(*array)
                    .ok_or_else(|| self.err("copying a shadow that is not one array"))?;
                let n = self.emit1(
                    InstData::ArrayLen {
                        array: self.lane(*array, 0)?,
                    },
                    Type::I64,
                    Tag::Primal,
                );
                let copy = self.emit1(InstData::ArrayCopy { array: whole }, ty, Tag::Primal);
                let lanes = self.views(copy, n)?;
                Lanes::Wide {
                    lanes,
                    whole: Some(copy),
                }
            }
            InstData::ArrayView { .. } | InstData::ElemRef { .. } | InstData::Slot => {
                let mut lanes = Vec::new();
                for k in self.lanes() {
                    let d = try_map_args(&data, |a| self.lane(a, k))?;
                    lanes.push(self.emit1(d, ty, Tag::Primal));
                }
                Lanes::Wide { lanes, whole: None }
            }
            other => {
                return Err(self.err(&format!(
                    "`{}` making a shadow (arrays on the tape)",
                    adc_ir::print::fmt_inst_data(Some(self.module), other)
                )))
            }
        };
        self.map[results[0].index()] = lanes;
        Ok(())
    }

    fn block_call(&self, call: &BlockCall) -> Result<BlockCall, AdError> {
        let old = self.old;
        let mut args = Vec::new();
        for (&p, &a) in old.dfg.block_params(call.block).iter().zip(&call.args) {
            if !self.laned[p.index()] {
                args.push(self.one(a)?);
                continue;
            }
            for k in self.lanes() {
                args.push(self.lane(a, k)?);
            }
            if self.whole[p.index()] {
                args.push(
                    self.whole_of(a)
                        .ok_or_else(|| self.internal("a whole shadow parameter gets a part"))?,
                );
            }
        }
        Ok(BlockCall {
            block: self.block(call.block)?,
            args,
        })
    }

    fn terminator(&mut self, data: InstData) -> Result<(), AdError> {
        let tag = if data.args().iter().any(|a| self.laned[a.index()]) {
            Tag::Mixed
        } else {
            Tag::Primal
        };
        let d = match data {
            InstData::Jump { dest } => InstData::Jump {
                dest: self.block_call(&dest)?,
            },
            InstData::Branch {
                cond,
                then_dest,
                else_dest,
            } => InstData::Branch {
                cond: self.one(cond)?,
                then_dest: self.block_call(&then_dest)?,
                else_dest: self.block_call(&else_dest)?,
            },
            InstData::Return { args } => return self.ret(&args),
            _ => return Err(self.internal("not a terminator")),
        };
        self.emit(d, &[], tag);
        Ok(())
    }

    /// The width-1 return `primal results.., tangents..` (the primal ones
    /// only without `DualOnly`): the tangents' lanes stored to `t_ret`.
    fn ret(&mut self, args: &[Value]) -> Result<(), AdError> {
        let n_primal = if self.ret == Activity::DualOnly {
            0
        } else {
            self.n_returns
        };
        let primal: Vec<Value> = args[..n_primal.min(args.len())]
            .iter()
            .map(|a| self.one(*a))
            .collect::<Result<_, _>>()?;
        if self.reverse {
            let mut all = primal;
            for &t in &args[n_primal.min(args.len())..] {
                for k in self.lanes() {
                    all.push(self.lane(t, k)?);
                }
            }
            self.emit(InstData::Return { args: all }, &[], Tag::Mixed);
            return Ok(());
        }
        for (j, &t) in args[n_primal.min(args.len())..].iter().enumerate() {
            let dst = *self
                .t_ret
                .get(j)
                .ok_or_else(|| self.internal("a tangent result without `t_ret`"))?;
            for k in self.lanes() {
                let index = self.iconst(k as i64);
                let value = self.lane(t, k)?;
                self.store(dst, index, value, Tag::Diff);
            }
        }
        let primal = if self.ret == Activity::DualOnly {
            Vec::new()
        } else {
            primal
        };
        self.emit(InstData::Return { args: primal }, &[], Tag::Mixed);
        Ok(())
    }
}

/// `data` with each argument replaced by `f` of it, or `f`'s first error.
fn try_map_args(
    data: &InstData,
    mut f: impl FnMut(Value) -> Result<Value, AdError>,
) -> Result<InstData, AdError> {
    let mut d = data.clone();
    let mut first_error = None;
    d.map_args(|a| match f(a) {
        Ok(x) => x,
        Err(e) => {
            first_error.get_or_insert(e);
            a
        }
    });
    match first_error {
        Some(e) => Err(e),
        None => Ok(d),
    }
}
