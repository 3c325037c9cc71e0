//! One IR instruction to Cranelift instructions (`FuncTranslator::inst`),
//! with the arithmetic, conversions and math calls it uses. Tape pushes and
//! pops, views, copies and homes have files of their own.

use super::*;

impl<M: Module> FuncTranslator<'_, '_, M> {
    pub(super) fn inst(&mut self, inst: adc_ir::Inst) -> Result<(), CodegenError> {
        let data = self.func.dfg.inst(inst).clone();
        let result_ty = self
            .func
            .dfg
            .inst_results(inst)
            .first()
            .map(|r| self.func.dfg.value_type(*r));
        let out: Vec<clif::Value> = match &data {
            InstData::Const { value } => vec![match *value {
                Constant::Bool(x) => self.b.ins().iconst(types::I8, x as i64),
                Constant::I64(x) => self.b.ins().iconst(types::I64, x),
                Constant::F32(x) => self.b.ins().f32const(x),
                Constant::F64(x) => self.b.ins().f64const(x),
            }],
            InstData::Unary { op, arg } => vec![self.unary(*op, *arg)],
            InstData::Binary { op, args } => {
                let (x, y) = (self.v(args[0]), self.v(args[1]));
                let float = self.scalar_ty(args[0]).is_float();
                vec![self.binary(inst, *op, float, x, y)?]
            }
            InstData::Cmp { cond, args } => vec![self.cmp(*cond, *args)],
            InstData::Select { cond, args } => {
                let (c, x, y) = (self.v(*cond), self.v(args[0]), self.v(args[1]));
                // The IR's `a && b` and `a || b` on booleans (0 or 1): one
                // `and` or `or` instead of a test and a conditional move.
                vec![match (
                    bool_const(self.func, args[0]),
                    bool_const(self.func, args[1]),
                ) {
                    (_, Some(false)) if is_bool(self.func, args[0]) => self.b.ins().band(c, x),
                    (Some(true), _) if is_bool(self.func, args[1]) => self.b.ins().bor(c, y),
                    _ => self.b.ins().select(c, x, y),
                }]
            }
            InstData::Convert { arg } => {
                let to = result_ty.map(|t| t.elem()).unwrap_or(ScalarType::F64);
                let x = self.v(*arg);
                vec![self.convert(x, self.scalar_ty(*arg), to)]
            }
            InstData::Math { func, args } => {
                if let Some(v) = self.sincos_result(inst, *func, args[0])? {
                    self.def(inst, vec![v]);
                    return Ok(());
                }
                let xs: Vec<clif::Value> = args.iter().map(|a| self.v(*a)).collect();
                let ty = self.scalar_ty(args[0]);
                vec![self.math(*func, ty, &xs)?]
            }
            InstData::Call { func, args } => self.call(*func, args)?,
            InstData::ArrayLen { array } => vec![self.vs(*array)[1]],
            InstData::Load {
                array,
                index,
                checked,
            } => {
                let addr = self.elem_addr(inst, *array, *index, *checked)?;
                let ty = scalar_clif(self.func.dfg.value_type(*array).elem());
                vec![self.b.ins().load(ty, TRUSTED, addr, 0)]
            }
            InstData::Store {
                array,
                index,
                value,
                checked,
            } => {
                let addr = self.elem_addr(inst, *array, *index, *checked)?;
                let x = self.v(*value);
                self.b.ins().store(TRUSTED, x, addr, 0);
                vec![]
            }
            InstData::ElemRef { array, index } => vec![self.elem_addr(inst, *array, *index, true)?],
            InstData::RefLoad { ptr } => {
                let ty = scalar_clif(self.func.dfg.value_type(*ptr).elem());
                let p = self.v(*ptr);
                vec![self.b.ins().load(ty, TRUSTED, p, 0)]
            }
            InstData::RefStore { ptr, value } => {
                let (p, x) = (self.v(*ptr), self.v(*value));
                self.b.ins().store(TRUSTED, x, p, 0);
                vec![]
            }
            InstData::Slot => vec![self.slot()],
            InstData::ArrayNew { .. }
                if self
                    .stack_arrays
                    .contains_key(&self.func.dfg.inst_results(inst)[0]) =>
            {
                self.stack_array_new(inst)
            }
            InstData::ArrayNew { len, zeroed } => {
                let n = self.v(*len);
                let neg = self.b.ins().icmp_imm_s(IntCC::SignedLessThan, n, 0);
                self.check(neg, inst, "negative array length")?;
                let size = result_ty.map(|t| t.elem().size()).unwrap_or(8) as i64;
                vec![self.alloc(inst, n, size, *zeroed)?, n]
            }
            InstData::ArrayCopy { array } => self.array_copy(inst, *array)?,
            InstData::ArrayView { array, lo, hi } => self.array_view(inst, [*array, *lo, *hi])?,
            InstData::AliasCheck { args } => {
                self.alias_check(inst, *args)?;
                vec![]
            }
            InstData::CopyRange {
                dst,
                dst_index,
                src,
                src_index,
                count,
            } => {
                self.copy_range(inst, [*dst, *dst_index, *src, *src_index, *count])?;
                vec![]
            }
            InstData::PairMake { args } => vec![self.v(args[0]), self.v(args[1])],
            InstData::PairPrimal { pair } => vec![self.vs(*pair)[0]],
            InstData::PairDiff { pair } => vec![self.vs(*pair)[1]],
            InstData::LenCheck { args, what } => {
                // `lencheck n, b` (vector mode) compares with a length.
                let first = self.vs(args[0]);
                let a = match first.as_slice() {
                    [n] => *n,
                    pair => pair[1],
                };
                let b = self.vs(args[1])[1];
                if *what == adc_ir::LenCheckOf::Index {
                    let oob = self.b.ins().icmp(IntCC::UnsignedGreaterThanOrEqual, a, b);
                    self.check(oob, inst, what.message())?;
                } else if what.at_least() {
                    let short = self.b.ins().icmp(IntCC::SignedLessThan, b, a);
                    self.check_needing(short, inst, *what, [a, b])?;
                } else {
                    let differ = self.b.ins().icmp(IntCC::NotEqual, a, b);
                    if what.placeholders().is_empty() {
                        self.check(differ, inst, what.message())?;
                    } else {
                        self.check_needing(differ, inst, *what, [a, b])?;
                    }
                }
                vec![]
            }
            // A marker for the derivative passes.
            InstData::LoopCheckpoint { .. } => vec![],
            InstData::DeferFree { array } | InstData::ArrayFree { array }
                if self.quiet_frees.contains(array) =>
            {
                vec![]
            }
            InstData::DeferFree { array } => {
                let p = self.vs(*array)[0];
                self.defer_free(inst, p)?;
                vec![]
            }
            InstData::TapePush { .. }
            | InstData::TapeLend
            | InstData::TapeReclaim { .. }
            | InstData::TapeAdopt { .. }
            | InstData::TapeGive { .. }
            | InstData::TapePop { .. }
            | InstData::TapeRead { .. } => self.tape_inst(inst, &data, result_ty)?,
            InstData::ArrayFree { array } => {
                let p = self.vs(*array)[0];
                self.call_symbol("free", &[PTR], &[], &[p])?;
                vec![]
            }
            InstData::ArrayNull => {
                let z = self.b.ins().iconst(PTR, 0);
                let l = self.b.ins().iconst(types::I64, 0);
                vec![z, l]
            }
            InstData::Print { args } => self.print(args)?,
            InstData::Jump { .. } | InstData::Branch { .. } => self.jump_or_branch(&data),
            InstData::Return { args } => self.ret(args)?,
        };
        self.def(inst, out);
        Ok(())
    }

    fn binary(
        &mut self,
        inst: adc_ir::Inst,
        op: BinaryOp,
        float: bool,
        x: clif::Value,
        y: clif::Value,
    ) -> Result<clif::Value, CodegenError> {
        Ok(match (op, float) {
            (BinaryOp::Add, true) => self.b.ins().fadd(x, y),
            (BinaryOp::Add, false) => self.b.ins().iadd(x, y),
            (BinaryOp::Sub, true) => self.b.ins().fsub(x, y),
            (BinaryOp::Sub, false) => self.b.ins().isub(x, y),
            (BinaryOp::Mul, true) => self.b.ins().fmul(x, y),
            (BinaryOp::Mul | BinaryOp::MulZ, false) => self.b.ins().imul(x, y),
            (BinaryOp::MulZ | BinaryOp::DivZ, true) => {
                let result = self.func.dfg.inst_results(inst)[0];
                let on_recurrence =
                    crate::translate::strong_zero::is_recurrent(&self.recurrent, result);
                let divide = op == BinaryOp::DivZ;
                crate::translate::strong_zero::lower(&mut self.b, x, y, divide, on_recurrence)
            }
            (BinaryOp::Div, true) => self.b.ins().fdiv(x, y),
            // The verifier rejects float `rem` (the language has `fmod`);
            // should it ever reach here, it means C's `fmod`.
            (BinaryOp::Rem, true) => {
                let ty = if self.b.func.dfg.value_type(x) == types::F32 {
                    ScalarType::F32
                } else {
                    ScalarType::F64
                };
                self.math(MathFunc::Fmod, ty, &[x, y])?
            }
            // The verifier rejects an integer `divz`.
            (BinaryOp::Div | BinaryOp::DivZ | BinaryOp::Rem, false) => {
                let zero = self.b.ins().icmp_imm_s(IntCC::Equal, y, 0);
                self.check(zero, inst, "division by zero")?;
                // x / -1 wraps (INT_MIN / -1 == INT_MIN) instead of trapping.
                let minus_one = self.b.ins().icmp_imm_s(IntCC::Equal, y, -1);
                let one = self.b.ins().iconst(types::I64, 1);
                let safe = self.b.ins().select(minus_one, one, y);
                if op != BinaryOp::Rem {
                    let q = self.b.ins().sdiv(x, safe);
                    let neg = self.b.ins().ineg(x);
                    self.b.ins().select(minus_one, neg, q)
                } else {
                    let r = self.b.ins().srem(x, safe);
                    let z = self.b.ins().iconst(types::I64, 0);
                    self.b.ins().select(minus_one, z, r)
                }
            }
            (BinaryOp::Or, false) => self.b.ins().bor(x, y),
            // The verifier rejects a float `or`.
            (BinaryOp::Or, true) => x,
            (BinaryOp::Min, false) => self.b.ins().smin(x, y),
            (BinaryOp::Max, false) => self.b.ins().smax(x, y),
            // C's `fmin`/`fmax` (docs/language.md#built-in-functions): a NaN operand is ignored,
            // so `y` wins when `x` is NaN; otherwise ties give `x`.
            (BinaryOp::Min | BinaryOp::Max, true) => {
                let cc = if op == BinaryOp::Min {
                    FloatCC::LessThan
                } else {
                    FloatCC::GreaterThan
                };
                // Two compare-and-selects (each one `ucomisd` and `cmov`),
                // not a combined condition, which cost kmeans' nearest-
                // centre loop 17%.
                let better = self.b.ins().fcmp(cc, y, x);
                let r = self.b.ins().select(better, y, x);
                let x_nan = self.b.ins().fcmp(FloatCC::Unordered, x, x);
                self.b.ins().select(x_nan, y, r)
            }
        })
    }

    fn convert(&mut self, x: clif::Value, from: ScalarType, to: ScalarType) -> clif::Value {
        use ScalarType::*;
        match (from, to) {
            (a, b) if a == b => x,
            (I64, F32 | F64) => self.b.ins().fcvt_from_sint(scalar_clif(to), x),
            (F32 | F64, I64) => self.b.ins().fcvt_to_sint_sat(types::I64, x),
            (F32, F64) => self.b.ins().fpromote(types::F64, x),
            (F64, F32) => self.b.ins().fdemote(types::F32, x),
            (Bool, I64) => self.b.ins().uextend(types::I64, x),
            (Bool, F32 | F64) => {
                let i = self.b.ins().uextend(types::I64, x);
                self.b.ins().fcvt_from_sint(scalar_clif(to), i)
            }
            (I64, Bool) => self.b.ins().icmp_imm_s(IntCC::NotEqual, x, 0),
            (F32 | F64, Bool) => {
                let z = zero(&mut self.b, scalar_clif(from));
                self.b.ins().fcmp(FloatCC::NotEqual, x, z)
            }
            _ => x,
        }
    }

    fn math(
        &mut self,
        func: MathFunc,
        ty: ScalarType,
        xs: &[clif::Value],
    ) -> Result<clif::Value, CodegenError> {
        let x = xs[0];
        Ok(match (func, ty) {
            (MathFunc::Abs, ScalarType::I64) => self.b.ins().iabs(x),
            (MathFunc::Abs, _) => self.b.ins().fabs(x),
            (MathFunc::Sqrt, _) => self.b.ins().sqrt(x),
            (MathFunc::Floor, _) => self.b.ins().floor(x),
            (MathFunc::Ceil, _) => self.b.ins().ceil(x),
            (MathFunc::Trunc, _) => self.b.ins().trunc(x),
            // Cranelift's x86-64 back end calls C's `fma` where the machine
            // has no FMA instructions (`contract` makes `fma` only where it
            // has them).
            (MathFunc::Fma, _) => self.b.ins().fma(x, xs[1], xs[2]),
            _ => {
                let t = scalar_clif(ty);
                let params = vec![t; xs.len()];
                self.call_symbol(&func.libm_symbol(ty), &params, &[t], xs)?[0]
            }
        })
    }

    /// A comparison: ordered for floats, signed for integers.
    fn cmp(&mut self, cond: CmpCond, args: [Value; 2]) -> clif::Value {
        let (x, y) = (self.v(args[0]), self.v(args[1]));
        if self.scalar_ty(args[0]).is_float() {
            let cc = match cond {
                CmpCond::Eq => FloatCC::Equal,
                CmpCond::Ne => FloatCC::NotEqual,
                CmpCond::Lt => FloatCC::LessThan,
                CmpCond::Le => FloatCC::LessThanOrEqual,
                CmpCond::Gt => FloatCC::GreaterThan,
                CmpCond::Ge => FloatCC::GreaterThanOrEqual,
            };
            self.b.ins().fcmp(cc, x, y)
        } else {
            let cc = match cond {
                CmpCond::Eq => IntCC::Equal,
                CmpCond::Ne => IntCC::NotEqual,
                CmpCond::Lt => IntCC::SignedLessThan,
                CmpCond::Le => IntCC::SignedLessThanOrEqual,
                CmpCond::Gt => IntCC::SignedGreaterThan,
                CmpCond::Ge => IntCC::SignedGreaterThanOrEqual,
            };
            self.b.ins().icmp(cc, x, y)
        }
    }

    /// A call: the context pointer and a return area for a function of
    /// ours, the C ABI for an import; then the error check after ours.
    fn call(
        &mut self,
        func: adc_ir::FuncId,
        args: &[Value],
    ) -> Result<Vec<clif::Value>, CodegenError> {
        let callee = self.ir.func(func);
        let mut cargs = Vec::new();
        if !callee.is_import() {
            cargs.push(self.ctx_ptr);
        }
        let area = if !callee.is_import() && uses_return_area(callee) {
            let size = 8 * callee.returns.len() as u32;
            let slot = self.b.create_sized_stack_slot(StackSlotData::new(
                StackSlotKind::ExplicitSlot,
                size,
                3,
            ));
            let addr = self.b.ins().stack_addr(PTR, slot, 0);
            cargs.push(addr);
            Some(addr)
        } else {
            None
        };
        for a in args {
            cargs.extend(self.vs(*a));
        }
        let fid = self.syms.func(func.index());
        let fref = self.m.declare_func_in_func(fid, self.b.func);
        let mut results = if callee.is_import() {
            super::c_abi::call_extern(&mut self.b, fref, callee, cargs)
        } else {
            let call = self.b.ins().call(fref, &cargs);
            self.b.inst_results(call).to_vec()
        };
        if let Some(addr) = area {
            results = callee
                .returns
                .iter()
                .enumerate()
                .map(|(i, r)| {
                    self.b
                        .ins()
                        .load(scalar_clif(r.elem()), TRUSTED, addr, (i * 8) as i32)
                })
                .collect();
        }
        if !callee.is_import() {
            let msg = self.b.ins().load(PTR, TRUSTED, self.ctx_ptr, 0);
            let exit = self.error_exit();
            let ok = self.b.create_block();
            self.b.ins().brif(msg, exit, &[], ok, &[]);
            self.b.switch_to_block(ok);
        }
        Ok(results)
    }

    /// An 8-byte stack slot, zeroed.
    fn slot(&mut self) -> clif::Value {
        let slot =
            self.b
                .create_sized_stack_slot(StackSlotData::new(StackSlotKind::ExplicitSlot, 8, 3));
        // A slot holds zero when its instruction executes (as in
        // the interpreter): derivative code relies on it, a shadow
        // slot being its own adjoint store.
        let zero = self.b.ins().iconst(types::I64, 0);
        let addr = self.b.ins().stack_addr(PTR, slot, 0);
        self.b.ins().store(TRUSTED, zero, addr, 0);
        addr
    }

    /// An array of constant length that lives on the stack
    /// (`stack_arrays.rs` chose it).
    fn stack_array_new(&mut self, inst: adc_ir::Inst) -> Vec<clif::Value> {
        let r = self.func.dfg.inst_results(inst)[0];
        let n = self.stack_arrays[&r];
        let size = i64::from(self.func.dfg.value_type(r).elem().size());
        // Whole 8-byte words, zeroed at every execution (unless `new.uninit`).
        let words = (n.max(1) * size + 7) / 8;
        let zeroed = !matches!(
            self.func.dfg.inst(inst),
            InstData::ArrayNew { zeroed: false, .. }
        );
        let slot = self.b.create_sized_stack_slot(StackSlotData::new(
            StackSlotKind::ExplicitSlot,
            (words * 8) as u32,
            3,
        ));
        let p = self.b.ins().stack_addr(PTR, slot, 0);
        let z = self.b.ins().iconst(types::I64, 0);
        for k in 0..if zeroed { words } else { 0 } {
            self.b.ins().store(TRUSTED, z, p, (8 * k) as i32);
        }
        vec![p, self.b.ins().iconst(types::I64, n)]
    }

    /// `print`: one runtime call per argument, then the line's end.
    fn print(&mut self, args: &[Value]) -> Result<Vec<clif::Value>, CodegenError> {
        for (i, a) in args.iter().enumerate() {
            let ty = self.scalar_ty(*a);
            let name = format!("adc_rt_print_{}", ty.name());
            let first = self.b.ins().iconst(types::I8, (i == 0) as i64);
            let x = self.v(*a);
            self.call_symbol(&name, &[scalar_clif(ty), types::I8], &[], &[x, first])?;
        }
        self.call_symbol("adc_rt_print_end", &[], &[], &[])?;
        Ok(vec![])
    }

    /// A return: the tape released, the values in the return area when
    /// the function has one, else in registers.
    fn ret(&mut self, args: &[Value]) -> Result<Vec<clif::Value>, CodegenError> {
        let vals: Vec<clif::Value> = args.iter().flat_map(|a| self.vs(*a)).collect();
        self.release_tape()?;
        match self.ret_area {
            Some(area) => {
                for (i, v) in vals.iter().enumerate() {
                    self.b.ins().store(TRUSTED, *v, area, (i * 8) as i32);
                }
                self.b.ins().return_(&[]);
            }
            None => {
                self.b.ins().return_(&vals);
            }
        }
        Ok(vec![])
    }

    /// Tape pushes, pops and reads, and the hand-over of a tape between
    /// the forward and reverse halves of split mode.
    fn tape_inst(
        &mut self,
        inst: adc_ir::Inst,
        data: &InstData,
        result_ty: Option<Type>,
    ) -> Result<Vec<clif::Value>, CodegenError> {
        Ok(match data {
            InstData::TapePush { value, tape } => {
                let words = self.vs(*value);
                self.tape_push(inst, *tape, &words)?;
                vec![]
            }
            InstData::TapeLend => vec![self.tape_lend()],
            InstData::TapeReclaim { handle } | InstData::TapeAdopt { handle } => {
                let h = self.vs(*handle)[0];
                // This call's own lending words hold its deferred list.
                let own = matches!(self.func.dfg.value_def(*handle), adc_ir::ValueDef::Result(i, _)
                    if matches!(self.func.dfg.inst(i), InstData::TapeLend));
                self.tape_take_over(h, own);
                vec![]
            }
            InstData::TapeGive { handle } => {
                let h = self.vs(*handle)[0];
                self.tape_give(h);
                vec![]
            }
            InstData::TapePop { tape } | InstData::TapeRead { tape } => {
                let ty = result_ty.expect("invariant: the verifier gives tape reads a result");
                self.tape_take(ty, *tape, matches!(data, InstData::TapePop { .. }))
            }
            _ => unreachable!("invariant: `inst` passes tape instructions only"),
        })
    }

    /// A jump or a conditional branch, with the target blocks' arguments.
    fn jump_or_branch(&mut self, data: &InstData) -> Vec<clif::Value> {
        match data {
            InstData::Jump { dest } => {
                let args = self.block_args(dest);
                let target = self.blocks[&dest.block];
                self.b.ins().jump(target, &args);
                vec![]
            }
            InstData::Branch {
                cond,
                then_dest,
                else_dest,
            } => {
                let c = self.v(*cond);
                let (ta, ea) = (self.block_args(then_dest), self.block_args(else_dest));
                let (tb, eb) = (self.blocks[&then_dest.block], self.blocks[&else_dest.block]);
                self.b.ins().brif(c, tb, &ta, eb, &ea);
                vec![]
            }
            _ => unreachable!("invariant: `inst` passes jumps and branches only"),
        }
    }

    fn unary(&mut self, op: UnaryOp, arg: Value) -> clif::Value {
        let x = self.v(arg);
        match (op, self.scalar_ty(arg)) {
            (UnaryOp::Not, _) => self.b.ins().bxor_imm_u(x, 1),
            (UnaryOp::Neg, ScalarType::F32 | ScalarType::F64) => self.b.ins().fneg(x),
            (UnaryOp::Neg, _) => self.b.ins().ineg(x),
            (UnaryOp::NoDiff, _) => x,
        }
    }
}

/// `v`'s value when it is a boolean constant.
fn bool_const(func: &adc_ir::Function, v: adc_ir::Value) -> Option<bool> {
    match func.dfg.value_def(v) {
        adc_ir::ValueDef::Result(i, _) => match func.dfg.inst(i) {
            InstData::Const {
                value: adc_ir::Constant::Bool(b),
            } => Some(*b),
            _ => None,
        },
        _ => None,
    }
}

fn is_bool(func: &adc_ir::Function, v: adc_ir::Value) -> bool {
    func.dfg.value_type(v) == adc_ir::Type::BOOL
}
