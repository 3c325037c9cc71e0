//! Typed calls of JIT-compiled functions: a `TypedFunc<P, R>` is checked
//! once against the function's signature and then called with plain Rust
//! values, slices borrowed in place (no copies), writable slices and
//! `&mut` scalars for `inout`/`out` parameters, and results as Rust values
//! or tuples.

use super::module::{invoke, CallError, JitFunction, JitModule};
use adc_ir::{ParamMode, ScalarType, Type};
use std::marker::PhantomData;

/// What a parameter of the language a Rust argument type stands for.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum ParamKind {
    /// A by-value scalar.
    Scalar(ScalarType),
    /// An `inout`/`out` scalar.
    Ref(ScalarType),
    /// An array, writable (`inout`/`out`) or not.
    Array(ScalarType, bool),
}

/// Supertraits no other crate can implement: `Arg`, `Args`, `Ret` and
/// `Rets` decide the words a call passes and reads, so an impl outside
/// this crate could hand the JIT a bogus pointer from safe code.
mod sealed {
    pub trait Arg {}
    pub trait Args {}
    pub trait Ret {}
    pub trait Rets {}
}

/// A Rust value passed as one parameter: `f64`, `f32`, `i64`, `bool`;
/// `&[T]` for a read-only array, `&mut [T]` for an `inout`/`out` one
/// (`T` = `f64`, `f32`, `i64`); `&mut f64` / `&mut i64` for an
/// `inout`/`out` scalar.
///
/// Sealed: no other type can be an `Arg`, since its words go to compiled
/// code as pointers and lengths.
///
/// ```compile_fail
/// struct Bogus;
/// impl adc_codegen::Arg for Bogus {
///     const KIND: adc_codegen::ParamKind =
///         adc_codegen::ParamKind::Array(adc_ir::ScalarType::F64, false);
///     type At<'a> = Bogus;
///     fn push(&mut self, slots: &mut Vec<u64>) { slots.extend([16, 1 << 40]); }
/// }
/// ```
pub trait Arg: sealed::Arg {
    /// The parameter this type passes.
    const KIND: ParamKind;
    /// The same type with its borrow (if any) at lifetime `'a`: a handle
    /// typed `&mut [f64]` takes a fresh `&mut` borrow at every call.
    type At<'a>: Arg;
    /// Appends this argument's words to the call's slots (as the C ABI
    /// passes it: a scalar's bits, an array's pointer and length).
    ///
    /// ```
    /// # use adc_codegen::Arg;
    /// let mut slots = Vec::new();
    /// 1.5f64.push(&mut slots);
    /// (&[1i64, 2][..]).push(&mut slots);
    /// assert_eq!(slots.len(), 3);
    /// assert_eq!((slots[0], slots[2]), (1.5f64.to_bits(), 2));
    /// ```
    fn push(&mut self, slots: &mut Vec<u64>);
}

macro_rules! scalar_arg {
    ($t:ty, $s:expr, $bits:expr) => {
        impl sealed::Arg for $t {}
        impl Arg for $t {
            const KIND: ParamKind = ParamKind::Scalar($s);
            type At<'a> = $t;
            fn push(&mut self, slots: &mut Vec<u64>) {
                slots.push($bits(*self));
            }
        }
    };
}
scalar_arg!(f64, ScalarType::F64, f64::to_bits);
scalar_arg!(f32, ScalarType::F32, |x: f32| x.to_bits() as u64);
scalar_arg!(i64, ScalarType::I64, |x: i64| x as u64);
scalar_arg!(bool, ScalarType::Bool, |x: bool| x as u64);

macro_rules! array_arg {
    ($t:ty, $s:expr) => {
        impl sealed::Arg for &[$t] {}
        impl sealed::Arg for &mut [$t] {}
        impl Arg for &[$t] {
            const KIND: ParamKind = ParamKind::Array($s, false);
            type At<'a> = &'a [$t];
            fn push(&mut self, slots: &mut Vec<u64>) {
                slots.push(self.as_ptr() as u64);
                slots.push(self.len() as u64);
            }
        }
        impl Arg for &mut [$t] {
            const KIND: ParamKind = ParamKind::Array($s, true);
            type At<'a> = &'a mut [$t];
            fn push(&mut self, slots: &mut Vec<u64>) {
                slots.push(self.as_mut_ptr() as u64);
                slots.push(self.len() as u64);
            }
        }
    };
}
array_arg!(f64, ScalarType::F64);
array_arg!(f32, ScalarType::F32);
array_arg!(i64, ScalarType::I64);

macro_rules! ref_arg {
    ($t:ty, $s:expr) => {
        impl sealed::Arg for &mut $t {}
        impl Arg for &mut $t {
            const KIND: ParamKind = ParamKind::Ref($s);
            type At<'a> = &'a mut $t;
            fn push(&mut self, slots: &mut Vec<u64>) {
                slots.push(&mut **self as *mut $t as u64);
            }
        }
    };
}
ref_arg!(f64, ScalarType::F64);
ref_arg!(i64, ScalarType::I64);

/// The parameter kind of a signature's parameter (`None` for a `dpair`,
/// which no verified signature of a final module has).
///
/// ```
/// # use adc_codegen::ParamKind;
/// # use adc_ir::ScalarType;
/// let ir = adc_ir::parse_module("extern @sum(out xs: arr<f64>) -> f64").unwrap();
/// let param = &ir.funcs[0].params[0];
/// assert_eq!(adc_codegen::kind_of(param), Some(ParamKind::Array(ScalarType::F64, true)));
/// ```
pub fn kind_of(p: &adc_ir::Param) -> Option<ParamKind> {
    let writable = p.mode != ParamMode::In;
    match p.ty {
        Type::Scalar(s) => Some(ParamKind::Scalar(s)),
        Type::Ref(s) => Some(ParamKind::Ref(s)),
        Type::Array(s) => Some(ParamKind::Array(s, writable)),
        Type::Pair(_) => None,
    }
}

/// A tuple of `Arg`s: all the parameters of a call, `()` for none.
pub trait Args: sealed::Args {
    /// The kinds of the parameters, in order.
    ///
    /// ```
    /// # use adc_codegen::{Args, ParamKind};
    /// # use adc_ir::ScalarType;
    /// assert_eq!(<(bool, &mut f64) as Args>::kinds(), [ParamKind::Scalar(ScalarType::Bool), ParamKind::Ref(ScalarType::F64)]);
    /// assert!(<() as Args>::kinds().is_empty());
    /// ```
    fn kinds() -> Vec<ParamKind>;
    /// The same tuple with every borrow at lifetime `'a` (see `Arg::At`).
    type At<'a>: Args;
    /// Appends every argument's words to the call's slots.
    ///
    /// ```
    /// # use adc_codegen::Args;
    /// let mut slots = Vec::new();
    /// (2i64, true).push_all(&mut slots);
    /// assert_eq!(slots, [2, 1]);
    /// ```
    fn push_all(&mut self, slots: &mut Vec<u64>);
}

/// One result value: `f64`, `f32`, `i64` or `bool`.
pub trait Ret: Sized + sealed::Ret {
    /// The result's type.
    const TYPE: ScalarType;
    /// The value from its result word.
    ///
    /// ```
    /// # use adc_codegen::Ret;
    /// assert_eq!(<f64 as Ret>::from_bits(2.5f64.to_bits()), 2.5);
    /// assert_eq!(<i64 as Ret>::from_bits(u64::MAX), -1);
    /// ```
    fn from_bits(bits: u64) -> Self;
}

impl sealed::Ret for f64 {}
impl Ret for f64 {
    const TYPE: ScalarType = ScalarType::F64;
    fn from_bits(bits: u64) -> Self {
        f64::from_bits(bits)
    }
}
impl sealed::Ret for f32 {}
impl Ret for f32 {
    const TYPE: ScalarType = ScalarType::F32;
    fn from_bits(bits: u64) -> Self {
        f32::from_bits(bits as u32)
    }
}
impl sealed::Ret for i64 {}
impl Ret for i64 {
    const TYPE: ScalarType = ScalarType::I64;
    fn from_bits(bits: u64) -> Self {
        bits as i64
    }
}
impl sealed::Ret for bool {}
impl Ret for bool {
    const TYPE: ScalarType = ScalarType::Bool;
    fn from_bits(bits: u64) -> Self {
        bits & 0xff != 0
    }
}

/// All the results of a call: `()` for `void`, a `Ret` for one result,
/// a tuple of `Ret`s for a tuple.
pub trait Rets: Sized + sealed::Rets {
    /// The result types, in order.
    ///
    /// ```
    /// # use adc_codegen::Rets;
    /// # use adc_ir::ScalarType;
    /// assert_eq!(<(f32, bool) as Rets>::types(), [ScalarType::F32, ScalarType::Bool]);
    /// assert!(<() as Rets>::types().is_empty());
    /// ```
    fn types() -> Vec<ScalarType>;
    /// The values from the result words.
    ///
    /// ```
    /// # use adc_codegen::Rets;
    /// assert_eq!(<(i64, bool) as Rets>::from_words(&[7, 0]), (7, false));
    /// ```
    fn from_words(words: &[u64]) -> Self;
}

impl sealed::Rets for () {}
impl Rets for () {
    fn types() -> Vec<ScalarType> {
        Vec::new()
    }
    fn from_words(_: &[u64]) -> Self {}
}

macro_rules! single_ret {
    ($($t:ty),*) => {$(
        impl sealed::Rets for $t {}
        impl Rets for $t {
            fn types() -> Vec<ScalarType> {
                vec![<$t as Ret>::TYPE]
            }
            fn from_words(words: &[u64]) -> Self {
                <$t as Ret>::from_bits(words[0])
            }
        }
    )*};
}
single_ret!(f64, f32, i64, bool);

macro_rules! tuples {
    ($(($($a:ident $i:tt),+))*) => {$(
        impl<$($a: Arg),+> sealed::Args for ($($a,)+) {}
        impl<$($a: Arg),+> Args for ($($a,)+) {
            fn kinds() -> Vec<ParamKind> {
                vec![$($a::KIND),+]
            }
            type At<'a> = ($($a::At<'a>,)+);
            fn push_all(&mut self, slots: &mut Vec<u64>) {
                $(self.$i.push(slots);)+
            }
        }
        impl<$($a: Ret),+> sealed::Rets for ($($a,)+) {}
        impl<$($a: Ret),+> Rets for ($($a,)+) {
            fn types() -> Vec<ScalarType> {
                vec![$($a::TYPE),+]
            }
            fn from_words(words: &[u64]) -> Self {
                ($($a::from_bits(words[$i]),)+)
            }
        }
    )*};
}
tuples! {
    (A 0)
    (A 0, B 1)
    (A 0, B 1, C 2)
    (A 0, B 1, C 2, D 3)
    (A 0, B 1, C 2, D 3, E 4)
    (A 0, B 1, C 2, D 3, E 4, F 5)
    (A 0, B 1, C 2, D 3, E 4, F 5, G 6)
    (A 0, B 1, C 2, D 3, E 4, F 5, G 6, H 7)
}

impl sealed::Args for () {}
impl Args for () {
    fn kinds() -> Vec<ParamKind> {
        Vec::new()
    }
    type At<'a> = ();
    fn push_all(&mut self, _: &mut Vec<u64>) {}
}

/// A function of a `JitModule` with its signature checked once: call it
/// with `P`, a tuple of arguments, and get `R` back.
pub struct TypedFunc<'m, P, R> {
    func: &'m JitFunction,
    _types: PhantomData<fn(P) -> R>,
}

impl<P: Args, R: Rets> TypedFunc<'_, P, R> {
    /// Calls the function. Arrays are passed in place (writable ones are
    /// written in place); a runtime error (an index out of bounds, ...) is
    /// `Err(CallError::Runtime)`.
    ///
    /// The arguments borrow only for the call: a handle typed with
    /// `&mut [f64]` can be called again and again on the same slice.
    ///
    /// ```
    /// # use adc_codegen::{CallError, TypedFunc};
    /// # let ir = adc_ir::parse_module("func @twice(x: f64) -> f64 {\n\
    /// #     block0(v0: f64):\n v1: f64 = add v0, v0\n return v1\n }\n\
    /// #     func @fill(out ys: arr<f64>, k: f64) {\n\
    /// #     block0(v0: arr<f64>, v1: f64):\n v2: i64 = const 0\n store v0, v2, v1\n return\n }").unwrap();
    /// # adc_ir::verify(&ir).unwrap();
    /// # let jit = adc_codegen::jit(&ir, &|_| "f.ad:1:1".to_string(), &[]).unwrap();
    /// // `jit` holds `double twice(double x) { return x + x; }` and
    /// // `void fill(out double[] ys, double k) { ys[0] = k; }`, compiled.
    /// let twice: TypedFunc<(f64,), f64> = jit.typed("twice").expect("signature");
    /// assert_eq!(twice.call((1.5,)), Ok(3.0));
    ///
    /// let fill: TypedFunc<(&mut [f64], f64), ()> = jit.typed("fill").expect("signature");
    /// let mut ys = [0.0; 2];
    /// for k in [1.0, 2.0] {
    ///     fill.call((&mut ys[..], k)).expect("runs");
    /// }
    /// assert_eq!(ys, [2.0, 0.0]);
    /// assert!(matches!(fill.call((&mut [][..], 1.0)), Err(CallError::Runtime(_))));
    /// ```
    pub fn call(&self, args: P::At<'_>) -> Result<R, CallError> {
        let mut args = args;
        let mut slots = Vec::with_capacity(2 * self.func.params.len());
        args.push_all(&mut slots);
        let mut rets = [0u64; 8];
        let n = self.func.returns.len();
        let mut heap;
        let rets: &mut [u64] = if n <= rets.len() {
            &mut rets[..]
        } else {
            heap = vec![0u64; n];
            &mut heap[..]
        };
        // SAFETY: `typed` checked `P`'s kinds against the parameters, so
        // each argument pushed its words as the parameter expects (arrays
        // as pointer and length of a live slice, writable ones `&mut`,
        // references as pointers to a value of the element type), all
        // borrowed for this call; `rets` has room for every result.
        unsafe { invoke(self.func, &slots, rets)? };
        Ok(R::from_words(rets))
    }
}

impl JitModule {
    /// `name` as a typed function, or an error if it does not exist or its
    /// signature is not `P -> R` (see `Arg`, `Rets`).
    ///
    /// ```
    /// # use adc_codegen::{CallError, TypedFunc};
    /// # let ir = adc_ir::parse_module("func @twice(x: f64) -> f64 {\n\
    /// #     block0(v0: f64):\n v1: f64 = add v0, v0\n return v1\n }\n\
    /// #     func @fill(out ys: arr<f64>, k: f64) {\n\
    /// #     block0(v0: arr<f64>, v1: f64):\n v2: i64 = const 0\n store v0, v2, v1\n return\n }").unwrap();
    /// # adc_ir::verify(&ir).unwrap();
    /// # let jit = adc_codegen::jit(&ir, &|_| "f.ad:1:1".to_string(), &[]).unwrap();
    /// // `jit` holds `double twice(double x) { return x + x; }` and
    /// // `void fill(out double[] ys, double k) { ys[0] = k; }`, compiled.
    /// let twice: TypedFunc<(f64,), f64> = jit.typed("twice").expect("signature");
    /// assert_eq!(twice.call((4.0,)), Ok(8.0));
    /// assert!(matches!(jit.typed::<(f64,), f64>("thrice"), Err(CallError::UnknownFunction(_))));
    /// let err = jit.typed::<(i64,), f64>("twice").err().expect("an `int` parameter");
    /// assert_eq!(
    ///     err.to_string(),
    ///     "`twice` is `double twice(double x)`; the handle's types make it `double twice(int)`"
    /// );
    /// let err = jit.typed::<(&mut [f64], f64, f64), f32>("fill").err().expect("not its signature");
    /// assert_eq!(
    ///     err,
    ///     CallError::Signature {
    ///         function: "fill".into(),
    ///         expected: "void fill(out double[] ys, double k)".into(),
    ///         found: "float fill(out double[], double, double)".into(),
    ///     }
    /// );
    /// ```
    pub fn typed<P: Args, R: Rets>(&self, name: &str) -> Result<TypedFunc<'_, P, R>, CallError> {
        let func = self
            .function(name)
            .ok_or_else(|| CallError::UnknownFunction(name.to_string()))?;
        let kinds = P::kinds();
        let returns: Vec<ScalarType> = func.returns.iter().map(|t| t.elem()).collect();
        let fits = kinds.len() == func.params.len()
            && kinds
                .iter()
                .zip(&func.params)
                .all(|(k, p)| kind_of(p) == Some(*k));
        if !fits || returns != R::types() {
            return Err(CallError::Signature {
                function: name.to_string(),
                expected: super::signature::declared(name, &func.params, &func.returns),
                found: super::signature::asked(name, &func.params, &kinds, &R::types()),
            });
        }
        Ok(TypedFunc {
            func,
            _types: PhantomData,
        })
    }
}
