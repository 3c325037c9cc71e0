//! Host functions: Rust functions that JIT-compiled `.ad` code calls
//! through its `extern` declarations (docs/cli.md: externs resolve
//! "against the C math library and symbols the host registers").
//!
//! A host function is an `extern "C" fn` over scalars (`f64`, `f32`,
//! `i64`, `bool`), registered under the name the `.ad` source declares.
//! Its signature is checked against the declaration when the module is
//! compiled: a mismatch is a compile error (E0500), never a wrong call.
//!
//! ```
//! extern "C" fn bump(x: f64) -> f64 {
//!     x + 1.0
//! }
//!
//! let source = "extern double bump(double x);
//! double g(double x) { return bump(x) * x; }";
//! let mut host = adc::HostFunctions::new();
//! host.func("bump", bump as extern "C" fn(f64) -> f64);
//! let jit = adc::compile_jit_with_host("g.ad", source, &[], &host).expect("compiles");
//! let g: adc::TypedFunc<(f64,), f64> = jit.typed("g").expect("signature");
//! assert_eq!(g.call((2.0,)), Ok(6.0));
//! ```
//!
//! A derivative through a host function needs its derivative: a
//! `[reverse_derivative(..)]` / `[forward_derivative(..)]` attribute on the
//! `extern` declaration (docs/derivatives.md#custom-derivatives) naming an `.ad` function, or a
//! second host function declared as such.
//!
//! Arrays and `inout`/`out` scalars are passed as in C (docs/embedding.md#the-c-signature-of-a-function):
//! `double[] x` as `*const f64` and an `i64` length, `inout double[] x`
//! (or `out`) as `*mut f64` and the length, `inout double x` as
//! `*mut f64`. The check compares the Rust signature with that lowering of
//! the declaration, so a pointer without its length, or a `*const` for a
//! writable array, is an error. The host function reads the memory
//! through the pointers it is given, for the length it is given:
//!
//! ```
//! extern "C" fn total(x: *const f64, n: i64) -> f64 {
//!     // The JIT passes an array's pointer and its length (docs/embedding.md#the-c-signature-of-a-function).
//!     unsafe { std::slice::from_raw_parts(x, n as usize) }.iter().sum()
//! }
//! let source = "extern double total(double[] x);
//! double g(double[] x) { return total(x) * 2.0; }";
//! let mut host = adc::HostFunctions::new();
//! host.func("total", total as extern "C" fn(*const f64, i64) -> f64);
//! let jit = adc::compile_jit_with_host("g.ad", source, &[], &host).expect("compiles");
//! let g: adc::TypedFunc<(&[f64],), f64> = jit.typed("g").expect("signature");
//! assert_eq!(g.call((&[1.0, 2.0, 3.5][..],)), Ok(13.0));
//! ```
//!
//! `HostFunctions::raw` registers any symbol, unchecked.

use adc_codegen::ParamKind;
use adc_ir::{Module, ScalarType};

/// One C-ABI parameter of a host function: a scalar, or a pointer to
/// scalars (`true`: `*mut`, writable).
///
/// ```
/// use adc::{CParam, HostFn, ScalarType};
///
/// type Total = extern "C" fn(*const f64, i64, *mut f64);
/// assert_eq!(
///     <Total as HostFn>::params(),
///     [
///         CParam::Pointer(ScalarType::F64, false),
///         CParam::Scalar(ScalarType::I64),
///         CParam::Pointer(ScalarType::F64, true),
///     ]
/// );
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CParam {
    /// A scalar by value.
    Scalar(ScalarType),
    /// A pointer to scalars: `*mut` when the flag is `true`, else `*const`.
    Pointer(ScalarType, bool),
}

impl CParam {
    fn text(self) -> String {
        match self {
            CParam::Scalar(s) => s.name().to_string(),
            CParam::Pointer(s, true) => format!("*mut {}", s.name()),
            CParam::Pointer(s, false) => format!("*const {}", s.name()),
        }
    }
}

/// Supertraits no other crate can implement: the host traits tell the
/// JIT how to call a function pointer, so an impl for another type (a
/// struct claiming to be an `f64`, a bogus `address`) could make safe code
/// call with the wrong ABI or jump anywhere.
mod sealed {
    pub trait HostScalar {}
    pub trait HostParam {}
    pub trait HostResult {}
    pub trait HostFn {}
}

/// A scalar a host function takes or returns: `f64`, `f32`, `i64`,
/// `bool`.
///
/// ```
/// use adc::{HostScalar, ScalarType};
///
/// assert_eq!(<i64 as HostScalar>::TYPE, ScalarType::I64);
/// assert_eq!(<bool as HostScalar>::TYPE, ScalarType::Bool);
/// ```
pub trait HostScalar: sealed::HostScalar {
    /// The language's type of the scalar.
    const TYPE: ScalarType;
}
impl sealed::HostScalar for f64 {}
impl HostScalar for f64 {
    const TYPE: ScalarType = ScalarType::F64;
}
impl sealed::HostScalar for f32 {}
impl HostScalar for f32 {
    const TYPE: ScalarType = ScalarType::F32;
}
impl sealed::HostScalar for i64 {}
impl HostScalar for i64 {
    const TYPE: ScalarType = ScalarType::I64;
}
impl sealed::HostScalar for bool {}
impl HostScalar for bool {
    const TYPE: ScalarType = ScalarType::Bool;
}

/// A parameter a host function takes: a scalar, or a raw pointer to
/// scalars (the C ABI of arrays and `inout`/`out` scalars).
///
/// ```
/// use adc::{CParam, HostParam, ScalarType};
///
/// assert_eq!(<f32 as HostParam>::TYPE, CParam::Scalar(ScalarType::F32));
/// assert_eq!(<*mut i64 as HostParam>::TYPE, CParam::Pointer(ScalarType::I64, true));
/// ```
pub trait HostParam: sealed::HostParam {
    /// The parameter in the C ABI.
    const TYPE: CParam;
}
impl<T: HostScalar> sealed::HostParam for T {}
impl<T: HostScalar> HostParam for T {
    const TYPE: CParam = CParam::Scalar(T::TYPE);
}
impl<T: HostScalar> sealed::HostParam for *const T {}
impl<T: HostScalar> HostParam for *const T {
    const TYPE: CParam = CParam::Pointer(T::TYPE, false);
}
impl<T: HostScalar> sealed::HostParam for *mut T {}
impl<T: HostScalar> HostParam for *mut T {
    const TYPE: CParam = CParam::Pointer(T::TYPE, true);
}

/// What a host function returns: a scalar, or `()` for a `void` extern.
///
/// ```
/// use adc::{HostResult, ScalarType};
///
/// assert_eq!(<f64 as HostResult>::TYPE, Some(ScalarType::F64));
/// assert_eq!(<() as HostResult>::TYPE, None);
/// ```
pub trait HostResult: sealed::HostResult {
    /// The result's type, `None` for `void`.
    const TYPE: Option<ScalarType>;
}
impl<T: HostScalar> sealed::HostResult for T {}
impl<T: HostScalar> HostResult for T {
    const TYPE: Option<ScalarType> = Some(T::TYPE);
}
impl sealed::HostResult for () {}
impl HostResult for () {
    const TYPE: Option<ScalarType> = None;
}

/// An `extern "C" fn` that can be registered: its signature and address.
/// Implemented for `extern "C" fn`s of up to eight [`HostParam`]s
/// returning a [`HostResult`].
///
/// ```
/// use adc::{CParam, HostFn, ScalarType};
///
/// extern "C" fn clamp(x: f64, lo: f64, hi: f64) -> f64 {
///     x.clamp(lo, hi)
/// }
/// let f = clamp as extern "C" fn(f64, f64, f64) -> f64;
/// assert_eq!(<extern "C" fn(f64, f64, f64) -> f64 as HostFn>::params().len(), 3);
/// assert_eq!(HostFn::address(f), clamp as *const u8);
/// ```
///
/// Sealed, with [`HostParam`], [`HostResult`] and [`HostScalar`]: only
/// `extern "C" fn`s of those types can be registered.
///
/// ```compile_fail
/// #[derive(Clone, Copy)]
/// struct Anywhere;
/// impl adc::HostFn for Anywhere {
///     fn params() -> Vec<adc::CParam> { Vec::new() }
///     fn result() -> Option<adc::ScalarType> { None }
///     fn address(self) -> *const u8 { 16 as *const u8 }
/// }
/// ```
pub trait HostFn: Copy + sealed::HostFn {
    /// The parameters, in order.
    ///
    /// ```
    /// use adc::{CParam, HostFn, ScalarType};
    ///
    /// type F = extern "C" fn(*const f64, i64) -> f64;
    /// assert_eq!(<F as HostFn>::params()[1], CParam::Scalar(ScalarType::I64));
    /// ```
    fn params() -> Vec<CParam>;
    /// The result's type, `None` for `void`.
    ///
    /// ```
    /// use adc::{HostFn, ScalarType};
    ///
    /// assert_eq!(<extern "C" fn(f64) -> bool as HostFn>::result(), Some(ScalarType::Bool));
    /// assert_eq!(<extern "C" fn(*mut f64, i64) as HostFn>::result(), None);
    /// ```
    fn result() -> Option<ScalarType>;
    /// The function's address, which the JIT calls.
    ///
    /// ```
    /// use adc::HostFn;
    ///
    /// extern "C" fn one() -> f64 {
    ///     1.0
    /// }
    /// let f = one as extern "C" fn() -> f64;
    /// assert_eq!(f.address(), one as *const u8);
    /// ```
    fn address(self) -> *const u8;
}

macro_rules! host_fn {
    ($($a:ident),*) => {
        impl<R: HostResult, $($a: HostParam),*> sealed::HostFn for extern "C" fn($($a),*) -> R {}
        impl<R: HostResult, $($a: HostParam),*> HostFn for extern "C" fn($($a),*) -> R {
            fn params() -> Vec<CParam> {
                vec![$($a::TYPE),*]
            }
            fn result() -> Option<ScalarType> {
                R::TYPE
            }
            fn address(self) -> *const u8 {
                self as *const u8
            }
        }
    };
}
host_fn!();
host_fn!(A);
host_fn!(A, B);
host_fn!(A, B, C);
host_fn!(A, B, C, D);
host_fn!(A, B, C, D, E);
host_fn!(A, B, C, D, E, F);
host_fn!(A, B, C, D, E, F, G);
host_fn!(A, B, C, D, E, F, G, H);

struct Entry {
    name: String,
    address: *const u8,
    /// `None` for a raw symbol: not checked.
    signature: Option<(Vec<CParam>, Option<ScalarType>)>,
}

/// The host functions a JIT module may call, by the names `.ad` declares
/// them under; [`compile_jit_with_host`](crate::compile_jit_with_host)
/// takes them.
///
/// ```
/// extern "C" fn twice(x: f64) -> f64 {
///     2.0 * x
/// }
/// extern "C" fn dtwice(_x: f64, seed: f64) -> f64 {
///     2.0 * seed
/// }
///
/// let src = "extern double dtwice(double x, double seed);
/// [reverse_derivative(dtwice)]
/// extern double twice(double x);
/// double f(double x) { return twice(x) * x; }";
/// let mut host = adc::HostFunctions::new();
/// host.func("twice", twice as extern "C" fn(f64) -> f64)
///     .func("dtwice", dtwice as extern "C" fn(f64, f64) -> f64);
/// let jit = adc::compile_jit_with_host("f.ad", src, &[adc::Derivative::gradient("f", "df")], &host)
///     .expect("compiles");
/// let df: adc::TypedFunc<(f64, f64), (f64, f64)> = jit.typed("df").expect("signature");
/// assert_eq!(df.call((3.0, 1.0)), Ok((18.0, 12.0))); // f = 2x², f' = 4x
/// ```
#[derive(Default)]
pub struct HostFunctions {
    entries: Vec<Entry>,
}

impl HostFunctions {
    /// No host functions: externs resolve against the C library only.
    ///
    /// ```
    /// let host = adc::HostFunctions::new();
    /// let src = "extern double hypot(double x, double y); double f(double x) { return hypot(x, 4.0); }";
    /// let jit = adc::compile_jit_with_host("f.ad", src, &[], &host).expect("libm has hypot");
    /// let f: adc::TypedFunc<(f64,), f64> = jit.typed("f").expect("signature");
    /// assert_eq!(f.call((3.0,)), Ok(5.0));
    /// ```
    pub fn new() -> HostFunctions {
        HostFunctions::default()
    }

    /// Registers `f` as the extern `name` (a later registration of the
    /// same name replaces it). Cast a function item to its pointer type:
    ///
    /// ```
    /// extern "C" fn clamp01(x: f64) -> f64 {
    ///     x.clamp(0.0, 1.0)
    /// }
    /// let mut host = adc::HostFunctions::new();
    /// host.func("clamp01", clamp01 as extern "C" fn(f64) -> f64);
    /// let src = "extern double clamp01(double x); double f(double x) { return clamp01(x) * 2.0; }";
    /// let jit = adc::compile_jit_with_host("f.ad", src, &[], &host).expect("compiles");
    /// let f: adc::TypedFunc<(f64,), f64> = jit.typed("f").expect("signature");
    /// assert_eq!(f.call((3.0,)), Ok(2.0));
    /// ```
    pub fn func<F: HostFn>(&mut self, name: &str, f: F) -> &mut HostFunctions {
        self.insert(Entry {
            name: name.into(),
            address: f.address(),
            signature: Some((F::params(), F::result())),
        })
    }

    /// Registers the address of any symbol as the extern `name`, with no
    /// signature check.
    ///
    /// # Safety
    /// `address` must be a function with the C ABI of the declaration
    /// (docs/embedding.md#the-c-signature-of-a-function) that stays valid while the JIT module lives.
    ///
    /// ```
    /// extern "C" fn answer() -> i64 {
    ///     42
    /// }
    ///
    /// let mut host = adc::HostFunctions::new();
    /// // SAFETY: `answer` has the C ABI of `extern int answer()` and is
    /// // valid for the whole program.
    /// unsafe { host.raw("answer", answer as *const u8) };
    /// let src = "extern int answer(); int f() { return answer() + 1; }";
    /// let jit = adc::compile_jit_with_host("f.ad", src, &[], &host).expect("compiles");
    /// let f: adc::TypedFunc<(), i64> = jit.typed("f").expect("signature");
    /// assert_eq!(f.call(()), Ok(43));
    /// ```
    pub unsafe fn raw(&mut self, name: &str, address: *const u8) -> &mut HostFunctions {
        self.insert(Entry {
            name: name.into(),
            address,
            signature: None,
        })
    }

    fn insert(&mut self, e: Entry) -> &mut HostFunctions {
        self.entries.retain(|old| old.name != e.name);
        self.entries.push(e);
        self
    }

    /// The symbols to give the JIT.
    pub(crate) fn symbols(&self, module: &Module) -> Vec<(String, *const u8)> {
        // Only the module's own `extern` declarations are bound: the JIT
        // prefers a host symbol to the C library's, so any other name
        // (`calloc`, `sin`) would replace what compiled code calls itself.
        self.entries
            .iter()
            .filter(|e| {
                module
                    .find(&e.name)
                    .is_some_and(|id| module.func(id).is_import())
            })
            .map(|e| (e.name.clone(), e.address))
            .collect()
    }

    /// Checks each registered function against its `extern` declaration
    /// in `module`; the message names the first mismatch. A registered
    /// name that the module does not declare is fine (one set of host
    /// functions may serve several modules).
    pub(crate) fn check(&self, module: &Module) -> Result<(), String> {
        for e in &self.entries {
            // The source's rule for names a module may define (a math
            // built-in, the C library functions compiled code calls, adc's
            // prefixes): an `extern` of a math function's own name is
            // allowed, but binding it would replace the built-in everywhere.
            if let Some(why) = adc_frontend::lower::function_name_error(&e.name) {
                return Err(format!(
                    "host function `{}`: {why}; compiled code calls a function of this name itself, so it cannot be bound to the host",
                    e.name
                ));
            }
            let (Some((params, result)), Some(id)) = (&e.signature, module.find(&e.name)) else {
                continue;
            };
            let decl = module.func(id);
            if !decl.is_import() {
                return Err(format!(
                    "host function `{}`: the module defines `{}` itself; only an `extern` declaration can be bound to the host",
                    e.name, e.name
                ));
            }
            let declared: Option<Vec<CParam>> = decl
                .params
                .iter()
                .map(|p| Some(c_params(adc_codegen::kind_of(p)?)))
                .collect::<Option<Vec<Vec<CParam>>>>()
                .map(|v| v.concat());
            let declared_result = match decl.returns.as_slice() {
                [] => Ok(None),
                [t] if matches!(t, adc_ir::Type::Scalar(_)) => Ok(Some(t.elem())),
                _ => Err(()),
            };
            if declared.as_ref() != Some(params) || declared_result != Ok(*result) {
                return Err(format!(
                    "host function `{}` is registered as fn({}) -> {} but declared as {}",
                    e.name,
                    params
                        .iter()
                        .map(|p| p.text())
                        .collect::<Vec<_>>()
                        .join(", "),
                    result.map_or("void", |s| s.name()),
                    signature_text(decl)
                ));
            }
        }
        Ok(())
    }
}

/// The C-ABI parameters of one declared parameter (docs/embedding.md#the-c-signature-of-a-function).
fn c_params(kind: ParamKind) -> Vec<CParam> {
    match kind {
        ParamKind::Scalar(s) => vec![CParam::Scalar(s)],
        ParamKind::Ref(s) => vec![CParam::Pointer(s, true)],
        ParamKind::Array(s, writable) => vec![
            CParam::Pointer(s, writable),
            CParam::Scalar(ScalarType::I64),
        ],
    }
}

/// A declaration in the IR's type names, as the registration is written.
fn signature_text(f: &adc_ir::Function) -> String {
    let params: Vec<String> = f
        .params
        .iter()
        .map(|p| match p.mode {
            adc_ir::ParamMode::In => p.ty.to_string(),
            adc_ir::ParamMode::Inout => format!("inout {}", p.ty),
            adc_ir::ParamMode::Out => format!("out {}", p.ty),
        })
        .collect();
    let result: Vec<String> = f.returns.iter().map(|t| t.to_string()).collect();
    let result = match result.len() {
        0 => "void".to_string(),
        1 => result[0].clone(),
        _ => format!("({})", result.join(", ")),
    };
    format!("fn({}) -> {result}", params.join(", "))
}
