//! `linearize`'s one instruction (`Linearizer::inst`): copied, with its
//! tangent or shadow, and the tangents of the binary operators.

use super::{Linearizer, Tan};
use crate::ad::AdError;
use adc_ir::{BinaryOp, CmpCond, InstData, Tag, Type, UnaryOp, Value};

impl Linearizer<'_> {
    pub(super) fn inst(&mut self, inst: adc_ir::Inst) -> Result<(), AdError> {
        let src = self.src;
        let data = src.dfg.inst(inst).clone();
        let results = src.dfg.inst_results(inst).to_vec();
        let rty = results.first().map(|r| src.dfg.value_type(*r));
        let float_result = rty.is_some_and(|t| matches!(t, Type::Scalar(s) if s.is_float()));
        match &data {
            _ if self.needless.contains(&inst) => {
                self.copy(inst);
                for r in &results {
                    let float = src.dfg.value_type(*r).elem().is_float();
                    self.set_tan(*r, if float { Tan::Zero } else { Tan::None });
                }
                return Ok(());
            }
            InstData::Call { func, args } => return self.call(*func, args, &results),
            InstData::Jump { .. } | InstData::Branch { .. } => {
                self.jump_or_branch(&data);
                return Ok(());
            }
            InstData::Return { args } => return self.ret(args),
            // Made only after differentiation (`copy-loops` runs in `opt`).
            InstData::CopyRange { .. } => {
                return Err(AdError::new(
                    "cannot differentiate `copyrange`; differentiate the loop it came from",
                    self.span,
                ))
            }
            InstData::TapePop { .. } | InstData::TapeRead { .. } => {
                return self.tape_read(inst, &data, &results, rty);
            }
            _ => (),
        }
        let out = self.copy(inst);
        let ty = rty.unwrap_or(Type::F64);
        let t = |s: &Self, v: Value| s.tan_of(v);
        let tan = match &data {
            InstData::Const { .. } if float_result => Tan::Zero,
            InstData::Unary {
                op: UnaryOp::Neg,
                arg,
            } if float_result => {
                let a = t(self, *arg);
                self.neg(a, ty)
            }
            InstData::Unary {
                op: UnaryOp::NoDiff,
                ..
            } if float_result => Tan::Zero,
            InstData::Binary { op, args } if float_result => {
                let (x, y) = (self.p(args[0]), self.p(args[1]));
                let (dx, dy) = (t(self, args[0]), t(self, args[1]));
                self.binary(*op, x, y, dx, dy, out[0], ty)
            }
            InstData::Select { cond, args } if float_result => {
                let c = self.p(*cond);
                let (a, b) = (t(self, args[0]), t(self, args[1]));
                self.select(c, a, b, ty)
            }
            InstData::Convert { arg } if float_result => {
                match (src.dfg.value_type(*arg).elem().is_float(), t(self, *arg)) {
                    (true, Tan::Val(d)) => {
                        Tan::Val(self.emit1(InstData::Convert { arg: d }, ty, Tag::Diff))
                    }
                    _ => Tan::Zero,
                }
            }
            InstData::Math { func, args } if float_result => {
                let xs: Vec<Value> = args.iter().map(|a| self.p(*a)).collect();
                let ds: Vec<Tan> = args.iter().map(|a| t(self, *a)).collect();
                self.math_tangent(*func, &xs, &ds, out[0], ty)?
            }
            _ => self.memory_tangent(&data, ty, float_result)?,
        };
        if let Some(r) = results.first() {
            self.set_tan(*r, tan);
        }
        if let (Some(_), Some(&anchor)) = (self.interact, out.first()) {
            self.interactions(&data, anchor);
        }
        Ok(())
    }

    /// A tape pop or read and, for a differentiable value, its tangent
    /// (pushed after it: popped before it, read after it).
    fn tape_read(
        &mut self,
        inst: adc_ir::Inst,
        data: &InstData,
        results: &[Value],
        rty: Option<Type>,
    ) -> Result<(), AdError> {
        // Tangents were pushed after their values.
        let ty = rty.expect("verified: tape reads have a result");
        let has_tan = adc_ir::ad::is_differentiable(ty);
        let pop = matches!(data, InstData::TapePop { .. });
        // An array's shadow is a pointer, hence primal.
        let tag = if matches!(ty, Type::Scalar(_)) {
            Tag::Diff
        } else {
            Tag::Primal
        };
        let mut tv = None;
        if has_tan && pop {
            tv = Some(self.emit1(data.clone(), ty, tag));
        }
        self.copy(inst);
        if has_tan && !pop {
            tv = Some(self.emit1(data.clone(), ty, tag));
        }
        let t = tv.map_or(Tan::None, Tan::Val);
        self.set_tan(results[0], t);
        Ok(())
    }

    /// A jump or branch: to the same blocks, with each float argument
    /// paired with its tangent (`block_call`).
    fn jump_or_branch(&mut self, data: &InstData) {
        match data {
            InstData::Jump { dest } => {
                let dest = self.block_call(dest);
                self.emit(InstData::Jump { dest }, &[], Tag::Mixed);
            }
            InstData::Branch {
                cond,
                then_dest,
                else_dest,
            } => {
                let cond = self.p(*cond);
                let then_dest = self.block_call(then_dest);
                let else_dest = self.block_call(else_dest);
                self.emit(
                    InstData::Branch {
                        cond,
                        then_dest,
                        else_dest,
                    },
                    &[],
                    Tag::Mixed,
                );
            }
            _ => (),
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn binary(
        &mut self,
        op: BinaryOp,
        x: Value,
        y: Value,
        dx: Tan,
        dy: Tan,
        result: Value,
        ty: Type,
    ) -> Tan {
        let st = ty.elem();
        match op {
            BinaryOp::Add => self.add(dx, dy, ty),
            BinaryOp::Sub => {
                let ny = self.neg(dy, ty);
                self.add(dx, ny, ty)
            }
            BinaryOp::Mul => self.sum_scaled(&[(dx, y), (dy, x)], ty),
            BinaryOp::MulZ => {
                // `mulz x, y` is zero wherever `x` is, whatever `y`: there
                // `y`'s tangent contributes nothing (docs/derivatives.md#non-smooth-and-singular-points), but `x`'s still
                // does (`dx * y`). Dropping both when `x` is zero made a
                // forward derivative of a reverse one wrong wherever an
                // adjoint crosses zero (the Hessian of (x^2 - 1)^2 at 1).
                let dyx = if dy == Tan::Zero {
                    Tan::Zero
                } else {
                    let zero = self.fconst(st, 0.0);
                    let is_zero = self.cmp(CmpCond::Eq, x, zero);
                    let dyx = self.scale(dy, x, ty);
                    self.select(is_zero, Tan::Zero, dyx, ty)
                };
                let dxy = self.scale(dx, y, ty);
                self.add(dxy, dyx, ty)
            }
            BinaryOp::Div => {
                if dx == Tan::Zero && dy == Tan::Zero {
                    return Tan::Zero;
                }
                // d(x/y) = (dx - q dy) / y with q = x / y: a division of
                // the tangent by y, not a product with 1 / y, which
                // overflows for a subnormal y where the quotient is finite.
                let qdy = self.scale(dy, result, ty);
                let nq = self.neg(qdy, ty);
                let num = self.add(dx, nq, ty);
                self.divide(num, y, ty)
            }
            BinaryOp::DivZ => {
                // `divz x, y` is zero wherever `x` is, whatever `y` (as
                // `mulz`): there `y`'s tangent contributes nothing, `x`'s
                // still does (`dx / y`).
                let dyq = if dy == Tan::Zero {
                    Tan::Zero
                } else {
                    let zero = self.fconst(st, 0.0);
                    let is_zero = self.cmp(CmpCond::Eq, x, zero);
                    let qdy = self.scale(dy, result, ty);
                    self.select(is_zero, Tan::Zero, qdy, ty)
                };
                let nq = self.neg(dyq, ty);
                let num = self.add(dx, nq, ty);
                self.divide(num, y, ty)
            }
            BinaryOp::Min | BinaryOp::Max => {
                // The tangent of the operand returned (C's `fmin`/`fmax`
                // ignore a NaN operand, so compare with the result, not
                // the operands with each other); ties split evenly (docs/derivatives.md#non-smooth-and-singular-points).
                let is_x = self.cmp(CmpCond::Eq, result, x);
                let is_y = self.cmp(CmpCond::Eq, result, y);
                let half = self.fconst(st, 0.5);
                let sum = self.add(dx, dy, ty);
                let mean = self.scale(sum, half, ty);
                let tie = self.select(is_y, mean, dx, ty);
                self.select(is_x, tie, dy, ty)
            }
            BinaryOp::Rem | BinaryOp::Or => Tan::Zero,
        }
    }
}
