//! Instructions: one `InstData` variant per shape, with operation enums.
//!
//! Operations are type-generic (`add` on `i64`, `f32` or `f64`); the operand
//! types decide the machine operation. Every result's type is stored on the
//! value, so the textual form prints it (`v3: f64 = add v1, v2`).

mod constant;
mod operands;

pub use constant::{fmt_f32, fmt_f64, Constant};

/// What a `lencheck` checks the length of: its runtime error's message.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum LenCheckOf {
    /// A shadow or tangent against its primal (`lencheck`).
    Shadow,
    /// A Jacobian's `jac` against its rows times columns (`lencheck.jac`).
    Jacobian,
    /// A Hessian's `hess` against its columns squared (`lencheck.hess`).
    Hessian,
    /// An array of a sparse Jacobian's result against the entries it must
    /// hold (`lencheck.nnz n, a`): fails when `len(a) < n`.
    SparseJacobian,
    /// The same for a sparse Hessian (`lencheck.nnz.hess n, a`).
    SparseHessian,
    /// An index into an array (`lencheck.index i, a`): fails unless
    /// `0 <= i < len(a)`, the check of a load at `i` without the load
    /// (element Jacobians' sweeps compute the seeds they would read).
    Index,
}

impl LenCheckOf {
    /// Every kind, for the parser.
    pub const ALL: [LenCheckOf; 6] = [
        LenCheckOf::Shadow,
        LenCheckOf::Jacobian,
        LenCheckOf::Hessian,
        LenCheckOf::SparseJacobian,
        LenCheckOf::SparseHessian,
        LenCheckOf::Index,
    ];

    /// The runtime error when the check fails; [`Self::NEEDED`] stands for
    /// the length required (the check's first operand) and [`Self::ACTUAL`]
    /// for the array's length, where they are named.
    pub fn message(self) -> &'static str {
        match self {
            LenCheckOf::Shadow => "shadow length differs from its primal's",
            LenCheckOf::Jacobian => "len(jac) = {len} differs from nrows * ncols = {n}",
            LenCheckOf::Hessian => "len(hess) = {len} differs from ncols * ncols = {n}",
            LenCheckOf::SparseJacobian => "jacobian needs {n} entries",
            LenCheckOf::SparseHessian => "hessian needs {n} entries",
            LenCheckOf::Index => "index out of bounds",
        }
    }

    /// The placeholder of the required length in [`Self::message`].
    pub const NEEDED: &'static str = "{n}";

    /// The placeholder of the array's length in [`Self::message`].
    pub const ACTUAL: &'static str = "{len}";

    /// The message with the required length `n` and the array's length
    /// `actual` in their places.
    pub fn message_with(self, n: i64, actual: i64) -> String {
        self.message()
            .replace(Self::NEEDED, &n.to_string())
            .replace(Self::ACTUAL, &actual.to_string())
    }

    /// The placeholders the message has, in the order they appear.
    pub fn placeholders(self) -> Vec<&'static str> {
        let m = self.message();
        let mut found: Vec<(usize, &'static str)> = [Self::NEEDED, Self::ACTUAL]
            .into_iter()
            .filter_map(|p| m.find(p).map(|at| (at, p)))
            .collect();
        found.sort();
        found.into_iter().map(|(_, p)| p).collect()
    }

    /// Whether the check fails only on an array shorter than the length
    /// (otherwise on any other length).
    pub fn at_least(self) -> bool {
        matches!(self, LenCheckOf::SparseJacobian | LenCheckOf::SparseHessian)
    }

    /// The instruction's name in textual IR.
    pub fn opcode(self) -> &'static str {
        match self {
            LenCheckOf::Shadow => "lencheck",
            LenCheckOf::Jacobian => "lencheck.jac",
            LenCheckOf::Hessian => "lencheck.hess",
            LenCheckOf::SparseJacobian => "lencheck.nnz",
            LenCheckOf::SparseHessian => "lencheck.nnz.hess",
            LenCheckOf::Index => "lencheck.index",
        }
    }
}

use crate::entity::{Block, FuncId, Value};
use crate::types::ScalarType;
use std::fmt;
macro_rules! op_enum {
    ($(#[$m:meta])* $name:ident { $($var:ident = $text:expr),* $(,)? }) => {
        $(#[$m])*
        #[derive(Clone, Copy, PartialEq, Eq, Debug, Hash)]
        pub enum $name { $($var),* }
        impl $name {
            pub const ALL: &'static [$name] = &[$($name::$var),*];
            pub fn name(self) -> &'static str {
                match self { $($name::$var => $text),* }
            }
            pub fn from_name(s: &str) -> Option<Self> {
                match s { $($text => Some($name::$var),)* _ => None }
            }
        }
        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result { f.write_str(self.name()) }
        }
    };
}

op_enum!(
    /// Unary operations: `neg` on numbers, `not` on bools, `no_diff` (the
    /// identity, with a zero derivative) on anything scalar.
    UnaryOp { Neg = "neg", Not = "not", NoDiff = "no_diff" }
);

op_enum!(
    /// Binary operations on two operands of one scalar type. Integer `div`
    /// and `rem` trap (a runtime error) on a zero divisor and wrap otherwise.
    /// `mulz a, b` is `a * b` on floats except that it is exactly zero when
    /// `a` is zero (the strong zero of derivative code: a zero tangent or
    /// adjoint times an infinite or NaN partial contributes nothing);
    /// `divz a, b` is `a / b` the same way (a tangent or adjoint divided by
    /// a primal value, which `1 / b` would overflow for a subnormal `b`).
    /// `or` is the bitwise or of two `i64` (no `.ad` operator: the
    /// dependency sweep of element Jacobians unites its bit sets with it).
    BinaryOp {
        Add = "add", Sub = "sub", Mul = "mul", Div = "div", Rem = "rem",
        Min = "min", Max = "max", MulZ = "mulz", DivZ = "divz", Or = "or",
    }
);

op_enum!(
    /// Comparisons; `eq`/`ne` also on bools. Float comparisons are ordered
    /// (false on NaN) except `ne`, which is true on NaN, as in C.
    CmpCond { Eq = "eq", Ne = "ne", Lt = "lt", Le = "le", Gt = "gt", Ge = "ge" }
);

op_enum!(
    /// Math built-ins on floats (`abs` also on `i64`); C `math.h` semantics.
    /// `fma a, b, c` is `a * b + c` rounded once (C's `fma`): no `.ad`
    /// built-in, only `contract` makes it.
    MathFunc {
        Sin = "sin", Cos = "cos", Tan = "tan", Asin = "asin", Acos = "acos", Atan = "atan",
        Atan2 = "atan2", Sinh = "sinh", Cosh = "cosh", Tanh = "tanh", Exp = "exp",
        Expm1 = "expm1", Log = "log", Log1p = "log1p", Log2 = "log2", Log10 = "log10",
        Sqrt = "sqrt", Cbrt = "cbrt", Pow = "pow", Hypot = "hypot", Abs = "abs",
        Floor = "floor", Ceil = "ceil", Round = "round", Trunc = "trunc", Fmod = "fmod",
        Erf = "erf", Erfc = "erfc", Lgamma = "lgamma", Fma = "fma",
    }
);

impl MathFunc {
    pub fn arity(self) -> usize {
        match self {
            MathFunc::Fma => 3,
            MathFunc::Atan2 | MathFunc::Pow | MathFunc::Hypot | MathFunc::Fmod => 2,
            _ => 1,
        }
    }

    /// Whether `.ad` source can call it by name (all but `fma`, which only
    /// `contract` makes).
    pub fn in_source(self) -> bool {
        self != MathFunc::Fma
    }

    /// The function a call in `.ad` source names (see [`MathFunc::in_source`]).
    pub fn from_source_name(name: &str) -> Option<Self> {
        Self::from_name(name).filter(|m| m.in_source())
    }

    /// The C math library symbol for this function at a float type.
    pub fn libm_symbol(self, ty: ScalarType) -> String {
        let base = match self {
            MathFunc::Abs => "fabs",
            other => other.name(),
        };
        match ty {
            ScalarType::F32 => format!("{base}f"),
            _ => base.to_string(),
        }
    }
}

/// A branch target with the arguments for its block parameters.
#[derive(Clone, PartialEq, Debug)]
pub struct BlockCall {
    pub block: Block,
    pub args: Vec<Value>,
}

#[derive(Clone, PartialEq, Debug)]
pub enum InstData {
    Const {
        value: Constant,
    },
    Unary {
        op: UnaryOp,
        arg: Value,
    },
    Binary {
        op: BinaryOp,
        args: [Value; 2],
    },
    Cmp {
        cond: CmpCond,
        args: [Value; 2],
    },
    Select {
        cond: Value,
        args: [Value; 2],
    },
    /// Scalar conversion to the result type: float to int truncates toward
    /// zero (saturating, NaN to 0), bool to number is 0 or 1, number to bool
    /// is `!= 0`.
    Convert {
        arg: Value,
    },
    Math {
        func: MathFunc,
        args: Vec<Value>,
    },
    Call {
        func: FuncId,
        args: Vec<Value>,
    },
    /// Number of elements of an array.
    ArrayLen {
        array: Value,
    },
    /// One element; `checked`: an index out of bounds is a runtime error.
    /// An unchecked access is proven in bounds where it stands, and often
    /// only there (below the test of a loop or of `version`'s guard): a
    /// pass that moves one must prove it in bounds where it goes, as
    /// `licm` does, not trust the flag.
    Load {
        array: Value,
        index: Value,
        checked: bool,
    },
    /// Like `Load`, for writing.
    Store {
        array: Value,
        index: Value,
        value: Value,
        checked: bool,
    },
    /// A new zero-filled heap array of the result's element type; a negative
    /// length is a runtime error, exhausted memory too. `zeroed: false`
    /// (`new.uninit`): its elements are unspecified until stored (no
    /// `calloc`): only for arrays whose every element read was stored
    /// before, which the code generated for sparse Hessians declares
    /// (`__adc_uninit`); the interpreter still fills it with zeros.
    ArrayNew {
        len: Value,
        zeroed: bool,
    },
    /// Releases an array made by `new` (no effect on `null`).
    ArrayFree {
        array: Value,
    },
    /// The empty array that owns nothing.
    ArrayNull,
    /// A reference to one element, bounds-checked.
    ElemRef {
        array: Value,
        index: Value,
    },
    RefLoad {
        ptr: Value,
    },
    RefStore {
        ptr: Value,
        value: Value,
    },
    /// A reference to a stack slot of the function's frame, which holds
    /// zero each time the instruction executes (the same slot every time:
    /// a reference taken in an earlier iteration sees the new zero).
    Slot,
    Print {
        args: Vec<Value>,
    },
    /// A fresh heap array holding a copy of `array` (derivative code keeps
    /// an argument's contents for the reverse sweep this way).
    ArrayCopy {
        array: Value,
    },
    /// Elements `lo` to `hi - 1` of `array`, as an array that shares them
    /// (writes through it change `array`); a runtime error unless
    /// `0 <= lo <= hi <= len(array)`. The view owns nothing: it is never
    /// freed, and lives as long as `array`.
    ArrayView {
        array: Value,
        lo: Value,
        hi: Value,
    },
    /// A runtime error ("arguments alias") when the two arrays share an
    /// element: a call may not pass overlapping arrays where one is
    /// writable (docs/arrays.md#the-aliasing-rule). Empty arrays share nothing.
    AliasCheck {
        args: [Value; 2],
    },
    /// A runtime error unless the two arrays have the same length (a
    /// shadow must be as long as its primal); `lencheck n, a` with an
    /// `i64` first: unless `a` has `n` elements (a vector-mode shadow holds
    /// `W` times its primal's elements). `what` is the length checked,
    /// which the error names.
    LenCheck {
        args: [Value; 2],
        what: LenCheckOf,
    },
    /// Releases an array when the function returns rather than now.
    DeferFree {
        array: Value,
    },
    /// Marks a loop header: `[checkpoint(K)]` on the loop (K = `every`) or
    /// `[checkpoint]` (`every` = 0, the compiler chooses). Does nothing when
    /// run; reverse-mode derivatives run such a loop in checkpointed
    /// segments (`ad::outline`).
    LoopCheckpoint {
        every: u32,
    },
    /// Appends a value to one of the function's tapes (one set per call,
    /// each grows on demand; exhausted memory is a runtime error). A
    /// derivative tapes on tape 0; a reverse derivative of code that
    /// already uses tapes moves that code's tapes up by one (`unzip`), so
    /// every level of a nested derivative has a stack of its own.
    TapePush {
        value: Value,
        tape: u8,
    },
    /// Removes and returns the last value pushed (reverse sweep).
    TapePop {
        tape: u8,
    },
    /// Returns the oldest value not read yet (forward replay after unzip).
    TapeRead {
        tape: u8,
    },
    /// Lends this call's tape 0 and deferred-free list to a callee: returns
    /// a handle (`i64`) to their state, which the callee adopts and gives
    /// back. Until `tape.reclaim` the call must not use them. Split-mode
    /// calls (`ad::split`) go `tape.lend`, the call, `tape.reclaim`.
    TapeLend,
    /// Takes back what `tape.lend` lent (the callee may have grown it).
    TapeReclaim {
        handle: Value,
    },
    /// This call works on the tape and deferred list lent at `handle` (its
    /// own are empty until then): a split-mode half starts with it.
    TapeAdopt {
        handle: Value,
    },
    /// Gives the adopted tape and deferred list back to `handle`; this
    /// call's own are empty again, so its return frees nothing of them.
    TapeGive {
        handle: Value,
    },
    /// `dst[dst_index + k] = src[src_index + k]` for `0 <= k < count`, as if
    /// through a temporary (the arrays may be one); nothing when `count <= 0`.
    /// Unchecked: only `copy-loops` makes it, from a loop whose accesses
    /// `bce` proved in bounds.
    CopyRange {
        dst: Value,
        dst_index: Value,
        src: Value,
        src_index: Value,
        count: Value,
    },
    /// A `dpair<T>` of a float and its tangent.
    PairMake {
        args: [Value; 2],
    },
    /// The float of a `dpair<T>`.
    PairPrimal {
        pair: Value,
    },
    /// The tangent of a `dpair<T>`.
    PairDiff {
        pair: Value,
    },
    Jump {
        dest: BlockCall,
    },
    Branch {
        cond: Value,
        then_dest: BlockCall,
        else_dest: BlockCall,
    },
    Return {
        args: Vec<Value>,
    },
}

impl InstData {
    pub fn is_terminator(&self) -> bool {
        matches!(
            self,
            InstData::Jump { .. } | InstData::Branch { .. } | InstData::Return { .. }
        )
    }

    /// The tape (`tape.*`) and `dpair.*` instructions: made by the
    /// derivative passes and lowered by codegen, never written in textual IR.
    pub fn is_internal(&self) -> bool {
        matches!(
            self,
            InstData::TapePush { .. }
                | InstData::TapePop { .. }
                | InstData::TapeRead { .. }
                | InstData::TapeLend
                | InstData::TapeReclaim { .. }
                | InstData::TapeAdopt { .. }
                | InstData::TapeGive { .. }
                | InstData::PairMake { .. }
                | InstData::PairPrimal { .. }
                | InstData::PairDiff { .. }
        )
    }

    /// True when removing the instruction (if its results are unused) changes
    /// nothing observable. Runtime checks count as effects. Every instruction
    /// not named here has effects (calls, stores, allocation and freeing,
    /// checks, `print`, the tape, terminators), so a new one is kept until
    /// it is listed.
    pub fn has_side_effects(&self) -> bool {
        match self {
            InstData::Const { .. }
            | InstData::Unary { .. }
            | InstData::Cmp { .. }
            | InstData::Select { .. }
            | InstData::Convert { .. }
            | InstData::Math { .. }
            | InstData::ArrayLen { .. }
            | InstData::ArrayNull
            | InstData::Slot
            | InstData::RefLoad { .. }
            | InstData::PairMake { .. }
            | InstData::PairPrimal { .. }
            | InstData::PairDiff { .. } => false,
            InstData::Binary { op, .. } => matches!(op, BinaryOp::Div | BinaryOp::Rem),
            InstData::Load { checked, .. } => *checked,
            _ => true,
        }
    }

    /// True when the result depends only on the operands: equal
    /// instructions give equal results, so CSE may merge them. That is every
    /// instruction without effects but loads (memory changes), `slot` (it
    /// makes a distinct object) and `null`.
    pub fn is_pure(&self) -> bool {
        !self.has_side_effects()
            && !matches!(
                self,
                InstData::Load { .. }
                    | InstData::RefLoad { .. }
                    | InstData::Slot
                    | InstData::ArrayNull
            )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What DCE may drop, what CSE may merge, what textual IR refuses.
    #[test]
    fn effects_purity_and_internal_instructions() {
        let v = Value::new(0);
        let load = |checked| InstData::Load {
            array: v,
            index: v,
            checked,
        };
        let div = InstData::Binary {
            op: BinaryOp::Div,
            args: [v, v],
        };
        let add = InstData::Binary {
            op: BinaryOp::Add,
            args: [v, v],
        };
        let push = InstData::TapePush { value: v, tape: 0 };
        let pair = InstData::PairMake { args: [v, v] };
        // (effects, pure, internal)
        for (inst, want) in [
            (add, (false, true, false)),
            (div, (true, false, false)),
            (load(true), (true, false, false)),
            (load(false), (false, false, false)),
            (InstData::Slot, (false, false, false)),
            (InstData::ArrayNull, (false, false, false)),
            (InstData::RefLoad { ptr: v }, (false, false, false)),
            (pair, (false, true, true)),
            (push, (true, false, true)),
            (InstData::TapeLend, (true, false, true)),
            (InstData::Return { args: vec![] }, (true, false, false)),
        ] {
            let got = (inst.has_side_effects(), inst.is_pure(), inst.is_internal());
            assert_eq!(got, want, "{inst:?}");
        }
    }
}
