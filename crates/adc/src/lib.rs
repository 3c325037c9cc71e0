//! `adc`: the compiler as a library. The `adc` binary (package `adc-cli`,
//! in `crates/cli`) is a command line over it.
//!
//! The pipeline as plain functions: `frontend` (source to verified IR),
//! `run_stages` (IR passes up to a stage), `jit`, `object`. The binary and
//! the tests call the same functions.
//!
//! ```
//! let source = "double norm2(double[] xs) { double s = 0.0; for (int i = 0; i < len(xs); i++) s += xs[i] * xs[i]; return s; }";
//! let jit = adc::compile_jit("inline.ad", source, &adc::CompileOptions::default()).expect("compiles");
//! let mut args = [adc::ArgValue::Array(adc::ArrayValue::F64(vec![3.0, 4.0]))];
//! let result = jit.call("norm2", &mut args).expect("runs");
//! assert_eq!(result, vec![adc::Constant::F64(25.0)]);
//! ```
//!
//! # The library API
//!
//! - Compiling to JIT code: [`compile_jit`] (with [`CompileOptions`]),
//!   [`compile_jit_with`] (with [`Derivative`] requests, see [`request`]) and
//!   [`compile_jit_with_host`] (with [`HostFunctions`], see [`host`]);
//!   compile errors are a [`Failure`] holding [`Diagnostic`]s.
//! - Host functions: [`HostFunctions`] registers `extern "C" fn`s whose
//!   signatures [`HostFn`], [`HostParam`], [`HostResult`], [`HostScalar`]
//!   and [`CParam`] describe.
//! - Calling it: [`JitModule`] (`call` with [`ArgValue`]s and
//!   [`ArrayValue`]s, `typed` for a [`TypedFunc`] over plain Rust values,
//!   `raw_function` for the C entry point), [`JitFunction`], [`CallError`],
//!   the argument and result traits [`Arg`], [`Args`], [`Ret`], [`Rets`]
//!   and [`ParamKind`].
//! - The values and names of the language: [`Constant`], [`ScalarType`],
//!   [`Type`], [`Activity`], [`AdMode`], [`Span`], [`Severity`].
//! - The pipeline step by step, in [`driver`]: `frontend` (or `load`,
//!   `parse_ir` for textual IR), `warnings`, `run_stages` (or
//!   `run_stages_for`) up to a [`Stage`], `compile_object` (as
//!   `adc compile`), `compile_object_module` (what `adc-build` uses),
//!   `tape_reports` (as `adc tape`, with the reports of [`tape_report`]).
//!
//! The modules `derivs`, `json` and `user_ir`, and the few items of
//! `driver` and `tape_report` hidden from this documentation, serve the `adc`
//! binary and the project's tests: they are public for them, not part of
//! the library API.

// Not part of the library API: it serves the `adc` binary and the
// project's tests and benches, which is why it is `pub`.
#[doc(hidden)]
pub mod derivs;
pub mod driver;
pub mod host;
// Not part of the library API: it serves the `adc` binary and the tests.
#[doc(hidden)]
pub mod json;
pub mod request;
pub mod tape_report;
// Not part of the library API: it serves `driver::parse_ir` (the `.adir`
// input of the `adc` binary).
#[doc(hidden)]
pub mod user_ir;

// The items below come from adc's other crates; the doc comment of each
// `pub use` is shown (and run) with the item's own documentation in this
// crate's docs, so its example uses `adc::` paths.

/// Compiled code, from [`compile_jit`] and its variants: call a function
/// by name with checked arguments (`call`), through a typed handle
/// (`typed`) or through its C entry point (`raw_function`). A module is
/// `Send` and `Sync`: its functions may be called from several threads at
/// once.
///
/// ```
/// let jit = adc::compile_jit("m.ad", "double twice(double x) { return 2.0 * x; }", &adc::CompileOptions::default())
///     .expect("compiles");
/// let mut args = [adc::ArgValue::Scalar(adc::Constant::F64(1.5))];
/// assert_eq!(jit.call("twice", &mut args), Ok(vec![adc::Constant::F64(3.0)]));
///
/// let twice: adc::TypedFunc<(f64,), f64> = jit.typed("twice").expect("signature");
/// std::thread::scope(|s| {
///     s.spawn(|| assert_eq!(twice.call((4.0,)), Ok(8.0)));
///     s.spawn(|| assert_eq!(twice.call((0.5,)), Ok(1.0)));
/// });
/// ```
pub use adc_codegen::JitModule;

/// Whether this machine has fused multiply-add instructions, which
/// [`CompileOptions::fp_contract`] needs.
pub use adc_codegen::host_has_fma;

/// A function of a [`JitModule`]: its name and its signature, in IR
/// [`Type`]s (an `inout`/`out` scalar is a `Type::Ref`, an array a
/// `Type::Array`).
///
/// ```
/// let src = "int count(double[] xs, inout double acc) { acc += xs[0]; return len(xs); }";
/// let jit = adc::compile_jit("c.ad", src, &adc::CompileOptions::default()).expect("compiles");
/// let f = jit.function("count").expect("defined");
/// assert_eq!(f.name, "count");
/// assert_eq!(f.params[0].name, "xs");
/// assert_eq!(f.params[0].ty, adc::Type::Array(adc::ScalarType::F64));
/// assert_eq!(f.params[1].ty, adc::Type::Ref(adc::ScalarType::F64));
/// assert_eq!(f.returns, [adc::Type::I64]);
/// ```
pub use adc_codegen::JitFunction;

/// A function with its signature checked once, by [`JitModule::typed`],
/// called with plain Rust values: `P` is the tuple of arguments (see
/// [`Arg`]), `R` the result (see [`Rets`]).
///
/// ```
/// let src = "void scale(inout double[] xs, double k) { for (int i = 0; i < len(xs); i++) xs[i] *= k; }";
/// let jit = adc::compile_jit("s.ad", src, &adc::CompileOptions::default()).expect("compiles");
/// let scale: adc::TypedFunc<(&mut [f64], f64), ()> = jit.typed("scale").expect("signature");
/// let mut xs = vec![1.0, 2.0];
/// scale.call((&mut xs[..], 3.0)).expect("runs");
/// scale.call((&mut xs[..], 0.5)).expect("runs");
/// assert_eq!(xs, [1.5, 3.0]);
/// ```
pub use adc_codegen::TypedFunc;

/// One argument of [`JitModule::call`]: a scalar [`Constant`] (for
/// by-value and `inout`/`out` scalar parameters; the latter hold the new
/// value after the call) or an [`ArrayValue`].
///
/// ```
/// use adc::{ArgValue, Constant};
///
/// let src = "void bump(inout int n, int by) { n += by; }";
/// let jit = adc::compile_jit("b.ad", src, &adc::CompileOptions::default()).expect("compiles");
/// let mut args = [ArgValue::Scalar(Constant::I64(40)), ArgValue::Scalar(Constant::I64(2))];
/// assert_eq!(jit.call("bump", &mut args), Ok(vec![]));
/// assert_eq!(args[0], ArgValue::Scalar(Constant::I64(42)));
/// ```
pub use adc_codegen::ArgValue;

/// An array argument of [`JitModule::call`], by element type; a writable
/// (`inout`/`out`) one holds the callee's writes after the call.
///
/// ```
/// use adc::{ArgValue, ArrayValue};
///
/// let src = "void iota(out int[] xs) { for (int i = 0; i < len(xs); i++) xs[i] = i; }";
/// let jit = adc::compile_jit("i.ad", src, &adc::CompileOptions::default()).expect("compiles");
/// let mut args = [ArgValue::Array(ArrayValue::I64(vec![0; 3]))];
/// jit.call("iota", &mut args).expect("runs");
/// assert_eq!(args[0], ArgValue::Array(ArrayValue::I64(vec![0, 1, 2])));
/// ```
pub use adc_codegen::ArrayValue;

/// Why a call (or [`JitModule::typed`]) failed: an unknown function,
/// arguments or results that do not fit the signature, or a runtime error
/// of the code (its message, with the source location).
///
/// ```
/// use adc::{ArgValue, CallError, Constant};
///
/// let jit = adc::compile_jit("e.ad", "int div(int a, int b) { return a / b; }", &adc::CompileOptions::default())
///     .expect("compiles");
/// assert_eq!(jit.call("mod", &mut []), Err(CallError::UnknownFunction("mod".into())));
/// assert_eq!(
///     jit.call("div", &mut []),
///     Err(CallError::ArgumentCount { expected: 2, found: 0 })
/// );
/// let mut args = [ArgValue::Scalar(Constant::I64(1)), ArgValue::Scalar(Constant::I64(0))];
/// match jit.call("div", &mut args) {
///     Err(CallError::Runtime(msg)) => assert!(msg.contains("e.ad:1:"), "{msg}"),
///     other => panic!("{other:?}"),
/// }
/// ```
pub use adc_codegen::CallError;

/// A Rust type that passes one parameter of a [`TypedFunc`]: `f64`, `f32`,
/// `i64`, `bool` by value; `&[T]` for a read-only array and `&mut [T]` for
/// an `inout`/`out` one (`T` = `f64`, `f32`, `i64`); `&mut f64` or
/// `&mut i64` for an `inout`/`out` scalar. `KIND` is the parameter it fits.
///
/// ```
/// use adc::{Arg, ParamKind, ScalarType};
///
/// assert_eq!(<&[f64] as Arg>::KIND, ParamKind::Array(ScalarType::F64, false));
/// assert_eq!(<&mut i64 as Arg>::KIND, ParamKind::Ref(ScalarType::I64));
///
/// let src = "void acc(inout double total, double[] xs, bool twice) { total += twice ? 2.0 * xs[0] : xs[0]; }";
/// let jit = adc::compile_jit("a.ad", src, &adc::CompileOptions::default()).expect("compiles");
/// let acc: adc::TypedFunc<(&mut f64, &[f64], bool), ()> = jit.typed("acc").expect("signature");
/// let mut total = 1.0;
/// acc.call((&mut total, &[2.0][..], true)).expect("runs");
/// assert_eq!(total, 5.0);
/// ```
pub use adc_codegen::Arg;

/// The arguments of a [`TypedFunc`]: a tuple of up to eight [`Arg`]s,
/// `()` for none.
///
/// ```
/// use adc::{Args, ParamKind, ScalarType};
///
/// assert_eq!(
///     <(f64, &mut [f32]) as Args>::kinds(),
///     [ParamKind::Scalar(ScalarType::F64), ParamKind::Array(ScalarType::F32, true)]
/// );
/// let jit = adc::compile_jit("p.ad", "double pi() { return 3.25; }", &adc::CompileOptions::default()).expect("compiles");
/// let pi: adc::TypedFunc<(), f64> = jit.typed("pi").expect("signature");
/// assert_eq!(pi.call(()), Ok(3.25));
/// ```
pub use adc_codegen::Args;

/// One result value of a [`TypedFunc`]: `f64`, `f32`, `i64` or `bool`.
///
/// ```
/// use adc::{Ret, ScalarType};
///
/// assert_eq!(<bool as Ret>::TYPE, ScalarType::Bool);
/// let jit = adc::compile_jit("r.ad", "bool pos(float x) { return x > 0.0; }", &adc::CompileOptions::default())
///     .expect("compiles");
/// let pos: adc::TypedFunc<(f32,), bool> = jit.typed("pos").expect("signature");
/// assert_eq!(pos.call((-1.0,)), Ok(false));
/// ```
pub use adc_codegen::Ret;

/// All the results of a [`TypedFunc`]: `()` for a `void` function, one
/// [`Ret`], or a tuple of up to eight for a tuple result.
///
/// ```
/// use adc::{Rets, ScalarType};
///
/// assert_eq!(<(f64, i64) as Rets>::types(), [ScalarType::F64, ScalarType::I64]);
/// let src = "(double, int) first(double[] xs) { return (xs[0], len(xs)); }";
/// let jit = adc::compile_jit("f.ad", src, &adc::CompileOptions::default()).expect("compiles");
/// let first: adc::TypedFunc<(&[f64],), (f64, i64)> = jit.typed("first").expect("signature");
/// assert_eq!(first.call((&[7.5, 1.0][..],)), Ok((7.5, 2)));
/// ```
pub use adc_codegen::Rets;

/// The parameter an [`Arg`] type stands for; a [`JitModule::typed`] whose
/// argument kinds differ from the function's parameters is a
/// [`CallError::Signature`] error.
///
/// ```
/// use adc::{Arg, CallError, ParamKind, ScalarType};
///
/// assert_eq!(<f32 as Arg>::KIND, ParamKind::Scalar(ScalarType::F32));
/// let jit = adc::compile_jit("k.ad", "double sum(double[] xs) { return xs[0]; }", &adc::CompileOptions::default())
///     .expect("compiles");
/// // `&mut [f64]` is a writable array, the parameter is read-only.
/// match jit.typed::<(&mut [f64],), f64>("sum") {
///     Err(CallError::Signature { expected, found, .. }) => {
///         assert_eq!(expected, "double sum(double[] xs)");
///         assert_eq!(found, "double sum(inout double[])");
///     }
///     other => panic!("{:?}", other.err()),
/// }
/// ```
pub use adc_codegen::ParamKind;

/// A diagnostic of the compiler: its severity, code (`E0116`, `W0001`,
/// see `docs/errors.md`), message and source [`Span`] (byte offsets),
/// with secondary labels and notes. A [`Failure`] holds them.
///
/// ```
/// let src = "double f(double x) { return y; }";
/// let err = adc::compile_jit("d.ad", src, &adc::CompileOptions::default()).err().expect("does not compile");
/// let d = &err.diagnostics[0];
/// assert_eq!((d.severity, d.code), (adc::Severity::Error, "E0116"));
/// assert_eq!(&src[d.span.start as usize..d.span.end as usize], "y");
/// ```
pub use adc_frontend::Diagnostic;

/// Whether a [`Diagnostic`] stops compilation (`Error`) or not
/// (`Warning`, as from [`driver::warnings`]).
///
/// ```
/// let warnings = adc::driver::warnings("w.ad", "double f(double x) { double y = 1.0; return x; }");
/// assert_eq!(warnings[0].severity, adc::Severity::Warning);
/// assert_eq!(warnings[0].code, "W0001");
/// assert!(!warnings[0].is_error());
/// ```
pub use adc_frontend::Severity;

/// The activity of a parameter or result in a derivative (docs/derivatives.md#reverse-mode, docs/derivatives.md#forward-mode), as a [`Derivative`] request takes it; `name` and
/// `from_name` spell it as attributes do.
///
/// ```
/// use adc::{Activity, Derivative};
///
/// assert_eq!(Activity::from_name("Duplicated"), Some(Activity::Duplicated));
/// let src = "double dot(double[] a, double[] b) { return a[0] * b[0]; }";
/// let d = Derivative::reverse("dot", "ddot", vec![Activity::Duplicated, Activity::Const], Activity::ActiveOnly);
/// let jit = adc::compile_jit_with("dot.ad", src, &[d]).expect("compiles");
/// let ddot: adc::TypedFunc<(&[f64], &mut [f64], &[f64], f64), ()> = jit.typed("ddot").expect("signature");
/// let mut d_a = [0.0];
/// ddot.call((&[2.0][..], &mut d_a[..], &[3.0][..], 1.0)).expect("runs");
/// assert_eq!(d_a, [3.0]);
/// ```
pub use adc_ir::Activity;

/// Forward or reverse mode, the `mode` of a [`Derivative`].
///
/// ```
/// use adc::{Activity, AdMode, Derivative};
///
/// assert_eq!(Derivative::gradient("f", "df").mode, AdMode::Reverse);
/// let d = Derivative::forward("f", "tf", vec![Activity::Dual], Activity::DualOnly);
/// assert_eq!(d.mode, AdMode::Forward);
/// ```
pub use adc_ir::AdMode;

/// A scalar value: an argument or result of [`JitModule::call`].
///
/// ```
/// use adc::{Constant, ScalarType};
///
/// let jit = adc::compile_jit("h.ad", "float half(int n) { return float(n) / 2.0; }", &adc::CompileOptions::default())
///     .expect("compiles");
/// let mut args = [adc::ArgValue::Scalar(Constant::I64(3))];
/// let result = jit.call("half", &mut args).expect("runs");
/// assert_eq!(result, [Constant::F32(1.5)]);
/// assert_eq!(result[0].ty(), ScalarType::F32);
/// assert_eq!(result[0].to_string(), "1.5");
/// ```
pub use adc_ir::Constant;

/// The scalar types of the language: `bool`, `int` (`I64`), `float`
/// (`F32`) and `double` (`F64`).
///
/// ```
/// use adc::{ArrayValue, ScalarType};
///
/// assert_eq!(ArrayValue::F32(vec![1.0]).elem(), ScalarType::F32);
/// assert_eq!(ScalarType::I64.name(), "i64");
/// assert_eq!(ScalarType::from_name("f64"), Some(ScalarType::F64));
/// assert!(ScalarType::F64.is_float() && !ScalarType::Bool.is_float());
/// ```
pub use adc_ir::ScalarType;

/// A byte range of the source, as [`Diagnostic`]s give it;
/// `Span::UNDEFINED` when there is none.
///
/// ```
/// let src = "double f(double x) { return x +; }";
/// let err = adc::compile_jit("s.ad", src, &adc::CompileOptions::default()).err().expect("a syntax error");
/// let span = err.diagnostics[0].span;
/// assert!(span.is_defined());
/// assert_eq!(&src[span.start as usize..span.start as usize + 1], ";");
/// ```
pub use adc_ir::Span;

/// The IR type of a value or parameter: a scalar, an array (`T[]`), a
/// reference (an `inout`/`out` scalar), or a dual-number pair (only inside
/// the derivative passes). [`JitFunction`] gives a signature in them.
///
/// ```
/// use adc::{ScalarType, Type};
///
/// let jit = adc::compile_jit("t.ad", "void zero(out float[] xs) { xs[0] = 0.0; }", &adc::CompileOptions::default())
///     .expect("compiles");
/// let f = jit.function("zero").expect("defined");
/// assert_eq!(f.params[0].ty, Type::Array(ScalarType::F32));
/// assert_eq!(f.params[0].ty.to_string(), "arr<f32>");
/// assert_eq!(f.params[0].ty.elem(), ScalarType::F32);
/// assert!(f.returns.is_empty());
/// ```
pub use adc_ir::Type;

pub use driver::{
    compile_jit, compile_jit_with, compile_jit_with_host, CompileOptions, Failure, Stage,
};
pub use host::{CParam, HostFn, HostFunctions, HostParam, HostResult, HostScalar};
pub use request::Derivative;

/// The Rust examples of `docs/embedding.md`, run as doctests (the other
/// blocks' `file=NAME` info strings are for `crates/cli/tests/it/docs.rs`).
#[cfg(doctest)]
#[allow(rustdoc::invalid_codeblock_attributes)]
#[doc = include_str!("../../../docs/embedding.md")]
pub struct EmbeddingDocs;
