//! Constants and the way the IR prints floats.

use crate::types::ScalarType;
use std::fmt;

/// A scalar value of one of the [`ScalarType`]s; `Display` prints it as
/// the IR does.
///
/// ```
/// # use adc_ir::Constant;
/// assert_eq!(Constant::F64(0.1).to_string(), "0.1");
/// assert_eq!(Constant::F32(f32::INFINITY).to_string(), "inf");
/// ```
#[derive(Clone, Copy, PartialEq, Debug)]
pub enum Constant {
    /// A `bool`.
    Bool(bool),
    /// An `int`.
    I64(i64),
    /// A `float`.
    F32(f32),
    /// A `double`.
    F64(f64),
}

impl Constant {
    /// The zero (or `false`) of a scalar type.
    ///
    /// ```
    /// # use adc_ir::{Constant, ScalarType};
    /// assert_eq!(Constant::zero(ScalarType::F32), Constant::F32(0.0));
    /// assert_eq!(Constant::zero(ScalarType::Bool), Constant::Bool(false));
    /// ```
    pub fn zero(ty: ScalarType) -> Constant {
        match ty {
            ScalarType::Bool => Constant::Bool(false),
            ScalarType::I64 => Constant::I64(0),
            ScalarType::F32 => Constant::F32(0.0),
            ScalarType::F64 => Constant::F64(0.0),
        }
    }

    /// The value's type.
    ///
    /// ```
    /// # use adc_ir::{Constant, ScalarType};
    /// assert_eq!(Constant::I64(3).ty(), ScalarType::I64);
    /// ```
    pub fn ty(self) -> ScalarType {
        match self {
            Constant::Bool(_) => ScalarType::Bool,
            Constant::I64(_) => ScalarType::I64,
            Constant::F32(_) => ScalarType::F32,
            Constant::F64(_) => ScalarType::F64,
        }
    }

    /// Bit-exact equality (so `-0.0 != 0.0` and a NaN equals itself), for CSE.
    ///
    /// ```
    /// # use adc_ir::Constant;
    /// assert!(!Constant::F64(-0.0).same_bits(Constant::F64(0.0)));
    /// assert!(Constant::F64(f64::NAN).same_bits(Constant::F64(f64::NAN)));
    /// assert!(!Constant::I64(1).same_bits(Constant::F64(1.0)));
    /// ```
    pub fn same_bits(self, other: Constant) -> bool {
        match (self, other) {
            (Constant::Bool(a), Constant::Bool(b)) => a == b,
            (Constant::I64(a), Constant::I64(b)) => a == b,
            (Constant::F32(a), Constant::F32(b)) => a.to_bits() == b.to_bits(),
            (Constant::F64(a), Constant::F64(b)) => a.to_bits() == b.to_bits(),
            _ => false,
        }
    }
}

/// Floats print in Rust's shortest form that reads back exactly (to the
/// value of their own type), with `nan`, `inf` and `-inf` spelled out.
fn fmt_float<T: fmt::Debug + PartialOrd + Default>(
    x: T,
    is_nan: bool,
    is_infinite: bool,
) -> String {
    match (is_nan, is_infinite) {
        (true, _) => "nan".into(),
        (false, true) if x > T::default() => "inf".into(),
        (false, true) => "-inf".into(),
        (false, false) => format!("{x:?}"),
    }
}

pub fn fmt_f64(x: f64) -> String {
    fmt_float(x, x.is_nan(), x.is_infinite())
}

pub fn fmt_f32(x: f32) -> String {
    fmt_float(x, x.is_nan(), x.is_infinite())
}

impl fmt::Display for Constant {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Constant::Bool(b) => write!(f, "{b}"),
            Constant::I64(i) => write!(f, "{i}"),
            Constant::F32(x) => f.write_str(&fmt_f32(*x)),
            Constant::F64(x) => f.write_str(&fmt_f64(*x)),
        }
    }
}
