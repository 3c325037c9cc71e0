//! `transpose` of single differential instructions: adjoints of linear
//! arithmetic, shadow memory as its own adjoint store, derivative calls.

use super::{ShadowCell, Transposer};
use crate::ad::{jvp_source, AdError};
use crate::predicates::is_fresh_array;
use adc_ir::{
    BinaryOp, CmpCond, Constant, FuncId, Inst, InstData, ParamMode, Type, UnaryOp, Value,
};

impl Transposer<'_> {
    pub(super) fn transpose_inst(&mut self, i: Inst) -> Result<(), AdError> {
        let u = self.u;
        let data = u.dfg.inst(i).clone();
        let results = u.dfg.inst_results(i).to_vec();
        let adj = match (&data, results.first()) {
            (InstData::Call { .. }, _) => None,
            (_, Some(&r)) => self.take_adjoint(r),
            _ => None,
        };
        let nonlinear = || {
            AdError::internal(
                format!(
                    "internal error: `{}` is not linear",
                    adc_ir::print::fmt_inst_data(None, &data)
                ),
                self.span,
            )
        };
        match &data {
            InstData::Const { .. } => (),
            InstData::Unary {
                op: UnaryOp::Neg,
                arg,
            } => {
                if let Some(a) = adj {
                    let ty = self.ty(*arg);
                    let n = self.emit1(
                        InstData::Unary {
                            op: UnaryOp::Neg,
                            arg: a,
                        },
                        ty,
                    );
                    self.accumulate(*arg, n);
                }
            }
            InstData::Binary { op, args } => {
                let Some(a) = adj else { return Ok(()) };
                let [x, y] = *args;
                match op {
                    BinaryOp::Add => {
                        self.accumulate(x, a);
                        self.accumulate(y, a);
                    }
                    BinaryOp::Sub => {
                        self.accumulate(x, a);
                        let n = self.emit1(
                            InstData::Unary {
                                op: UnaryOp::Neg,
                                arg: a,
                            },
                            self.ty(y),
                        );
                        self.accumulate(y, n);
                    }
                    BinaryOp::MulZ | BinaryOp::DivZ if !self.kinds[y.index()] => {
                        let py = self.p(y);
                        let s = self.bin(*op, a, py);
                        self.accumulate(x, s);
                    }
                    _ => return Err(nonlinear()),
                }
            }
            InstData::Select { cond, args } => {
                let Some(a) = adj else { return Ok(()) };
                let c = self.p(*cond);
                let ty = self.ty(args[0]);
                let z = self.zero(ty);
                let to_x = self.emit1(
                    InstData::Select {
                        cond: c,
                        args: [a, z],
                    },
                    ty,
                );
                let to_y = self.emit1(
                    InstData::Select {
                        cond: c,
                        args: [z, a],
                    },
                    ty,
                );
                self.accumulate(args[0], to_x);
                self.accumulate(args[1], to_y);
            }
            InstData::Convert { arg } => {
                if let Some(a) = adj {
                    let c = self.emit1(InstData::Convert { arg: a }, self.ty(*arg));
                    self.accumulate(*arg, c);
                }
            }
            InstData::Load {
                array,
                index,
                checked,
            } => {
                let cell = (
                    self.p(*array),
                    Some((self.p(*index), *checked)),
                    Type::Scalar(self.ty(*array).elem()),
                );
                if self.shadow_facts.first_adjoints.contains(&i) {
                    // The element is zero here; it is written even without
                    // an adjoint, as a clear `dead_clears` skipped relies on.
                    let a = adj.unwrap_or_else(|| self.zero(cell.2));
                    self.store_cell(cell, a);
                } else if let Some(a) = adj {
                    self.add_to_cell(cell, a);
                }
            }
            InstData::RefLoad { ptr } => {
                if let Some(a) = adj {
                    let cell = (self.p(*ptr), None, Type::Scalar(self.ty(*ptr).elem()));
                    self.add_to_cell(cell, a);
                }
            }
            InstData::Store {
                array,
                index,
                value,
                checked,
            } => {
                let cell = (
                    self.p(*array),
                    Some((self.p(*index), *checked)),
                    Type::Scalar(self.ty(*array).elem()),
                );
                if self.shadow_facts.dead_clears.contains(&i) {
                    let old = self.load_cell(cell);
                    self.cleared = None;
                    self.accumulate(*value, old);
                } else {
                    self.consume_cell(cell, *value);
                }
            }
            InstData::RefStore { ptr, value } => {
                let cell = (self.p(*ptr), None, Type::Scalar(self.ty(*ptr).elem()));
                self.consume_cell(cell, *value);
            }
            InstData::ArrayFree { array } | InstData::DeferFree { array } => {
                let s = self.p(*array);
                self.emit(InstData::DeferFree { array: s }, &[]);
            }
            InstData::Call { func, args } => self.transpose_call(*func, args, &results)?,
            // Tangents that a reverse derivative being differentiated again
            // keeps on its own tape (level 1 and up, `unzip`). A tape is a
            // stack, so run backwards each push becomes a pop of the
            // adjoint and each pop a push of it: the adjoint stack mirrors
            // the tangent stack, and is empty again at the end.
            InstData::TapePush { value, tape } if *tape > 0 => {
                let a = self.emit1(InstData::TapePop { tape: *tape }, self.ty(*value));
                self.accumulate(*value, a);
            }
            InstData::TapePop { tape } if *tape > 0 => {
                let ty = self.ty(results[0]);
                let a = match adj {
                    Some(a) => a,
                    None if ty.elem().is_float() && matches!(ty, Type::Scalar(_)) => self.zero(ty),
                    // A shadow pointer (primal) keeps the stack balanced.
                    None => self.emit1(InstData::ArrayNull, ty),
                };
                self.emit(
                    InstData::TapePush {
                        value: a,
                        tape: *tape,
                    },
                    &[],
                );
            }
            _ => return Err(nonlinear()),
        }
        Ok(())
    }

    pub(super) fn load_cell(&mut self, (ptr, index, ty): ShadowCell) -> Value {
        match index {
            Some((index, checked)) => self.emit1(
                InstData::Load {
                    array: ptr,
                    index,
                    checked,
                },
                ty,
            ),
            None => self.emit1(InstData::RefLoad { ptr }, ty),
        }
    }

    pub(super) fn store_cell(&mut self, (ptr, index, _): ShadowCell, value: Value) {
        let data = match index {
            Some((index, checked)) => InstData::Store {
                array: ptr,
                index,
                value,
                checked,
            },
            None => InstData::RefStore { ptr, value },
        };
        self.emit(data, &[]);
    }

    /// The transpose of loading from shadow memory: the adjoint adds up there.
    /// Right after the cell was cleared (`y[r] += ...` reads and writes the
    /// same element, so its reverse clears it, then adds to it), the adjoint
    /// is stored as it is: `0 + a` is `a` (but for the sign of a zero).
    pub(super) fn add_to_cell(&mut self, cell: ShadowCell, adjoint: Value) {
        if let Some((cleared, zero_store)) = self.cleared {
            if cleared == cell && self.untouched_since(zero_store, cell) {
                self.cleared = None;
                let insts = &mut self.out.dfg.block_mut(self.cur).insts;
                // From the end: the zero store is among the block's last.
                if let Some(at) = insts.iter().rposition(|&i| i == zero_store) {
                    insts.remove(at);
                }
                self.store_cell(cell, adjoint);
                return;
            }
        }
        let old = self.load_cell(cell);
        let new = self.bin(BinaryOp::Add, old, adjoint);
        self.store_cell(cell, new);
    }

    /// The transpose of storing `value` into shadow memory: the cell's
    /// adjoint goes to `value`, and the cell (overwritten) is cleared.
    pub(super) fn consume_cell(&mut self, cell: ShadowCell, value: Value) {
        let old = self.load_cell(cell);
        let z = self.zero(cell.2);
        self.store_cell(cell, z);
        let zero_store = *self
            .out
            .dfg
            .block(self.cur)
            .insts
            .last()
            .expect("invariant: store_cell just appended the store");
        self.cleared = Some((cell, zero_store));
        self.accumulate(value, old);
    }

    /// Whether nothing the current block has emitted after `zero_store` may
    /// read or write `cell`: arithmetic, and array accesses of other arrays
    /// that are objects of their own (`predicates::is_fresh_array`: parameters,
    /// `new`, `copy`), and of an array cell, adjoint slots.
    fn untouched_since(&self, zero_store: Inst, cell: ShadowCell) -> bool {
        let out = &self.out;
        let insts = &out.dfg.block(self.cur).insts;
        let Some(at) = insts.iter().rposition(|&i| i == zero_store) else {
            return false;
        };
        let distinct = |a: Value| {
            let (x, y) = (out.array_root(a), out.array_root(cell.0));
            cell.1.is_some() && x != y && is_fresh_array(out, x) && is_fresh_array(out, y)
        };
        insts[at + 1..].iter().all(|&i| match out.dfg.inst(i) {
            InstData::Const { .. }
            | InstData::Unary { .. }
            | InstData::Binary { .. }
            | InstData::Cmp { .. }
            | InstData::Select { .. }
            | InstData::Convert { .. } => true,
            InstData::Load { array, .. } | InstData::Store { array, .. } => distinct(*array),
            // Adjoint slots are stack memory of their own.
            InstData::RefLoad { ptr } | InstData::RefStore { ptr, .. } => {
                cell.1.is_some() && matches!(crate::defs::def_data(out, *ptr), Some(InstData::Slot))
            }
            _ => false,
        })
    }

    /// A zeroed array as long as `shadow`.
    fn own_shadow(&mut self, shadow: Value, ty: Type) -> Value {
        let len = self.emit1(InstData::ArrayLen { array: shadow }, Type::I64);
        self.emit1(InstData::ArrayNew { len, zeroed: true }, ty)
    }

    /// `shadow[i] += own[i]` for every `i`, then `own` freed: a loop, after
    /// which the sweep goes on in a block of its own.
    fn add_into(&mut self, shadow: Value, own: Value) {
        let elem = Type::Scalar(self.out.dfg.value_type(own).elem());
        let len = self.emit1(InstData::ArrayLen { array: own }, Type::I64);
        let zero = self.emit1(
            InstData::Const {
                value: Constant::I64(0),
            },
            Type::I64,
        );
        let header = self.out.dfg.make_block();
        let body = self.out.dfg.make_block();
        let after = self.out.dfg.make_block();
        for b in [header, body, after] {
            self.out.layout.push(b);
        }
        let i = self.out.dfg.append_block_param(header, Type::I64);
        self.emit(
            InstData::Jump {
                dest: to(header, vec![zero]),
            },
            &[],
        );
        self.cur = header;
        let more = self.emit1(
            InstData::Cmp {
                cond: CmpCond::Lt,
                args: [i, len],
            },
            Type::BOOL,
        );
        self.emit(
            InstData::Branch {
                cond: more,
                then_dest: to(body, vec![]),
                else_dest: to(after, vec![]),
            },
            &[],
        );
        self.cur = body;
        // In bounds: `own` was made as long as `shadow`.
        let load = |array| InstData::Load {
            array,
            index: i,
            checked: false,
        };
        let a = self.emit1(load(shadow), elem);
        let b = self.emit1(load(own), elem);
        let sum = self.bin(BinaryOp::Add, a, b);
        self.emit(
            InstData::Store {
                array: shadow,
                index: i,
                value: sum,
                checked: false,
            },
            &[],
        );
        let one = self.emit1(
            InstData::Const {
                value: Constant::I64(1),
            },
            Type::I64,
        );
        let next = self.bin(BinaryOp::Add, i, one);
        self.emit(
            InstData::Jump {
                dest: to(header, vec![next]),
            },
            &[],
        );
        self.cur = after;
        self.emit(InstData::ArrayFree { array: own }, &[]);
    }

    /// `(y, dy) = jvp_g(x, dx, ...)` becomes `dx += vjp_g(x, ..., adj(dy))`.
    pub(super) fn transpose_call(
        &mut self,
        jvp: FuncId,
        args: &[Value],
        results: &[Value],
    ) -> Result<(), AdError> {
        let span = self.span;
        let src = jvp_source(self.module, jvp).ok_or_else(|| {
            AdError::internal(
                "internal error: a differential call that is not a derivative call",
                span,
            )
        })?;
        let g = self.module.func(src).clone();
        // A split call (`__adc_lin_g`) calls `g`'s reverse half.
        let split_rev = self
            .module
            .func(jvp)
            .name
            .starts_with("__adc_lin_")
            .then(|| crate::ad::split::existing(self.module, &g.name).map(|s| s.rev))
            .flatten();
        let vjp = split_rev
            .or_else(|| crate::ad::existing_derivative(self.module, src))
            .ok_or_else(|| {
                AdError::internal(
                    format!("internal error: no reverse derivative of `{}`", g.name),
                    span,
                )
            })?;
        let mut vargs = Vec::new();
        let mut grad_targets = Vec::new();
        // Read-only array parameters may share elements (docs/arrays.md#the-aliasing-rule:
        // `k(x, x)`), and then so do their shadows; but the callee's
        // reverse derivative writes each shadow as an array of its own
        // (its optimisations keep elements in registers across writes to
        // the other). So a shadow whose array an earlier argument's shadow
        // already is gets a zeroed array of its own, added into the
        // shared one after the call (`merges`).
        let mut shadow_roots = Vec::new();
        let mut merges = Vec::new();
        let mut k = 0;
        for p in &g.params {
            vargs.push(self.p(args[k]));
            k += 1;
            if adc_ir::ad::is_differentiable(p.ty) {
                let t = args[k];
                k += 1;
                match p.ty {
                    Type::Scalar(_) => grad_targets.push(t),
                    _ => {
                        let shadow = self.p(t);
                        let root = self.out.array_root(shadow);
                        if p.mode == ParamMode::In && shadow_roots.contains(&root) {
                            let own = self.own_shadow(shadow, p.ty);
                            merges.push((shadow, own));
                            vargs.push(own);
                        } else {
                            shadow_roots.push(root);
                            vargs.push(shadow);
                        }
                    }
                }
            }
        }
        let n_primal = g.returns.len();
        for &r in &results[n_primal..] {
            let a = match self.take_adjoint(r) {
                Some(a) => a,
                None => self.zero(self.ty(r)),
            };
            vargs.push(a);
        }
        // The reverse half works on this function's tape.
        let lent = split_rev.map(|_| self.emit1(InstData::TapeLend, Type::I64));
        vargs.extend(lent);
        // A callee without float results has a `Const` return in its
        // default reverse spec, so its derivative returns the primal
        // results before the gradients. (An internal derivative may not be
        // transposed yet: its signature comes from its spec.)
        let v = self.module.func(vjp);
        let types = match &v.deriv {
            Some(spec) => adc_ir::ad::spec_signature(&g, spec).1,
            None => v.returns.clone(),
        };
        let grads = self.emit(
            InstData::Call {
                func: vjp,
                args: vargs,
            },
            &types,
        );
        if let Some(tape) = lent {
            self.emit(InstData::TapeReclaim { handle: tape }, &[]);
        }
        for (shadow, own) in merges {
            self.add_into(shadow, own);
        }
        let first_grad = grads.len().saturating_sub(grad_targets.len());
        for (t, gv) in grad_targets
            .into_iter()
            .zip(grads[first_grad..].iter().copied())
        {
            self.accumulate(t, gv);
        }
        Ok(())
    }
}

fn to(block: adc_ir::Block, args: Vec<Value>) -> adc_ir::BlockCall {
    adc_ir::BlockCall { block, args }
}
