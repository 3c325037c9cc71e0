//! Textual IR from the user (`.adir` given to `adc`), made safe to run.
//!
//! The verifier checks types and SSA, not what compiled code trusts the
//! compiler's own passes to have proven. So after it, user IR is changed
//! or refused until nothing in it can touch memory it does not own:
//!
//! - `load.unchecked` / `store.unchecked` become checked;
//! - `new.uninit` becomes `new` (elements read before a store read zeros);
//! - `copyrange` gets two checked `view`s of the ranges it copies in front
//!   of it (a runtime error when a range is out of bounds);
//! - `free.defer`, and `free` unless `frees.rs` proves it frees an array
//!   of the function's own once and nothing touches it afterwards, do
//!   nothing (they are removed): a leak is safe where a double free is not;
//! - tape operations, `dpair` values and instructions tagged `diff` or
//!   `mixed` (what derivative passes make, and later passes trust) are
//!   refused with a diagnostic naming the function and instruction.
//! - a function returning a `ref` (a slot of a frame that is gone) or an
//!   array is refused, and so is one named as `.ad` source may not name it
//!   (a math built-in defined, a C library function compiled code calls,
//!   adc's own prefixes);
//! - a derivative declaration (`= reverse @f(...)`) is refused unless its
//!   activities fit `f`'s parameters and result as an attribute's must
//!   (docs/derivatives.md#default-activities) and its signature is the one they generate.

use adc_ir::ad::ActivitySlot;
use adc_ir::{BinaryOp, Function, Inst, InstData, Module, Tag, Type, Value};

mod frees;

/// Makes `module` safe to run, or says why it cannot be.
pub fn make_safe(module: &mut Module) -> Result<(), String> {
    for func in &module.funcs {
        // A function named like the C library's functions compiled code
        // calls would replace them in an object file (`@malloc`), and one
        // with adc's prefixes would clash with its own symbols.
        if let Some(why) =
            adc_frontend::lower::reserved_function_name(&func.name, !func.is_import())
        {
            return Err(format!("`@{}`: {why}", func.name));
        }
        if func.returns.iter().any(|t| !matches!(t, Type::Scalar(_))) {
            return Err(format!(
                "`@{}` returns a reference or an array; functions return scalars",
                func.name
            ));
        }
        check_request(module, func)?;
    }
    for func in &mut module.funcs {
        refuse_internal(func)?;
        let kept = frees::safe_frees(func);
        for b in func.layout.clone() {
            for inst in func.dfg.block(b).insts.clone() {
                match func.dfg.inst_mut(inst) {
                    InstData::Load { checked, .. } | InstData::Store { checked, .. } => {
                        *checked = true
                    }
                    // Elements read before any store read zeros, as in
                    // the interpreter.
                    InstData::ArrayNew { zeroed, .. } => *zeroed = true,
                    _ => (),
                }
                if let InstData::CopyRange { .. } = func.dfg.inst(inst) {
                    check_copy(func, b, inst);
                }
            }
            let frees: Vec<Inst> = func
                .dfg
                .block(b)
                .insts
                .iter()
                .copied()
                .filter(|&i| {
                    matches!(
                        func.dfg.inst(i),
                        InstData::ArrayFree { .. } | InstData::DeferFree { .. }
                    ) && !kept.contains(&i)
                })
                .collect();
            func.dfg.block_mut(b).insts.retain(|i| !frees.contains(i));
        }
    }
    Ok(())
}

fn refuse_internal(func: &Function) -> Result<(), String> {
    for &b in &func.layout {
        for &inst in &func.dfg.block(b).insts {
            let data = func.dfg.inst(inst);
            let internal = data.is_internal()
                || func.tag(inst) != Tag::Primal
                || func
                    .dfg
                    .inst_results(inst)
                    .iter()
                    .any(|r| matches!(func.dfg.value_type(*r), Type::Pair(_)));
            if internal {
                return Err(format!(
                    "`@{}`: `{}{}` is internal to the compiler's derivative passes and not accepted in textual IR",
                    func.name,
                    func.tag(inst).prefix(),
                    adc_ir::print::fmt_inst_data(None, data)
                ));
            }
        }
        if func
            .dfg
            .block_params(b)
            .iter()
            .any(|p| matches!(func.dfg.value_type(*p), Type::Pair(_)))
        {
            return Err(format!(
                "`@{}`: `dpair` values are internal to the compiler's derivative passes and not accepted in textual IR",
                func.name
            ));
        }
    }
    Ok(())
}

/// Puts checked views of both ranges of the `copyrange` `inst` before it.
fn check_copy(func: &mut Function, block: adc_ir::Block, inst: Inst) {
    let InstData::CopyRange {
        dst,
        dst_index,
        src,
        src_index,
        count,
    } = *func.dfg.inst(inst)
    else {
        return;
    };
    let span = func.span(inst);
    let mut new: Vec<Inst> = Vec::new();
    let mut emit = |func: &mut Function, data: InstData, ty: Type| -> Value {
        let i = func.dfg.make_inst(data, &[ty]);
        func.set_span(i, span);
        new.push(i);
        func.dfg.inst_results(i)[0]
    };
    let zero = emit(
        func,
        InstData::Const {
            value: adc_ir::Constant::I64(0),
        },
        Type::I64,
    );
    let n = emit(
        func,
        InstData::Binary {
            op: BinaryOp::Max,
            args: [count, zero],
        },
        Type::I64,
    );
    for (array, start) in [(dst, dst_index), (src, src_index)] {
        let end = emit(
            func,
            InstData::Binary {
                op: BinaryOp::Add,
                args: [start, n],
            },
            Type::I64,
        );
        let ty = func.dfg.value_type(array);
        emit(
            func,
            InstData::ArrayView {
                array,
                lo: start,
                hi: end,
            },
            ty,
        );
    }
    let insts = &mut func.dfg.block_mut(block).insts;
    let at = insts.iter().position(|i| *i == inst).unwrap_or(0);
    insts.splice(at..at, new);
}

/// A derivative declaration must be one an attribute could make.
fn check_request(module: &Module, func: &Function) -> Result<(), String> {
    let Some(spec) = &func.deriv else {
        return Ok(());
    };
    let mode = if spec.mode == adc_ir::AdMode::Reverse {
        "reverse"
    } else {
        "forward"
    };
    let bad = |why: String| Err(format!("`@{}` = {mode} @{}: {why}", func.name, spec.of));
    let Some(id) = module.find(&spec.of) else {
        return bad("no such function".into());
    };
    let src = module.func(id);
    if spec.params.len() != src.params.len() {
        return bad(format!(
            "{} activities for {} parameters",
            spec.params.len(),
            src.params.len()
        ));
    }
    for (a, p) in spec.params.iter().zip(&src.params) {
        if !ActivitySlot::param(p.ty).fits(*a, spec.mode) {
            return bad(format!(
                "activity `{}` does not fit parameter `{}`",
                a.name(),
                p.name
            ));
        }
    }
    if !ActivitySlot::result(&src.returns).fits(spec.ret, spec.mode) {
        return bad(format!(
            "activity `{}` does not fit the result",
            spec.ret.name()
        ));
    }
    let (params, returns) = adc_ir::ad::spec_signature(src, spec);
    let same_params = params.len() == func.params.len()
        && params
            .iter()
            .zip(&func.params)
            .all(|(a, b)| a.ty == b.ty && a.mode == b.mode);
    if !same_params || returns != func.returns {
        return bad("the declared signature is not the one these activities generate".into());
    }
    Ok(())
}
