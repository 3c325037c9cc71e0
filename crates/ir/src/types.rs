//! IR types: scalars, array references and scalar references.
//!
//! An `arr<T>` value is a fat reference (data pointer and length) to memory
//! the function does not own unless it created it with `new`; a `ref<T>` is
//! a thin pointer to one scalar (an `inout`/`out` scalar parameter, an array
//! element, or a stack `slot`).
//!
//! A `dpair<T>` (DifferentialPair) is a float value together with its
//! tangent. Only derivative code between `linearize` and pair lowering has
//! them: they never reach codegen or a function signature.

use std::fmt;

/// A scalar type: `bool`, `int`, `float`, `double` in the source.
///
/// ```
/// # use adc_ir::ScalarType;
/// assert_eq!(ScalarType::F32.to_string(), "f32");
/// ```
#[derive(Clone, Copy, PartialEq, Eq, Debug, Hash, PartialOrd, Ord)]
pub enum ScalarType {
    /// `bool`.
    Bool,
    /// `int`, 64-bit signed.
    I64,
    /// `float`, 32-bit IEEE.
    F32,
    /// `double`, 64-bit IEEE.
    F64,
}

impl ScalarType {
    /// True for `F32` and `F64`, the types with derivatives.
    ///
    /// ```
    /// # use adc_ir::ScalarType;
    /// assert!(ScalarType::F32.is_float());
    /// assert!(!ScalarType::I64.is_float());
    /// ```
    pub fn is_float(self) -> bool {
        matches!(self, ScalarType::F32 | ScalarType::F64)
    }

    /// True for `I64`.
    ///
    /// ```
    /// # use adc_ir::ScalarType;
    /// assert!(ScalarType::I64.is_int());
    /// assert!(!ScalarType::Bool.is_int());
    /// ```
    pub fn is_int(self) -> bool {
        self == ScalarType::I64
    }

    /// Size in bytes of one element in memory (the C ABI's size).
    ///
    /// ```
    /// # use adc_ir::ScalarType;
    /// assert_eq!(ScalarType::F32.size(), 4);
    /// assert_eq!(ScalarType::Bool.size(), 1);
    /// ```
    pub fn size(self) -> u32 {
        match self {
            ScalarType::Bool => 1,
            ScalarType::I64 | ScalarType::F64 => 8,
            ScalarType::F32 => 4,
        }
    }

    /// The type's name in the IR (`f64`, ...).
    ///
    /// ```
    /// # use adc_ir::ScalarType;
    /// assert_eq!(ScalarType::I64.name(), "i64");
    /// ```
    pub fn name(self) -> &'static str {
        match self {
            ScalarType::Bool => "bool",
            ScalarType::I64 => "i64",
            ScalarType::F32 => "f32",
            ScalarType::F64 => "f64",
        }
    }

    /// The type's name in `.ad` source (`double`, `float`, `int`, `bool`).
    ///
    /// ```
    /// # use adc_ir::ScalarType;
    /// assert_eq!(ScalarType::I64.source_name(), "int");
    /// assert_eq!(ScalarType::F64.source_name(), "double");
    /// ```
    pub fn source_name(self) -> &'static str {
        match self {
            ScalarType::Bool => "bool",
            ScalarType::I64 => "int",
            ScalarType::F32 => "float",
            ScalarType::F64 => "double",
        }
    }

    /// The type of an IR name (not a source name: `f64`, not `double`).
    ///
    /// ```
    /// # use adc_ir::ScalarType;
    /// assert_eq!(ScalarType::from_name("bool"), Some(ScalarType::Bool));
    /// assert_eq!(ScalarType::from_name("double"), None);
    /// ```
    pub fn from_name(s: &str) -> Option<ScalarType> {
        Some(match s {
            "bool" => ScalarType::Bool,
            "i64" => ScalarType::I64,
            "f32" => ScalarType::F32,
            "f64" => ScalarType::F64,
            _ => return None,
        })
    }
}

/// The type of an IR value or parameter.
///
/// ```
/// # use adc_ir::{ScalarType, Type};
/// assert_eq!(Type::Array(ScalarType::F64).to_string(), "arr<f64>");
/// assert_eq!(Type::Ref(ScalarType::I64).to_string(), "ref<i64>");
/// ```
#[derive(Clone, Copy, PartialEq, Eq, Debug, Hash)]
pub enum Type {
    /// A scalar value.
    Scalar(ScalarType),
    /// An array (`T[]` in the source).
    Array(ScalarType),
    /// A reference to one scalar (an `inout`/`out` scalar parameter, ...).
    Ref(ScalarType),
    /// A float and its tangent (`dpair.make`, `dpair.primal`, `dpair.diff`).
    Pair(ScalarType),
}

impl Type {
    /// `Type::Scalar(ScalarType::Bool)`.
    ///
    /// ```
    /// # use adc_ir::{ScalarType, Type};
    /// assert_eq!(Type::BOOL, Type::Scalar(ScalarType::Bool));
    /// ```
    pub const BOOL: Type = Type::Scalar(ScalarType::Bool);
    /// `Type::Scalar(ScalarType::I64)`.
    ///
    /// ```
    /// # use adc_ir::{ScalarType, Type};
    /// assert_eq!(Type::I64.scalar(), Some(ScalarType::I64));
    /// ```
    pub const I64: Type = Type::Scalar(ScalarType::I64);
    /// `Type::Scalar(ScalarType::F32)`.
    ///
    /// ```
    /// # use adc_ir::Type;
    /// assert_eq!(Type::F32.to_string(), "f32");
    /// ```
    pub const F32: Type = Type::Scalar(ScalarType::F32);
    /// `Type::Scalar(ScalarType::F64)`.
    ///
    /// ```
    /// # use adc_ir::{ScalarType, Type};
    /// assert_eq!(Type::F64.elem(), ScalarType::F64);
    /// ```
    pub const F64: Type = Type::Scalar(ScalarType::F64);

    /// The scalar type of a scalar, `None` for arrays, references, pairs.
    ///
    /// ```
    /// # use adc_ir::{ScalarType, Type};
    /// assert_eq!(Type::F64.scalar(), Some(ScalarType::F64));
    /// assert_eq!(Type::Array(ScalarType::F64).scalar(), None);
    /// ```
    pub fn scalar(self) -> Option<ScalarType> {
        match self {
            Type::Scalar(s) => Some(s),
            Type::Array(_) | Type::Ref(_) | Type::Pair(_) => None,
        }
    }

    /// The scalar type stored behind an array or reference, or the scalar itself.
    ///
    /// ```
    /// # use adc_ir::{ScalarType, Type};
    /// assert_eq!(Type::Ref(ScalarType::I64).elem(), ScalarType::I64);
    /// assert_eq!(Type::BOOL.elem(), ScalarType::Bool);
    /// ```
    pub fn elem(self) -> ScalarType {
        match self {
            Type::Scalar(s) | Type::Array(s) | Type::Ref(s) | Type::Pair(s) => s,
        }
    }

    /// The same shape with `f64` elements in place of `f32` ones (other
    /// types unchanged).
    ///
    /// ```
    /// # use adc_ir::{ScalarType, Type};
    /// assert_eq!(Type::Array(ScalarType::F32).with_elem_f64(), Type::Array(ScalarType::F64));
    /// assert_eq!(Type::Scalar(ScalarType::I64).with_elem_f64(), Type::Scalar(ScalarType::I64));
    /// ```
    pub fn with_elem_f64(self) -> Type {
        let w = |s: ScalarType| {
            if s == ScalarType::F32 {
                ScalarType::F64
            } else {
                s
            }
        };
        match self {
            Type::Scalar(s) => Type::Scalar(w(s)),
            Type::Array(s) => Type::Array(w(s)),
            Type::Ref(s) => Type::Ref(w(s)),
            Type::Pair(s) => Type::Pair(w(s)),
        }
    }
}

impl fmt::Display for ScalarType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl fmt::Display for Type {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Type::Scalar(s) => write!(f, "{s}"),
            Type::Array(s) => write!(f, "arr<{s}>"),
            Type::Ref(s) => write!(f, "ref<{s}>"),
            Type::Pair(s) => write!(f, "dpair<{s}>"),
        }
    }
}
