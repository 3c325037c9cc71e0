//! `print` in object files: local definitions of the print hooks that the
//! JIT's host provides (`jit/host.rs`), so an object that prints links with
//! a plain C compiler and needs no host code.
//!
//! They write to file descriptor 1 with `write`, after `fflush(NULL)` so
//! that what the C program has buffered comes first. Only functions with a
//! fixed argument list are called (compiled code cannot set up a variadic
//! call). A float is printed as `adc run` prints it (Rust's `{:?}`): its
//! shortest digits, the smallest `N` for which `strfromd`/`strfromf` with
//! `%.{N-1}e` gives text that `strtod`/`strtof` reads back to the same
//! value; in exponent form (`1e16`, `1.5e-5`: no `+`, no leading zeros)
//! when the magnitude is below 1e-4 or at least 1e16, else positional with
//! as many decimals as those digits need (`%.{N-1-E}f`, `E` the exponent)
//! and `.0` when it has no `.` (`10.0`, `0.0001`, `-0.0`; `nan`, `inf`).
//! Integers are converted digit by digit.

use super::tape_spare::{call, define_fn};
use crate::CodegenError;
use cranelift_codegen::ir::condcodes::{FloatCC, IntCC};
use cranelift_codegen::ir::{self as clif, types, InstBuilder, StackSlotData, StackSlotKind};
use cranelift_frontend::FunctionBuilder;
use cranelift_module::{DataDescription, DataId, Linkage, Module};

const PTR: clif::Type = types::I64;
/// Offsets in the module's string table.
const SPACE: i64 = 0;
const NEWLINE: i64 = 2;
const TRUE: i64 = 4;
const FALSE: i64 = 9;
const POINT_ZERO: i64 = 15;
const MARKS: i64 = 18;
/// `%.0e`, `%.1e`, ... `%.16e`, 8 bytes each.
const FORMATS_E: i64 = 32;
/// `%.0f`, `%.1f`, ... `%.20f`, 8 bytes each.
const FORMATS_F: i64 = FORMATS_E + 17 * 8;
const MAX_DECIMALS: i64 = 20;
const NAN: i64 = 22;
const BUF: u32 = 48;

fn table() -> Vec<u8> {
    let mut t = b" \0\n\0true\0false\0.0\0.en\0nan\0\0\0\0\0\0\0".to_vec();
    assert_eq!(
        t.len() as i64,
        FORMATS_E,
        "invariant: the offsets above match the table"
    );
    let formats = (0..17)
        .map(|p| format!("%.{p}e"))
        .chain((0..=MAX_DECIMALS).map(|q| format!("%.{q}f")));
    for f in formats {
        let mut f = f.into_bytes();
        f.resize(8, 0);
        t.extend(f);
    }
    t
}

/// Defines the print hooks in `m` as local functions.
pub(crate) fn define<M: Module>(m: &mut M) -> Result<(), CodegenError> {
    let strings = m.declare_data("__adc_print_strings", Linkage::Local, false, false)?;
    let mut desc = DataDescription::new();
    desc.define(table().into_boxed_slice());
    m.define_data(strings, &desc)?;
    for (name, ty, from, to) in [
        ("adc_rt_print_f64", types::F64, "strfromd", "strtod"),
        ("adc_rt_print_f32", types::F32, "strfromf", "strtof"),
    ] {
        define_fn(m, name, &[ty, types::I8], &[], |m, b, p| {
            separate(m, b, strings, p[1])?;
            float_body(m, b, strings, p[0], ty, from, to)
        })?;
    }
    define_fn(
        m,
        "adc_rt_print_i64",
        &[types::I64, types::I8],
        &[],
        |m, b, p| {
            separate(m, b, strings, p[1])?;
            int_body(m, b, p[0])
        },
    )?;
    define_fn(
        m,
        "adc_rt_print_bool",
        &[types::I8, types::I8],
        &[],
        |m, b, p| {
            separate(m, b, strings, p[1])?;
            let (t, f) = (string(m, b, strings, TRUE), string(m, b, strings, FALSE));
            let s = b.ins().select(p[0], t, f);
            let four = b.ins().iconst(PTR, 4);
            let five = b.ins().iconst(PTR, 5);
            let n = b.ins().select(p[0], four, five);
            out(m, b, s, n)?;
            b.ins().return_(&[]);
            Ok(())
        },
    )?;
    define_fn(m, "adc_rt_print_end", &[], &[], |m, b, _| {
        let s = string(m, b, strings, NEWLINE);
        let one = b.ins().iconst(PTR, 1);
        out(m, b, s, one)?;
        b.ins().return_(&[]);
        Ok(())
    })
}

fn string<M: Module>(
    m: &mut M,
    b: &mut FunctionBuilder,
    strings: DataId,
    offset: i64,
) -> clif::Value {
    let gv = m.declare_data_in_func(strings, b.func);
    let base = b.ins().symbol_value(PTR, gv);
    b.ins().iadd_imm_s(base, offset)
}

/// `fflush(NULL)`, then `write(1, s, n)`.
fn out<M: Module>(
    m: &mut M,
    b: &mut FunctionBuilder,
    s: clif::Value,
    n: clif::Value,
) -> Result<(), CodegenError> {
    let null = b.ins().iconst(PTR, 0);
    call(m, b, "fflush", &[PTR], &[types::I32], &[null])?;
    let fd = b.ins().iconst(types::I32, 1);
    call(m, b, "write", &[types::I32, PTR, PTR], &[PTR], &[fd, s, n])?;
    Ok(())
}

/// A space before every value but the first of a `print`.
fn separate<M: Module>(
    m: &mut M,
    b: &mut FunctionBuilder,
    strings: DataId,
    first: clif::Value,
) -> Result<(), CodegenError> {
    let space = b.create_block();
    let go_on = b.create_block();
    b.ins().brif(first, go_on, &[], space, &[]);
    b.switch_to_block(space);
    let s = string(m, b, strings, SPACE);
    let one = b.ins().iconst(PTR, 1);
    out(m, b, s, one)?;
    b.ins().jump(go_on, &[]);
    b.switch_to_block(go_on);
    Ok(())
}

fn buffer(b: &mut FunctionBuilder) -> clif::Value {
    let slot = b.create_sized_stack_slot(StackSlotData::new(StackSlotKind::ExplicitSlot, BUF, 0));
    b.ins().stack_addr(PTR, slot, 0)
}

fn float_body<M: Module>(
    m: &mut M,
    b: &mut FunctionBuilder,
    strings: DataId,
    x: clif::Value,
    ty: clif::Type,
    from: &str,
    to: &str,
) -> Result<(), CodegenError> {
    let buf = buffer(b);
    let size = b.ins().iconst(PTR, i64::from(BUF));
    let nan = b.create_block();
    let number = b.create_block();
    let is_nan = b.ins().fcmp(FloatCC::Unordered, x, x);
    b.ins().brif(is_nan, nan, &[], number, &[]);
    b.switch_to_block(nan);
    let s = string(m, b, strings, NAN);
    let three = b.ins().iconst(PTR, 3);
    out(m, b, s, three)?;
    b.ins().return_(&[]);
    b.switch_to_block(number);
    let try_p = b.create_block();
    let done = b.create_block();
    let p = b.append_block_param(try_p, types::I64);
    let one = b.ins().iconst(types::I64, 1);
    b.ins().jump(try_p, &[one.into()]);
    b.switch_to_block(try_p);
    // `%.{p-1}e`: p significant digits.
    let formats = string(m, b, strings, FORMATS_E - 8);
    let off = b.ins().imul_imm_s(p, 8);
    let fmt = b.ins().iadd(formats, off);
    call(
        m,
        b,
        from,
        &[PTR, PTR, PTR, ty],
        &[types::I32],
        &[buf, size, fmt, x],
    )?;
    let null = b.ins().iconst(PTR, 0);
    let back = call(m, b, to, &[PTR, PTR], &[ty], &[buf, null])?[0];
    let same = b.ins().fcmp(FloatCC::Equal, back, x);
    let last = b.ins().icmp_imm_s(IntCC::SignedGreaterThanOrEqual, p, 17);
    let stop = b.ins().bor(same, last);
    let next = b.ins().iadd_imm_s(p, 1);
    b.ins().brif(stop, done, &[], try_p, &[next.into()]);
    b.switch_to_block(done);
    // Rust's rule: exponent form below 1e-4 (but zero) and from 1e16 on.
    let abs = b.ins().fabs(x);
    let (tiny, huge, zero) = if ty == types::F32 {
        (
            b.ins().f32const(1e-4),
            b.ins().f32const(1e16),
            b.ins().f32const(0.0),
        )
    } else {
        (
            b.ins().f64const(1e-4),
            b.ins().f64const(1e16),
            b.ins().f64const(0.0),
        )
    };
    let below = b.ins().fcmp(FloatCC::LessThan, abs, tiny);
    let nonzero = b.ins().fcmp(FloatCC::NotEqual, abs, zero);
    let small = b.ins().band(below, nonzero);
    let big = b.ins().fcmp(FloatCC::GreaterThanOrEqual, abs, huge);
    let exponential = b.ins().bor(small, big);
    let e = b.ins().iconst(types::I32, i64::from(b'e'));
    let at_e = call(m, b, "strchr", &[PTR, types::I32], &[PTR], &[buf, e])?[0];
    let positional = b.create_block();
    let exponent = b.create_block();
    let measured = b.create_block();
    let no_e = b.ins().icmp_imm_s(IntCC::Equal, at_e, 0);
    // Text without an `e` (`inf`) is printed as it is.
    let keep = b.ins().bor(exponential, no_e);
    b.ins().brif(keep, exponent, &[], positional, &[]);
    b.switch_to_block(positional);
    // `%.{q}f` with q = p - 1 - E decimals (at least 0) keeps the p digits.
    let exp_text = b.ins().iadd_imm_s(at_e, 1);
    let ten = b.ins().iconst(types::I32, 10);
    let exp10 = call(
        m,
        b,
        "strtol",
        &[PTR, PTR, types::I32],
        &[types::I64],
        &[exp_text, null, ten],
    )?[0];
    let p_minus_1 = b.ins().iadd_imm_s(p, -1);
    let q = b.ins().isub(p_minus_1, exp10);
    let zero_i = b.ins().iconst(types::I64, 0);
    let max_q = b.ins().iconst(types::I64, MAX_DECIMALS);
    let q = b.ins().smax(q, zero_i);
    let q = b.ins().smin(q, max_q);
    let formats_f = string(m, b, strings, FORMATS_F);
    let off = b.ins().imul_imm_s(q, 8);
    let fmt = b.ins().iadd(formats_f, off);
    // The shortest digits' own value, as a double: `%f` of a `float`
    // itself would print its exact binary value's digits past them
    // (9745998054162432.0 for 9745998000000000.0f); a decimal of at most
    // 17 digits below 1e16 is a double exactly when it is an integer.
    let shortest = call(m, b, "strtod", &[PTR, PTR], &[types::F64], &[buf, null])?[0];
    call(
        m,
        b,
        "strfromd",
        &[PTR, PTR, PTR, types::F64],
        &[types::I32],
        &[buf, size, fmt, shortest],
    )?;
    b.ins().jump(measured, &[]);
    b.switch_to_block(exponent);
    let tidy = b.create_block();
    b.ins().brif(no_e, measured, &[], tidy, &[]);
    b.switch_to_block(tidy);
    tidy_exponent(m, b, at_e)?;
    b.ins().jump(measured, &[]);
    b.switch_to_block(measured);
    let n = call(m, b, "strlen", &[PTR], &[PTR], &[buf])?[0];
    let marks = string(m, b, strings, MARKS);
    let found = call(m, b, "strpbrk", &[PTR, PTR], &[PTR], &[buf, marks])?[0];
    let plain = b.create_block();
    let write = b.create_block();
    let len = b.append_block_param(write, PTR);
    b.ins().brif(found, write, &[n.into()], plain, &[]);
    b.switch_to_block(plain);
    // Append ".0" and the NUL after it.
    let at = b.ins().iadd(buf, n);
    let src = string(m, b, strings, POINT_ZERO);
    let bytes = b.ins().load(types::I16, crate::translate::TRUSTED, src, 0);
    b.ins().store(crate::translate::TRUSTED, bytes, at, 0);
    let n2 = b.ins().iadd_imm_s(n, 2);
    b.ins().jump(write, &[n2.into()]);
    b.switch_to_block(write);
    out(m, b, buf, len)?;
    b.ins().return_(&[]);
    Ok(())
}

/// The decimal digits of `x`, written from the end of a buffer.
fn int_body<M: Module>(
    m: &mut M,
    b: &mut FunctionBuilder,
    x: clif::Value,
) -> Result<(), CodegenError> {
    let buf = buffer(b);
    let end = b.ins().iadd_imm_s(buf, i64::from(BUF));
    let negative = b.ins().icmp_imm_s(IntCC::SignedLessThan, x, 0);
    let neg = b.ins().ineg(x);
    // |i64::MIN| wraps to itself, which as unsigned is right.
    let mag = b.ins().select(negative, neg, x);
    let digit = b.create_block();
    let sign = b.create_block();
    let write = b.create_block();
    let v = b.append_block_param(digit, types::I64);
    let at = b.append_block_param(digit, PTR);
    let rest_at = b.append_block_param(sign, PTR);
    let start = b.append_block_param(write, PTR);
    b.ins().jump(digit, &[mag.into(), end.into()]);
    b.switch_to_block(digit);
    let q = b.ins().udiv_imm_u(v, 10);
    let q10 = b.ins().imul_imm_s(q, 10);
    let d = b.ins().isub(v, q10);
    let ch = b.ins().iadd_imm_s(d, i64::from(b'0'));
    let ch8 = b.ins().ireduce(types::I8, ch);
    let prev = b.ins().iadd_imm_s(at, -1);
    b.ins().store(crate::translate::TRUSTED, ch8, prev, 0);
    b.ins()
        .brif(q, digit, &[q.into(), prev.into()], sign, &[prev.into()]);
    b.switch_to_block(sign);
    let minus_at = b.ins().iadd_imm_s(rest_at, -1);
    let minus = b.ins().iconst(types::I8, i64::from(b'-'));
    let with_sign = b.create_block();
    b.ins()
        .brif(negative, with_sign, &[], write, &[rest_at.into()]);
    b.switch_to_block(with_sign);
    b.ins().store(crate::translate::TRUSTED, minus, minus_at, 0);
    b.ins().jump(write, &[minus_at.into()]);
    b.switch_to_block(write);
    let n = b.ins().isub(end, start);
    out(m, b, start, n)?;
    b.ins().return_(&[]);
    Ok(())
}

/// At `e` (the `e` of `1e+07`): drops a `+` and leading zeros of the
/// exponent, keeping one digit, by moving the rest of the text left.
fn tidy_exponent<M: Module>(
    m: &mut M,
    b: &mut FunctionBuilder,
    e: clif::Value,
) -> Result<(), CodegenError> {
    let after = b.ins().iadd_imm_s(e, 1);
    let sign = b.ins().load(types::I8, crate::translate::TRUSTED, after, 0);
    let plus = b.ins().icmp_imm_s(IntCC::Equal, sign, i64::from(b'+'));
    let minus = b.ins().icmp_imm_s(IntCC::Equal, sign, i64::from(b'-'));
    let signed = b.ins().bor(plus, minus);
    let past_sign = b.ins().iadd_imm_s(after, 1);
    // Digits start after a sign; a `-` stays, a `+` goes.
    let digits = b.ins().select(signed, past_sign, after);
    let dst = b.ins().select(minus, past_sign, after);
    let skip = b.create_block();
    let step = b.create_block();
    let moved = b.create_block();
    let src = b.append_block_param(skip, PTR);
    b.ins().jump(skip, &[digits.into()]);
    b.switch_to_block(skip);
    let c = b.ins().load(types::I8, crate::translate::TRUSTED, src, 0);
    let next = b.ins().load(types::I8, crate::translate::TRUSTED, src, 1);
    let zero = b.ins().icmp_imm_s(IntCC::Equal, c, i64::from(b'0'));
    let more = b.ins().icmp_imm_s(IntCC::NotEqual, next, 0);
    let drop = b.ins().band(zero, more);
    b.ins().brif(drop, step, &[], moved, &[]);
    b.switch_to_block(step);
    let src1 = b.ins().iadd_imm_s(src, 1);
    b.ins().jump(skip, &[src1.into()]);
    b.switch_to_block(moved);
    let len = call(m, b, "strlen", &[PTR], &[PTR], &[src])?[0];
    let with_nul = b.ins().iadd_imm_s(len, 1);
    call(
        m,
        b,
        "memmove",
        &[PTR, PTR, PTR],
        &[PTR],
        &[dst, src, with_nul],
    )?;
    Ok(())
}
