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

#[derive(Clone, Copy, PartialEq, Eq, Debug, Hash, PartialOrd, Ord)]
pub enum ScalarType {
    Bool,
    I64,
    F32,
    F64,
}

impl ScalarType {
    pub fn is_float(self) -> bool {
        matches!(self, ScalarType::F32 | ScalarType::F64)
    }

    pub fn is_int(self) -> bool {
        self == ScalarType::I64
    }

    /// Size in bytes of one element in memory (the C ABI's size).
    pub fn size(self) -> u32 {
        match self {
            ScalarType::Bool => 1,
            ScalarType::I64 | ScalarType::F64 => 8,
            ScalarType::F32 => 4,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            ScalarType::Bool => "bool",
            ScalarType::I64 => "i64",
            ScalarType::F32 => "f32",
            ScalarType::F64 => "f64",
        }
    }

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

#[derive(Clone, Copy, PartialEq, Eq, Debug, Hash)]
pub enum Type {
    Scalar(ScalarType),
    Array(ScalarType),
    Ref(ScalarType),
    /// A float and its tangent (`dpair.make`, `dpair.primal`, `dpair.diff`).
    Pair(ScalarType),
}

impl Type {
    pub const BOOL: Type = Type::Scalar(ScalarType::Bool);
    pub const I64: Type = Type::Scalar(ScalarType::I64);
    pub const F32: Type = Type::Scalar(ScalarType::F32);
    pub const F64: Type = Type::Scalar(ScalarType::F64);

    pub fn scalar(self) -> Option<ScalarType> {
        match self {
            Type::Scalar(s) => Some(s),
            Type::Array(_) | Type::Ref(_) | Type::Pair(_) => None,
        }
    }

    /// The scalar type stored behind an array or reference, or the scalar itself.
    pub fn elem(self) -> ScalarType {
        match self {
            Type::Scalar(s) | Type::Array(s) | Type::Ref(s) | Type::Pair(s) => s,
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
