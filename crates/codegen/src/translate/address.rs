//! Element addresses: `ptr + index * size`, with the index's constant
//! part folded into the access's displacement and, in a one-block loop,
//! the part defined outside the loop added first so Cranelift hoists it
//! (`split_elem_addr`).

use super::FuncTranslator;
use crate::CodegenError;
use adc_ir::{InstData, Value};
use cranelift_codegen::ir::condcodes::IntCC;
use cranelift_codegen::ir::{self as clif, InstBuilder};
use cranelift_module::Module;

impl<M: Module> FuncTranslator<'_, '_, M> {
    pub(crate) fn elem_addr(
        &mut self,
        inst: adc_ir::Inst,
        array: Value,
        index: Value,
        checked: bool,
    ) -> Result<clif::Value, CodegenError> {
        let arr = self.vs(array);
        let idx = self.v(index);
        if checked {
            let oob = self
                .b
                .ins()
                .icmp(IntCC::UnsignedGreaterThanOrEqual, idx, arr[1]);
            self.check(oob, inst, "index out of bounds")?;
        }
        let size = self.func.dfg.value_type(array).elem().size() as i64;
        if !checked {
            if let Some(addr) = self.split_elem_addr(arr[0], index, size) {
                return Ok(addr);
            }
        }
        let off = self.b.ins().imul_imm_s(idx, size);
        Ok(self.b.ins().iadd(arr[0], off))
    }

    /// The address of element `index` of an unchecked access, without its
    /// arithmetic: `ptr + x * size + k * size` when `index` is `x + k` for
    /// a constant `k` (through a chain of `add`s and `sub`s,
    /// `adc_ir::offset`; the constant folds into the access's displacement); else,
    /// for `index = a + b`,
    /// `(ptr + a * size) + b * size` when `a` comes from outside the
    /// current block and `b` from inside it, or the other way round (in a
    /// loop the first sum is invariant, Cranelift hoists it, and the rest
    /// folds into the access's addressing mode), with `b = x + k` split
    /// the same way, when the current block is a loop of its own.
    fn split_elem_addr(
        &mut self,
        ptr: clif::Value,
        index: Value,
        size: i64,
    ) -> Option<clif::Value> {
        if let Some((x, k)) = constant_offset(self.func, index) {
            let x = self.v(x);
            let off = self.b.ins().imul_imm_s(x, size);
            let addr = self.b.ins().iadd(ptr, off);
            return Some(self.b.ins().iadd_imm_s(addr, k.checked_mul(size)?));
        }
        // Only in a one-block loop: elsewhere the sum is rarely hoisted, and
        // a base per access only adds to the register pressure.
        if !self.cur_self_loop {
            return None;
        }
        let [a, b] = self.add_operands(index)?;
        let (outer, inner) = match (self.defined_here(a), self.defined_here(b)) {
            (false, true) => (a, b),
            (true, false) => (b, a),
            _ => return None,
        };
        let (x, k) = constant_offset(self.func, inner).unwrap_or((inner, 0));
        let disp = k.checked_mul(size)?;
        let (outer, x) = (self.v(outer), self.v(x));
        let outer_off = self.b.ins().imul_imm_s(outer, size);
        let base = self.b.ins().iadd(ptr, outer_off);
        let inner_off = self.b.ins().imul_imm_s(x, size);
        let addr = self.b.ins().iadd(base, inner_off);
        Some(match disp {
            0 => addr,
            _ => self.b.ins().iadd_imm_s(addr, disp),
        })
    }

    /// The operands of `v` when it is an integer `add`.
    fn add_operands(&self, v: Value) -> Option<[Value; 2]> {
        match super::def_data(self.func, v)? {
            InstData::Binary {
                op: adc_ir::BinaryOp::Add,
                args,
            } => Some(*args),
            _ => None,
        }
    }

    /// Whether `v` is a parameter or result of the block being translated.
    fn defined_here(&self, v: Value) -> bool {
        match self.func.dfg.value_def(v) {
            adc_ir::ValueDef::Param(b, _) => b == self.cur_block,
            adc_ir::ValueDef::Result(i, _) => self.inst_block[i.index()] == Some(self.cur_block),
            adc_ir::ValueDef::Unused => false,
        }
    }
}

/// `v` as `x + k` through a chain of constant `add`s and `sub`s, when it
/// is one (`adc_ir::offset`).
fn constant_offset(func: &adc_ir::Function, v: Value) -> Option<(Value, i64)> {
    let (x, k) = adc_ir::offset::offset_through_chain(func, v);
    (x != v).then_some((x, k))
}
