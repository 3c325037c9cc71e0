//! The semantics of scalar operations: arithmetic, comparisons,
//! conversions and math functions, as codegen implements them.

use crate::inst::{BinaryOp, CmpCond, Constant, MathFunc};
use crate::types::ScalarType;

fn f64_of(c: Constant) -> f64 {
    match c {
        Constant::F64(x) => x,
        Constant::F32(x) => x as f64,
        Constant::I64(x) => x as f64,
        Constant::Bool(b) => b as i64 as f64,
    }
}

pub(super) fn math(func: MathFunc, args: &[Constant]) -> Constant {
    if let [Constant::I64(x)] = args {
        return Constant::I64(x.wrapping_abs());
    }
    if let (MathFunc::Fma, [Constant::F32(x), Constant::F32(y), Constant::F32(z)]) = (func, args) {
        // Rounded once at `float` (the product and sum in `double`, then
        // rounded to `float`, would round twice).
        return Constant::F32(x.mul_add(*y, *z));
    }
    let x = f64_of(args[0]);
    let y = args.get(1).map(|c| f64_of(*c)).unwrap_or(0.0);
    let r = match func {
        MathFunc::Sin => x.sin(),
        MathFunc::Cos => x.cos(),
        MathFunc::Tan => x.tan(),
        MathFunc::Asin => x.asin(),
        MathFunc::Acos => x.acos(),
        MathFunc::Atan => x.atan(),
        MathFunc::Atan2 => x.atan2(y),
        MathFunc::Sinh => x.sinh(),
        MathFunc::Cosh => x.cosh(),
        MathFunc::Tanh => x.tanh(),
        MathFunc::Exp => x.exp(),
        MathFunc::Expm1 => x.exp_m1(),
        MathFunc::Log => x.ln(),
        MathFunc::Log1p => x.ln_1p(),
        MathFunc::Log2 => x.log2(),
        MathFunc::Log10 => x.log10(),
        MathFunc::Sqrt => x.sqrt(),
        MathFunc::Cbrt => x.cbrt(),
        MathFunc::Pow => x.powf(y),
        MathFunc::Hypot => x.hypot(y),
        MathFunc::Abs => x.abs(),
        MathFunc::Floor => x.floor(),
        MathFunc::Ceil => x.ceil(),
        MathFunc::Round => x.round(),
        MathFunc::Trunc => x.trunc(),
        MathFunc::Fmod => x % y,
        MathFunc::Erf => libm::erf(x),
        MathFunc::Erfc => libm::erfc(x),
        MathFunc::Lgamma => libm::lgamma(x),
        MathFunc::Fma => x.mul_add(y, f64_of(args[2])),
    };
    match args[0] {
        Constant::F32(_) => Constant::F32(r as f32),
        _ => Constant::F64(r),
    }
}

/// Binary operation semantics (integer division by zero is the caller's check).
pub fn binary(op: BinaryOp, a: Constant, b: Constant) -> Constant {
    use Constant::*;
    macro_rules! float {
        ($x:expr, $y:expr) => {
            match op {
                BinaryOp::Add => $x + $y,
                BinaryOp::Sub => $x - $y,
                BinaryOp::Mul => $x * $y,
                BinaryOp::Div => $x / $y,
                BinaryOp::Rem => $x % $y,
                // The verifier rejects a float `or`.
                BinaryOp::Or => $x,
                BinaryOp::MulZ => {
                    if $x == 0.0 {
                        0.0
                    } else {
                        $x * $y
                    }
                }
                BinaryOp::DivZ => {
                    if $x == 0.0 {
                        0.0
                    } else {
                        $x / $y
                    }
                }
                // C's `fmin`/`fmax`: a NaN operand is ignored.
                BinaryOp::Min => {
                    if $y < $x || $x.is_nan() {
                        $y
                    } else {
                        $x
                    }
                }
                BinaryOp::Max => {
                    if $y > $x || $x.is_nan() {
                        $y
                    } else {
                        $x
                    }
                }
            }
        };
    }
    match (a, b) {
        (I64(x), I64(y)) => I64(match op {
            BinaryOp::Add => x.wrapping_add(y),
            BinaryOp::Sub => x.wrapping_sub(y),
            BinaryOp::Mul | BinaryOp::MulZ => x.wrapping_mul(y),
            // The verifier rejects an integer `divz`.
            BinaryOp::Div | BinaryOp::DivZ => x.wrapping_div(y),
            BinaryOp::Rem => x.wrapping_rem(y),
            BinaryOp::Min => x.min(y),
            BinaryOp::Max => x.max(y),
            BinaryOp::Or => x | y,
        }),
        (F64(x), F64(y)) => F64(float!(x, y)),
        (F32(x), F32(y)) => F32(float!(x, y)),
        (a, _) => a,
    }
}

/// Comparison semantics: ordered except `ne`, as in C.
pub fn compare(cond: CmpCond, a: Constant, b: Constant) -> bool {
    let ord = match (a, b) {
        (Constant::I64(x), Constant::I64(y)) => x.partial_cmp(&y),
        (Constant::F64(x), Constant::F64(y)) => x.partial_cmp(&y),
        (Constant::F32(x), Constant::F32(y)) => x.partial_cmp(&y),
        (Constant::Bool(x), Constant::Bool(y)) => x.partial_cmp(&y),
        _ => None,
    };
    use std::cmp::Ordering::*;
    match (cond, ord) {
        (CmpCond::Ne, None) => true,
        (_, None) => false,
        (CmpCond::Eq, Some(o)) => o == Equal,
        (CmpCond::Ne, Some(o)) => o != Equal,
        (CmpCond::Lt, Some(o)) => o == Less,
        (CmpCond::Le, Some(o)) => o != Greater,
        (CmpCond::Gt, Some(o)) => o == Greater,
        (CmpCond::Ge, Some(o)) => o != Less,
    }
}

/// Conversion semantics: float to int truncates and saturates, NaN to 0.
pub fn convert(c: Constant, to: ScalarType) -> Constant {
    use Constant::*;
    match (c, to) {
        (c, t) if c.ty() == t => c,
        (I64(x), ScalarType::F64) => F64(x as f64),
        (I64(x), ScalarType::F32) => F32(x as f32),
        (F64(x), ScalarType::I64) => I64(x as i64),
        (F32(x), ScalarType::I64) => I64(x as i64),
        (F32(x), ScalarType::F64) => F64(x as f64),
        (F64(x), ScalarType::F32) => F32(x as f32),
        (Bool(b), ScalarType::I64) => I64(b as i64),
        (Bool(b), ScalarType::F64) => F64(b as i64 as f64),
        (Bool(b), ScalarType::F32) => F32(b as i64 as f32),
        (I64(x), ScalarType::Bool) => Bool(x != 0),
        (F64(x), ScalarType::Bool) => Bool(x != 0.0),
        (F32(x), ScalarType::Bool) => Bool(x != 0.0),
        (c, _) => c,
    }
}
