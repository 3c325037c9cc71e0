//! Array views and the aliasing check (docs/language.md#types, docs/arrays.md#the-aliasing-rule).
//!
//! An array is a (pointer, length) pair, so `view a, lo, hi` is pointer
//! arithmetic after one bounds check, and `aliascheck a, b` compares the
//! two byte ranges.

use crate::translate::FuncTranslator;
use crate::CodegenError;
use cranelift_codegen::ir::{self as clif, condcodes::IntCC, InstBuilder};
use cranelift_module::Module;

impl<M: Module> FuncTranslator<'_, '_, M> {
    /// `view a, lo, hi`: `(ptr + lo * size, hi - lo)`, a runtime error
    /// unless `0 <= lo <= hi <= len`.
    pub(crate) fn array_view(
        &mut self,
        inst: adc_ir::Inst,
        [array, lo, hi]: [adc_ir::Value; 3],
    ) -> Result<Vec<clif::Value>, CodegenError> {
        let a = self.vs(array);
        let (lo, hi) = (self.v(lo), self.v(hi));
        // Unsigned: `hi <= len` makes `hi` non-negative (len is), and then
        // `lo <= hi` makes `lo` non-negative too.
        let past_end = self.b.ins().icmp(IntCC::UnsignedGreaterThan, hi, a[1]);
        let reversed = self.b.ins().icmp(IntCC::UnsignedGreaterThan, lo, hi);
        let bad = self.b.ins().bor(past_end, reversed);
        self.check(bad, inst, "array view out of bounds")?;
        let size = self.func.dfg.value_type(array).elem().size() as i64;
        let off = self.b.ins().imul_imm_s(lo, size);
        let ptr = self.b.ins().iadd(a[0], off);
        let len = self.b.ins().isub(hi, lo);
        Ok(vec![ptr, len])
    }

    /// `aliascheck a, b`: a runtime error when the arrays share an element
    /// (both non-empty and their byte ranges intersect).
    pub(crate) fn alias_check(
        &mut self,
        inst: adc_ir::Inst,
        args: [adc_ir::Value; 2],
    ) -> Result<(), CodegenError> {
        let mut start = Vec::new();
        let mut end = Vec::new();
        for v in args {
            let a = self.vs(v);
            let size = self.func.dfg.value_type(v).elem().size() as i64;
            let bytes = self.b.ins().imul_imm_s(a[1], size);
            start.push(a[0]);
            end.push(self.b.ins().iadd(a[0], bytes));
        }
        // [s0, e0) and [s1, e1) share a byte when each starts before the
        // other ends and neither is empty.
        let ult = IntCC::UnsignedLessThan;
        let a_before_b_ends = self.b.ins().icmp(ult, start[0], end[1]);
        let b_before_a_ends = self.b.ins().icmp(ult, start[1], end[0]);
        let a_nonempty = self.b.ins().icmp(ult, start[0], end[0]);
        let b_nonempty = self.b.ins().icmp(ult, start[1], end[1]);
        let cross = self.b.ins().band(a_before_b_ends, b_before_a_ends);
        let nonempty = self.b.ins().band(a_nonempty, b_nonempty);
        let overlap = self.b.ins().band(cross, nonempty);
        self.check(overlap, inst, "arguments alias")
    }
}
