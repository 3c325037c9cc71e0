//! `sin x` and `cos x` of one `x` in one block as one call of the C
//! library's `sincos` (`sincosf` for `float`), as C compilers do: the
//! argument reduction and the polynomial setup are shared, and glibc's
//! `sincos` runs the same code as its `sin` and `cos`, so the results are
//! the same bits (the difftest compares them against the interpreter's
//! `f64::sin`/`cos`). Derivative code makes such pairs all the time: the
//! derivative of `sin x` is `cos x`.
//!
//! Assumes: `x` is defined before the first of the two (verified IR, one
//! block). Guarantees: the first of the pair to be translated calls
//! `sincos` and defines its own result; the other's result is the value it
//! left, used when that instruction is translated.

use super::*;
use adc_ir::Inst;

/// The pairs of a function and the results computed ahead.
#[derive(Default)]
pub(crate) struct SinCos {
    /// The first of each pair in its block, to the second.
    partner: BTreeMap<Inst, Inst>,
    /// Results of second instructions, computed with the first.
    ahead: BTreeMap<Value, clif::Value>,
}

impl SinCos {
    /// The pairs of `func`; none when the module defines a function named
    /// `sincos` or `sincosf` of its own (an import is C's, declared with
    /// its C signature or rejected before codegen).
    pub(crate) fn plan(ir: &adc_ir::Module, func: &adc_ir::Function) -> SinCos {
        let own = |name: &str| ir.find(name).is_some_and(|id| !ir.func(id).is_import());
        if own("sincos") || own("sincosf") {
            return SinCos::default();
        }
        let mut partner = BTreeMap::new();
        for &blk in &func.layout {
            // Per argument, the first unpaired `sin` and `cos`.
            let mut open: BTreeMap<(Value, bool), Inst> = BTreeMap::new();
            for &i in &func.dfg.block(blk).insts {
                let InstData::Math {
                    func: f @ (MathFunc::Sin | MathFunc::Cos),
                    args,
                } = func.dfg.inst(i)
                else {
                    continue;
                };
                let (x, is_sin) = (args[0], matches!(f, MathFunc::Sin));
                if !func.dfg.value_type(x).elem().is_float() {
                    continue;
                }
                match open.remove(&(x, !is_sin)) {
                    Some(first) => {
                        partner.insert(first, i);
                    }
                    None => {
                        open.entry((x, is_sin)).or_insert(i);
                    }
                }
            }
        }
        SinCos {
            partner,
            ahead: BTreeMap::new(),
        }
    }
}

impl<M: Module> FuncTranslator<'_, '_, M> {
    /// The result of `sin`/`cos` instruction `inst` of `x` when it is one
    /// of a pair: computed ahead with its partner, or computed now with it
    /// (the partner's result kept for later). `None` otherwise.
    pub(super) fn sincos_result(
        &mut self,
        inst: Inst,
        func: MathFunc,
        x: Value,
    ) -> Result<Option<clif::Value>, CodegenError> {
        let result = self.func.dfg.inst_results(inst)[0];
        if let Some(v) = self.sincos.ahead.remove(&result) {
            return Ok(Some(v));
        }
        let Some(&second) = self.sincos.partner.get(&inst) else {
            return Ok(None);
        };
        let ty = self.scalar_ty(x);
        let t = scalar_clif(ty);
        let size = t.bytes();
        let slot = self.b.create_sized_stack_slot(StackSlotData::new(
            StackSlotKind::ExplicitSlot,
            2 * size,
            3,
        ));
        let (sin_at, cos_at) = (
            self.b.ins().stack_addr(PTR, slot, 0),
            self.b.ins().stack_addr(PTR, slot, size as i32),
        );
        let name = match ty {
            ScalarType::F32 => "sincosf",
            _ => "sincos",
        };
        let arg = self.v(x);
        self.call_symbol(name, &[t, PTR, PTR], &[], &[arg, sin_at, cos_at])?;
        let sin = self.b.ins().load(t, TRUSTED, sin_at, 0);
        let cos = self.b.ins().load(t, TRUSTED, cos_at, 0);
        let (own, other) = if matches!(func, MathFunc::Sin) {
            (sin, cos)
        } else {
            (cos, sin)
        };
        let second_result = self.func.dfg.inst_results(second)[0];
        self.sincos.ahead.insert(second_result, other);
        Ok(Some(own))
    }
}
