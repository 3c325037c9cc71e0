//! `linearize`: forward mode. Generates the body of every derivative
//! request whose function can be differentiated now.
//!
//! Assumes: the requested functions' sources are verified and have bodies.
//! Guarantees (check with `adc ir --after linearize`): each generated body
//! is the source's control-flow graph with every value paired with its
//! differential. Float values get a tangent (tagged `diff`); where a float
//! crosses a block boundary it travels with its tangent as one
//! DifferentialPair (`dpair<T>` block parameter, `dpair.make` before the
//! branch, `dpair.primal` / `dpair.diff` at the top of the block), which
//! `lower-pairs` splits after `propagate`. Float arrays
//! and references a shadow (a primal pointer to differential memory;
//! loads and stores through it are `diff`). Differential instructions are
//! only the linear forms `transpose` knows: `const 0`, `add`, `sub`, `neg`,
//! `mulz t, partial`, `select primal, t, t`, `conv`, loads and stores
//! through shadows, `free` of a shadow, and calls of derivatives. Every
//! partial derivative is computed by primal instructions. Calls go to the
//! callee's derivative (`__adc_jvp_NAME`, declared on demand and generated
//! in the same run), or its `[forward_derivative]`. A forward request is
//! finished after `propagate`; a reverse request has the forward-mode signature
//! (`Active` scalars become tangent parameters, the return's tangent is
//! returned) until `transpose` turns it around.

mod calls;
mod inst;
mod interact;
mod math;
mod memory;
mod needless;

use crate::ad::{pending, ready, AdError};
use adc_ir::ad::{forward_param_layout, linearized_activities};
use adc_ir::{
    Activity, AdMode, BinaryOp, Block, BlockCall, CmpCond, Constant, FuncId, Function, InstData,
    MathFunc, Module, ScalarType, Span, Tag, Type, UnaryOp, Value,
};

/// The derivative that goes with a primal value.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Tan {
    /// Integers, bools: no derivative.
    None,
    /// Known zero: a tangent not computed, or a shadow not allocated.
    Zero,
    Val(Value),
}

/// Generates every request that is ready; returns the ids it generated.
pub fn run(module: &mut Module) -> Result<Vec<FuncId>, AdError> {
    let mut done = Vec::new();
    let mut is_done = rustc_hash::FxHashSet::default();
    let mut work: Vec<FuncId> = pending(module)
        .into_iter()
        .filter(|id| {
            let of = &module
                .func(*id)
                .deriv
                .as_ref()
                .expect("pending has a spec")
                .of;
            module.find(of).is_some_and(|src| ready(module, src))
        })
        .collect();
    // Which primals are recursive, for `inline`: computed once (the
    // derivatives added on the way are not inlined anyway).
    let recursive = crate::callgraph::Recursive::of(module);
    while let Some(id) = work.pop() {
        if !module.func(id).layout.is_empty() || is_done.contains(&id) {
            continue;
        }
        let before = module.funcs.len();
        generate(module, id, &recursive)?;
        crate::ad::widen::declare_callees(module, id);
        crate::ad::sets::declare_callees(module, id);
        done.push(id);
        is_done.insert(id);
        // Derivatives of callees declared while generating this one.
        work.extend(crate::ad::pending_since(module, before));
    }
    Ok(done)
}

fn generate(
    module: &mut Module,
    id: FuncId,
    recursive: &crate::callgraph::Recursive,
) -> Result<(), AdError> {
    let func = module.func(id);
    let spec = func
        .deriv
        .clone()
        .expect("invariant: pending functions have a spec");
    let span = func.deriv_span;
    let src_id = module
        .find(&spec.of)
        .ok_or_else(|| AdError::new(format!("cannot find `{}`", spec.of), span))?;
    let mut src = module.func(src_id).clone();
    if src.is_import() {
        return Err(AdError::new(
            format!("cannot differentiate `extern {}`: it has no body", src.name),
            span,
        ));
    }
    crate::opt::inline::run(&mut src, module, recursive);
    if spec.mode == AdMode::Reverse {
        crate::ad::copies::run(&mut src);
    }
    crate::opt::optimize_function(&mut src);
    if spec.mode == AdMode::Reverse {
        crate::ad::outline::run(module, &mut src)?;
    }
    let (acts, ret) = linearized_activities(&spec);
    let (params, returns) = adc_ir::ad::forward_signature(&src, &acts, ret);
    let mut out = Function::new(
        module.func(id).name.clone(),
        params,
        returns,
        module.func(id).linkage,
    );
    out.deriv = Some(spec.clone());
    out.deriv_span = span;
    let needless = needless::needless(module, &src);
    // The marker of `float` operations only where `src` has some.
    let has_f32 =
        (0..src.dfg.num_values()).any(|v| src.dfg.value_type(adc_ir::Value::new(v)) == Type::F32);
    let interact = spec.interactions.then(|| {
        use adc_ir::ScalarType::{F32, F64};
        let f64_marker = crate::ad::interactions::interact_marker(module, F64);
        let f32_marker = has_f32.then(|| crate::ad::interactions::interact_marker(module, F32));
        (f64_marker, f32_marker)
    });
    let mut lz = Linearizer {
        interact,
        needless,
        module,
        src: &src,
        out,
        mode: spec.mode,
        ret,
        vmap: vec![None; src.dfg.num_values()],
        tan: vec![Tan::None; src.dfg.num_values()],
        bmap: Default::default(),
        cur: Block::new(0),
        span,
        const_shadows: Vec::new(),
    };
    lz.body(&acts)?;
    let out = lz.out;
    *module.func_mut(id) = out;
    Ok(())
}

struct Linearizer<'a> {
    /// Instructions copied as primal code with zero tangents (`needless`).
    needless: std::collections::BTreeSet<adc_ir::Inst>,
    module: &'a mut Module,
    src: &'a Function,
    out: Function,
    mode: AdMode,
    /// A sparse Hessian's sweep (`interactions`): the marker each
    /// nonlinear operation calls with the tangents that interact.
    interact: Option<(FuncId, Option<FuncId>)>,
    ret: Activity,
    vmap: Vec<Option<Value>>,
    tan: Vec<Tan>,
    bmap: std::collections::BTreeMap<Block, Block>,
    cur: Block,
    span: Span,
    /// Zero shadows allocated for `Const` array parameters, freed at returns.
    const_shadows: Vec<Value>,
}

impl Linearizer<'_> {
    fn emit(&mut self, data: InstData, types: &[Type], tag: Tag) -> Vec<Value> {
        let inst = self.out.append_inst(self.cur, data, types, self.span);
        self.out.set_tag(inst, tag);
        self.out.dfg.inst_results(inst).to_vec()
    }

    fn emit1(&mut self, data: InstData, ty: Type, tag: Tag) -> Value {
        self.emit(data, &[ty], tag)[0]
    }

    fn p(&self, v: Value) -> Value {
        self.vmap[v.index()].expect("invariant: defined before use in verified IR")
    }

    fn konst(&mut self, c: Constant, tag: Tag) -> Value {
        self.emit1(InstData::Const { value: c }, Type::Scalar(c.ty()), tag)
    }

    fn fconst(&mut self, ty: ScalarType, x: f64) -> Value {
        let c = if ty == ScalarType::F32 {
            Constant::F32(x as f32)
        } else {
            Constant::F64(x)
        };
        self.konst(c, Tag::Primal)
    }

    /// A tangent as a value (zeros become `const 0`).
    fn mat(&mut self, t: Tan, ty: Type) -> Value {
        match t {
            Tan::Val(v) => v,
            _ => self.konst(Constant::zero(ty.elem()), Tag::Diff),
        }
    }

    fn prim(&mut self, data: InstData, ty: Type) -> Value {
        self.emit1(data, ty, Tag::Primal)
    }

    fn bin(&mut self, op: BinaryOp, a: Value, b: Value, ty: Type, tag: Tag) -> Value {
        self.emit1(InstData::Binary { op, args: [a, b] }, ty, tag)
    }

    fn add(&mut self, a: Tan, b: Tan, ty: Type) -> Tan {
        match (a, b) {
            (Tan::Val(x), Tan::Val(y)) => Tan::Val(self.bin(BinaryOp::Add, x, y, ty, Tag::Diff)),
            (Tan::Val(x), _) | (_, Tan::Val(x)) => Tan::Val(x),
            _ => Tan::Zero,
        }
    }

    fn neg(&mut self, a: Tan, ty: Type) -> Tan {
        match a {
            Tan::Val(x) => Tan::Val(self.emit1(
                InstData::Unary {
                    op: UnaryOp::Neg,
                    arg: x,
                },
                ty,
                Tag::Diff,
            )),
            other => other,
        }
    }

    /// `t * partial`, exactly zero when `t` is zero (docs/derivatives.md#non-smooth-and-singular-points).
    fn scale(&mut self, t: Tan, partial: Value, ty: Type) -> Tan {
        match t {
            Tan::Val(x) => Tan::Val(self.bin(BinaryOp::MulZ, x, partial, ty, Tag::Diff)),
            other => other,
        }
    }

    /// `t / y` for a primal `y`, exactly zero when `t` is zero (docs/derivatives.md#non-smooth-and-singular-points).
    fn divide(&mut self, t: Tan, y: Value, ty: Type) -> Tan {
        match t {
            Tan::Val(x) => Tan::Val(self.bin(BinaryOp::DivZ, x, y, ty, Tag::Diff)),
            other => other,
        }
    }

    fn sum_scaled(&mut self, terms: &[(Tan, Value)], ty: Type) -> Tan {
        let mut acc = Tan::Zero;
        for &(t, p) in terms {
            let s = self.scale(t, p, ty);
            acc = self.add(acc, s, ty);
        }
        acc
    }

    fn select(&mut self, cond: Value, a: Tan, b: Tan, ty: Type) -> Tan {
        if a == Tan::Zero && b == Tan::Zero {
            return Tan::Zero;
        }
        let (x, y) = (self.mat(a, ty), self.mat(b, ty));
        Tan::Val(self.emit1(InstData::Select { cond, args: [x, y] }, ty, Tag::Diff))
    }

    fn cmp(&mut self, cond: CmpCond, a: Value, b: Value) -> Value {
        self.prim(InstData::Cmp { cond, args: [a, b] }, Type::BOOL)
    }

    fn math(&mut self, f: MathFunc, args: &[Value], ty: Type) -> Value {
        self.prim(
            InstData::Math {
                func: f,
                args: args.to_vec(),
            },
            ty,
        )
    }

    fn tan_of(&self, v: Value) -> Tan {
        self.tan[v.index()]
    }

    fn set_tan(&mut self, v: Value, t: Tan) {
        self.tan[v.index()] = t;
    }

    /// True when `v` (an array) is used other than by loads and `len`, so a
    /// zero shadow must exist in memory.
    fn needs_shadow(&self, v: Value) -> bool {
        let src = self.src;
        src.layout.iter().any(|b| {
            src.dfg
                .block(*b)
                .insts
                .iter()
                .any(|i| match src.dfg.inst(*i) {
                    InstData::Load { array, index, .. } => *index == v && *array != v,
                    InstData::ArrayLen { .. } => false,
                    // A callee that only reads the array gets a derivative
                    // specialised `Const` on it (forward mode).
                    InstData::Call { func, args }
                        if calls::specialisable(self.mode, self.module.func(*func)) =>
                    {
                        let callee = self.module.func(*func);
                        args.iter()
                            .zip(&callee.params)
                            .any(|(a, p)| *a == v && p.mode != adc_ir::ParamMode::In)
                    }
                    other => other.args().contains(&v),
                })
        })
    }

    fn body(&mut self, acts: &[Activity]) -> Result<(), AdError> {
        let src = self.src;
        let src_entry = src.entry_block().expect("invariant: sources have bodies");
        for &b in &src.layout {
            let nb = self.out.dfg.make_block();
            self.out.layout.push(nb);
            self.bmap.insert(b, nb);
        }
        let entry = self.bmap[&src_entry];
        self.cur = entry;
        let src_params = src.dfg.block_params(src_entry).to_vec();
        for (k, (i, is_tan)) in forward_param_layout(src, acts).into_iter().enumerate() {
            let ty = self.out.params[k].ty;
            let v = self.out.dfg.append_block_param(entry, ty);
            let sp = src_params[i];
            if is_tan {
                self.set_tan(sp, Tan::Val(v));
            } else {
                self.vmap[sp.index()] = Some(v);
                let t = if adc_ir::ad::is_differentiable(ty) {
                    Tan::Zero
                } else {
                    Tan::None
                };
                self.set_tan(sp, t);
            }
        }
        for &sp in &src_params {
            let ty = src.dfg.value_type(sp);
            let p = self.p(sp);
            match (self.tan_of(sp), ty) {
                (Tan::Val(s), Type::Array(_)) => {
                    self.emit(
                        InstData::LenCheck {
                            args: [p, s],
                            what: adc_ir::LenCheckOf::Shadow,
                        },
                        &[],
                        Tag::Primal,
                    );
                }
                (Tan::Zero, Type::Array(_)) if self.needs_shadow(sp) => {
                    let n = self.prim(InstData::ArrayLen { array: p }, Type::I64);
                    let s = self.prim(
                        InstData::ArrayNew {
                            len: n,
                            zeroed: true,
                        },
                        ty,
                    );
                    self.const_shadows.push(s);
                    self.set_tan(sp, Tan::Val(s));
                }
                (Tan::Zero, Type::Ref(e)) => {
                    let s = self.zero_slot(e);
                    self.set_tan(sp, Tan::Val(s));
                }
                _ => (),
            }
        }
        // A float block parameter becomes one DifferentialPair parameter;
        // arrays and references keep their shadow (a primal pointer) as a
        // parameter of its own.
        let mut pair_params = Vec::new();
        for &b in &src.layout[1..] {
            let nb = self.bmap[&b];
            for &p in src.dfg.block_params(b) {
                let ty = src.dfg.value_type(p);
                match ty {
                    Type::Scalar(s) if s.is_float() => {
                        let pair = self.out.dfg.append_block_param(nb, Type::Pair(s));
                        pair_params.push((b, p, pair));
                    }
                    _ if adc_ir::ad::is_differentiable(ty) => {
                        let v = self.out.dfg.append_block_param(nb, ty);
                        self.vmap[p.index()] = Some(v);
                        let t = self.out.dfg.append_block_param(nb, ty);
                        self.set_tan(p, Tan::Val(t));
                    }
                    _ => {
                        let v = self.out.dfg.append_block_param(nb, ty);
                        self.vmap[p.index()] = Some(v);
                        self.set_tan(p, Tan::None);
                    }
                }
            }
        }
        // Dominators first, so definitions come before their uses.
        let order = crate::cfg::dominator_order(src);
        for b in order {
            self.cur = self.bmap[&b];
            for &(_, p, pair) in pair_params.iter().filter(|(pb, ..)| *pb == b) {
                let ty = src.dfg.value_type(p);
                let v = self.prim(InstData::PairPrimal { pair }, ty);
                let t = self.emit1(InstData::PairDiff { pair }, ty, Tag::Diff);
                self.vmap[p.index()] = Some(v);
                self.set_tan(p, Tan::Val(t));
            }
            for &inst in &src.dfg.block(b).insts {
                self.span = src.span(inst);
                self.inst(inst)?;
            }
        }
        Ok(())
    }

    fn zero_slot(&mut self, e: ScalarType) -> Value {
        let s = self.prim(InstData::Slot, Type::Ref(e));
        let z = self.konst(Constant::zero(e), Tag::Diff);
        self.emit(InstData::RefStore { ptr: s, value: z }, &[], Tag::Diff);
        s
    }

    /// The primal copy of `inst`, operands mapped.
    fn copy(&mut self, inst: adc_ir::Inst) -> Vec<Value> {
        let mut data = self.src.dfg.inst(inst).clone();
        data.map_args(|a| self.vmap[a.index()].expect("invariant: defined before use"));
        let types = crate::defs::result_types(self.src, inst);
        let out = self.emit(data, &types, Tag::Primal);
        for (r, v) in self.src.dfg.inst_results(inst).iter().zip(&out) {
            self.vmap[r.index()] = Some(*v);
        }
        out
    }

    fn shadow(&self, v: Value) -> Result<Option<Value>, AdError> {
        match self.tan_of(v) {
            Tan::Val(s) => Ok(Some(s)),
            Tan::None => Ok(None),
            Tan::Zero => Err(AdError::internal(
                "internal error: a shadow was needed but not allocated",
                self.span,
            )),
        }
    }

    fn block_call(&mut self, call: &BlockCall) -> BlockCall {
        let mut args = Vec::new();
        for &a in &call.args {
            let p = self.p(a);
            let ty = self.src.dfg.value_type(a);
            if !adc_ir::ad::is_differentiable(ty) {
                args.push(p);
                continue;
            }
            let t = self.tan_of(a);
            let t = self.mat(t, ty);
            match ty {
                Type::Scalar(s) => {
                    let pair = InstData::PairMake { args: [p, t] };
                    args.push(self.emit1(pair, Type::Pair(s), Tag::Mixed));
                }
                _ => args.extend([p, t]),
            }
        }
        BlockCall {
            block: self.bmap[&call.block],
            args,
        }
    }
}
