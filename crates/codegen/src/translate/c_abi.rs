//! How adc's values meet the C ABI (docs/embedding.md#the-c-signature-of-a-function):
//! tuples as C structs (their layout, and whether they come back in
//! registers or through a hidden pointer), the signature an `extern` is
//! called with and the calls themselves (C `int`s of the math library
//! narrowed and widened), and the C type of each scalar. The exported
//! wrappers (`wrappers.rs`) and the C header use the same rules.

use super::{abi_param, clif_types, scalar_clif, PTR, TRUSTED};
use adc_ir::ScalarType;
use cranelift_codegen::ir::{
    self as clif, types, AbiParam, ArgumentPurpose, InstBuilder, StackSlotData, StackSlotKind,
};
use cranelift_frontend::FunctionBuilder;
use cranelift_module::Module;

/// The C layout of a tuple struct: (offset of each field, size).
///
/// ```
/// # use adc_ir::ScalarType;
/// let (offsets, size) = adc_codegen::tuple_layout(&[ScalarType::Bool, ScalarType::F64, ScalarType::F32]);
/// assert_eq!(offsets, [0, 8, 16]);
/// assert_eq!(size, 24);
/// ```
pub fn tuple_layout(fields: &[ScalarType]) -> (Vec<u32>, u32) {
    let mut off: u32 = 0;
    let mut offsets = Vec::new();
    let mut align = 1;
    for f in fields {
        let s = f.size();
        off = off.div_ceil(s) * s;
        offsets.push(off);
        off += s;
        align = align.max(s);
    }
    (offsets, off.div_ceil(align) * align)
}

pub(crate) enum TupleReturn {
    /// Eightbytes returned in registers, each integer (`I64`) or SSE (`F64`).
    Registers(Vec<clif::Type>),
    Memory,
}

pub(crate) fn classify(fields: &[ScalarType]) -> TupleReturn {
    let (offsets, size) = tuple_layout(fields);
    if size > 16 {
        return TupleReturn::Memory;
    }
    let words = size.div_ceil(8) as usize;
    let mut classes = vec![types::F64; words];
    for (f, off) in fields.iter().zip(offsets) {
        if !f.is_float() {
            classes[(off / 8) as usize] = types::I64;
        }
    }
    TupleReturn::Registers(classes)
}

pub(crate) fn c_signature<M: Module>(m: &M, func: &adc_ir::Function) -> clif::Signature {
    let mut sig = m.make_signature();
    let scalars: Vec<ScalarType> = func.returns.iter().map(|t| t.elem()).collect();
    if func.returns.len() > 1 {
        match classify(&scalars) {
            TupleReturn::Registers(words) => {
                sig.returns.extend(words.into_iter().map(AbiParam::new))
            }
            TupleReturn::Memory => {
                // Cranelift returns the hidden pointer in `rax` itself.
                sig.params
                    .push(AbiParam::special(PTR, ArgumentPurpose::StructReturn));
            }
        }
    } else {
        for r in &func.returns {
            sig.returns
                .extend(clif_types(*r).into_iter().map(abi_param));
        }
    }
    for p in &func.params {
        sig.params
            .extend(clif_types(p.ty).into_iter().map(abi_param));
    }
    sig
}

/// The signature an `extern` is called with: the C ABI (docs/embedding.md#the-c-signature-of-a-function), tuples as C
/// structs (the same rules as the wrappers' `c_signature`).
pub(crate) fn extern_signature<M: Module>(m: &M, func: &adc_ir::Function) -> clif::Signature {
    if func.returns.len() > 1 {
        return c_signature(m, func);
    }
    let mut sig = super::impl_signature(m, func, false);
    let (params, result) = c_int_positions(func);
    for k in params {
        sig.params[k] = AbiParam::new(types::I32).sext();
    }
    if result {
        sig.returns[0] = AbiParam::new(types::I32).sext();
    }
    sig
}

/// The math library's functions whose C signature has an `int` (32 bits)
/// where `.ad` declares an `int` (64 bits): which parameters, and whether
/// the result. A call narrows those arguments and sign-extends the result
/// (`ilogb(0.5)` read as 4294967295 before).
pub(crate) fn c_int_positions(func: &adc_ir::Function) -> (Vec<usize>, bool) {
    let (params, result): (&[usize], bool) = match func.name.as_str() {
        "ilogb" | "ilogbf" | "finite" | "finitef" | "isinf" | "isinff" | "isnan" | "isnanf" => {
            (&[], true)
        }
        "ldexp" | "ldexpf" | "scalbn" | "scalbnf" => (&[1], false),
        "jn" | "jnf" | "yn" | "ynf" => (&[0], false),
        _ => (&[], false),
    };
    let int_param = |k: &usize| {
        func.params
            .get(*k)
            .is_some_and(|p| p.ty == adc_ir::Type::I64)
    };
    let params = params.iter().copied().filter(int_param).collect();
    let result = result && func.returns == [adc_ir::Type::I64];
    (params, result)
}

/// Calls `callee`, an `extern`, with the C ABI of `extern_signature`: C
/// `int` arguments narrowed and an `int` result sign-extended, a tuple
/// through `call_extern_tuple`.
pub(crate) fn call_extern(
    b: &mut FunctionBuilder,
    fref: clif::FuncRef,
    callee: &adc_ir::Function,
    mut args: Vec<clif::Value>,
) -> Vec<clif::Value> {
    if callee.returns.len() > 1 {
        return call_extern_tuple(b, fref, callee, &args);
    }
    let (int_params, int_result) = c_int_positions(callee);
    for k in int_params {
        args[k] = b.ins().ireduce(types::I32, args[k]);
    }
    let call = b.ins().call(fref, &args);
    let mut results = b.inst_results(call).to_vec();
    if int_result {
        results[0] = b.ins().sextend(types::I64, results[0]);
    }
    results
}

/// Calls `callee`, an `extern` returning a tuple, with the C struct ABI:
/// a hidden pointer to a stack slot for a struct over 16 bytes, else the
/// struct's eightbytes in registers, stored to a slot; the fields are read
/// back from the slot at their C offsets.
fn call_extern_tuple(
    b: &mut FunctionBuilder,
    fref: clif::FuncRef,
    callee: &adc_ir::Function,
    args: &[clif::Value],
) -> Vec<clif::Value> {
    let scalars: Vec<ScalarType> = callee.returns.iter().map(|t| t.elem()).collect();
    let (offsets, size) = tuple_layout(&scalars);
    let slot = b.create_sized_stack_slot(StackSlotData::new(
        StackSlotKind::ExplicitSlot,
        size.max(16).div_ceil(8) * 8,
        3,
    ));
    let base = b.ins().stack_addr(PTR, slot, 0);
    match classify(&scalars) {
        TupleReturn::Memory => {
            let mut cargs = vec![base];
            cargs.extend_from_slice(args);
            b.ins().call(fref, &cargs);
        }
        TupleReturn::Registers(_) => {
            let call = b.ins().call(fref, args);
            let words = b.inst_results(call).to_vec();
            for (i, w) in words.iter().enumerate() {
                b.ins().store(TRUSTED, *w, base, (i * 8) as i32);
            }
        }
    }
    scalars
        .iter()
        .zip(&offsets)
        .map(|(t, off)| b.ins().load(scalar_clif(*t), TRUSTED, base, *off as i32))
        .collect()
}

pub(crate) fn c_type(s: ScalarType) -> &'static str {
    match s {
        ScalarType::Bool => "bool",
        ScalarType::I64 => "int64_t",
        ScalarType::F32 => "float",
        ScalarType::F64 => "double",
    }
}
