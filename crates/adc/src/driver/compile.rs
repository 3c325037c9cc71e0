//! The end of the pipeline: a loaded module, after every stage, to JIT
//! code ([`compile_jit`], with derivative requests and host functions
//! [`compile_jit_with_host`]) or an object file ([`compile_object`]), and
//! `adc tape`'s reports ([`tape_reports`]).

use super::{
    ad_failure, failure, is_textual_ir, load, load_with_warnings, opt_in_passes, run_stages_for,
    stage_snapshots, wants_opt_in_passes, CompileOptions, Failure, Stage,
};
use crate::host::HostFunctions;
use crate::request::Derivative;
use adc_frontend::jacobian::Signature;
use adc_frontend::Diagnostic;
use adc_ir::{Module, Span};

/// `file:line:col` of a span, for runtime error messages.
// Not part of the library API: the compile functions give it to codegen.
#[doc(hidden)]
pub fn locator<'a>(path: &'a str, source: &'a str) -> impl Fn(Span) -> String + 'a {
    let lines = adc_frontend::diag::LineIndex::new(source);
    move |span: Span| {
        if !span.is_defined() {
            return format!("{path}:?");
        }
        let (line, col) = lines.line_col(span.start);
        format!("{path}:{line}:{col}")
    }
}

/// A code generation error of `module` as a diagnostic (E0500): an
/// unresolved extern points at its declaration (`decl_span`; none in
/// `.adir`).
fn codegen_failure(
    e: adc_codegen::CodegenError,
    module: &Module,
    path: &str,
    source: &str,
    options: &CompileOptions,
) -> Failure {
    let span = match &e {
        adc_codegen::CodegenError::Unresolved(name) => module
            .find(name)
            .map_or(Span::UNDEFINED, |id| module.func(id).decl_span),
        _ => Span::UNDEFINED,
    };
    failure(
        vec![Diagnostic::error("E0500", e.to_string(), span)],
        path,
        source,
        options,
    )
}

/// Source text (or textual IR, [`super::is_textual_ir`]) to JIT code.
/// `path` names the source in diagnostics and runtime errors; `options`
/// says how to render diagnostics.
///
/// ```
/// let jit = adc::compile_jit("sq.ad", "double sq(double x) { return x * x; }", &adc::CompileOptions::default())
///     .expect("compiles");
/// let sq: adc::TypedFunc<(f64,), f64> = jit.typed("sq").expect("signature");
/// assert_eq!(sq.call((3.0,)), Ok(9.0));
/// ```
pub fn compile_jit(
    path: &str,
    source: &str,
    options: &CompileOptions,
) -> Result<adc_codegen::JitModule, Failure> {
    let mut module = load(path, source, options)?;
    run_stages_for(&mut module, Stage::Final, path, source, options)?;
    jit_on_deep_stack(&mut module, path, source, &[])
        .map_err(|e| codegen_failure(e, &module, path, source, options))
}

/// [`compile_jit`] and the module after every stage
/// ([`super::stage_snapshots`]), from one run of the pipeline: the JIT
/// code is the last snapshot's (`opt`, after which `compile_jit` runs
/// nothing but code generation), without adc's own functions that no
/// function of the program reaches (`adc_codegen::jit_reached`).
// Not part of the library API: for the differential tester, which
// interprets every stage and runs the JIT code of the same run.
#[doc(hidden)]
pub fn compile_jit_staged(
    path: &str,
    source: &str,
    options: &CompileOptions,
) -> Result<(adc_codegen::JitModule, Vec<(Stage, Module)>), Failure> {
    let module = load(path, source, options)?;
    let mut snapshots =
        stage_snapshots(module).map_err(|e| ad_failure(e, path, source, options))?;
    // Invariant: `stage_snapshots` always ends with the `opt` module. The
    // `final` module is a copy of it only when an opt-in pass runs.
    if wants_opt_in_passes(options) {
        let mut last = snapshots
            .last()
            .expect("at least the `opt` snapshot")
            .1
            .clone();
        opt_in_passes(&mut last, options).map_err(|e| ad_failure(e, path, source, options))?;
        snapshots.push((Stage::Final, last));
    }
    let (stage, last) = snapshots.last_mut().expect("at least the `opt` snapshot");
    debug_assert!(matches!(*stage, Stage::Opt | Stage::Final));
    // The tester calls the program's functions only: adc's own that none
    // of them reaches are left out, as object files leave them out.
    let jit = jit_on_deep_stack_with(last, path, source, &[], true)
        .map_err(|e| codegen_failure(e, last, path, source, options))?;
    Ok((jit, snapshots))
}

/// Compiles `source` with the JIT after adding `derivatives`, as if each
/// were an attribute on its function. A bad request is a diagnostic
/// (E0303) of the returned failure, like a bad attribute.
///
/// ```
/// use adc::Derivative;
///
/// let src = "double f(double x) { return x * x; }";
/// let jit = adc::compile_jit_with("f.ad", src, &[Derivative::gradient("f", "df")])
///     .expect("compiles");
/// let df: adc::TypedFunc<(f64, f64), (f64, f64)> = jit.typed("df").expect("signature");
/// assert_eq!(df.call((3.0, 1.0)), Ok((9.0, 6.0)));
///
/// let err = adc::compile_jit_with("f.ad", src, &[Derivative::gradient("g", "dg")])
///     .err()
///     .expect("no function `g`");
/// assert_eq!(err.diagnostics[0].code, "E0303");
/// ```
pub fn compile_jit_with(
    path: &str,
    source: &str,
    derivatives: &[Derivative],
) -> Result<adc_codegen::JitModule, Failure> {
    compile_jit_with_host(path, source, derivatives, &HostFunctions::new())
}

/// `compile_jit_with`, with `host` resolving `extern` declarations (see
/// `crate::host`). A host function whose signature differs from its
/// declaration is a diagnostic (E0500).
///
/// ```
/// extern "C" fn scale(x: f64, k: i64) -> f64 {
///     x * k as f64
/// }
///
/// let src = "extern double scale(double x, int k); double f(double x) { return scale(x, 3); }";
/// let mut host = adc::HostFunctions::new();
/// host.func("scale", scale as extern "C" fn(f64, i64) -> f64);
/// let jit = adc::compile_jit_with_host("f.ad", src, &[], &host).expect("compiles");
/// let f: adc::TypedFunc<(f64,), f64> = jit.typed("f").expect("signature");
/// assert_eq!(f.call((1.5,)), Ok(4.5));
///
/// // The registered signature must be the declaration's.
/// let mut wrong = adc::HostFunctions::new();
/// wrong.func("scale", scale as extern "C" fn(f64, i64) -> f64);
/// let src = "extern double scale(double x, double k); double f(double x) { return scale(x, 3.0); }";
/// let err = adc::compile_jit_with_host("f.ad", src, &[], &wrong).err().expect("a mismatch");
/// assert_eq!(err.diagnostics[0].code, "E0500");
/// ```
pub fn compile_jit_with_host(
    path: &str,
    source: &str,
    derivatives: &[Derivative],
    host: &HostFunctions,
) -> Result<adc_codegen::JitModule, Failure> {
    // Jacobians and Hessians are attributes put into the source.
    // A function the source does not define (a generated derivative) is
    // wrapped: its signature is the compiled source's.
    let mut plain: Option<Module> = None;
    let mut compiled = |of: &str| -> Result<Option<Signature>, Failure> {
        if is_textual_ir(path, source) {
            return Ok(None);
        }
        if plain.is_none() {
            plain = Some(load(path, source, &CompileOptions::default())?);
        }
        // Invariant: set just above.
        let module = plain.as_ref().expect("loaded");
        Ok(module.find(of).map(|id| {
            let f = module.func(id);
            Signature {
                params: f.params.clone(),
                returns: f.returns.clone(),
            }
        }))
    };
    let mut with_jacobians = source.to_string();
    for d in derivatives.iter().filter(|d| d.jacobian || d.hessian) {
        let mut failure = None;
        let sig = || {
            compiled(&d.of).unwrap_or_else(|f| {
                failure = Some(f);
                None
            })
        };
        let (text, code, what) = if d.jacobian {
            let text = adc_frontend::jacobian::with_request(&with_jacobians, &d.of, &d.name, sig);
            (text, "E0309", "Jacobian")
        } else {
            let text = adc_frontend::hessian::with_request(&with_jacobians, &d.of, &d.name, sig);
            (text, "E0310", "Hessian")
        };
        if let Some(f) = failure {
            return Err(f);
        }
        with_jacobians =
            text.map_err(|m| plain_failure(code, format!("the {what} of `{}`: {m}", d.of)))?;
    }
    let source = with_jacobians.as_str();
    let mut module = load(path, source, &CompileOptions::default())?;
    for d in derivatives.iter().filter(|d| !d.jacobian && !d.hessian) {
        crate::request::add(&mut module, d)
            .map_err(|m| plain_failure("E0303", format!("derivative request `{}`: {m}", d.name)))?;
    }
    host.check(&module).map_err(|m| plain_failure("E0500", m))?;
    run_stages_for(
        &mut module,
        Stage::Final,
        path,
        source,
        &CompileOptions::default(),
    )?;
    // Addresses cross to the compiler's thread as integers.
    let symbols: Vec<(String, usize)> = host
        .symbols(&module)
        .into_iter()
        .map(|(name, p)| (name, p as usize))
        .collect();
    jit_on_deep_stack(&mut module, path, source, &symbols)
        .map_err(|e| codegen_failure(e, &module, path, source, &CompileOptions::default()))
}

/// A failure about the request rather than a place in the source.
fn plain_failure(code: &'static str, message: String) -> Failure {
    Failure {
        rendered: format!("error[{code}]: {message}\n"),
        diagnostics: vec![Diagnostic::error(code, message, Span::UNDEFINED)],
    }
}

/// `adc_codegen::jit` on the compiler's deep-stack thread
/// (`adc_frontend::with_deep_stack`), as the frontend and the passes run:
/// Cranelift's own recursion needs more stack than a small host thread
/// has (a 64 KiB thread aborted compiling `return x;`).
fn jit_on_deep_stack(
    module: &mut Module,
    path: &str,
    source: &str,
    symbols: &[(String, usize)],
) -> Result<adc_codegen::JitModule, adc_codegen::CodegenError> {
    jit_on_deep_stack_with(module, path, source, symbols, false)
}

/// `jit_on_deep_stack`, by `adc_codegen::jit_reached` if `reached_only`.
fn jit_on_deep_stack_with(
    module: &mut Module,
    path: &str,
    source: &str,
    symbols: &[(String, usize)],
    reached_only: bool,
) -> Result<adc_codegen::JitModule, adc_codegen::CodegenError> {
    adc_frontend::with_deep_stack(move || {
        let symbols: Vec<(String, *const u8)> = symbols
            .iter()
            .map(|(n, p)| (n.clone(), *p as *const u8))
            .collect();
        let jit = if reached_only {
            adc_codegen::jit_reached
        } else {
            adc_codegen::jit
        };
        jit(&*module, &locator(path, source), &symbols)
    })
}

/// Why `adc run --grad/--tangent` stopped before calling anything.
// Not part of the library API: for the `adc` binary (with `derivs`).
#[doc(hidden)]
#[derive(Debug)]
pub enum RequestFailure {
    Compile(Failure),
    Usage(String),
}

/// Like `compile_jit`, after adding the derivative `req` of `entry`.
/// Returns the module, the entry's IR signature and the generated name.
// Not part of the library API: for the `adc` binary (with `derivs`).
#[doc(hidden)]
pub fn compile_jit_request(
    path: &str,
    source: &str,
    options: &CompileOptions,
    entry: &str,
    req: &crate::derivs::Request,
) -> Result<(adc_codegen::JitModule, adc_ir::Function, String), RequestFailure> {
    let mut module = load(path, source, options).map_err(RequestFailure::Compile)?;
    let name =
        crate::derivs::add_request(&mut module, entry, req).map_err(RequestFailure::Usage)?;
    let src = module
        .func(module.find(entry).expect("add_request found it"))
        .clone();
    run_stages_for(&mut module, Stage::Final, path, source, options)
        .map_err(RequestFailure::Compile)?;
    let jit = jit_on_deep_stack(&mut module, path, source, &[])
        .map_err(|e| RequestFailure::Compile(codegen_failure(e, &module, path, source, options)))?;
    Ok((jit, src, name))
}

/// What [`compile_object`] makes: an object file, its C header, and the
/// warnings of the source.
#[derive(Debug)]
pub struct ObjectFile {
    /// The ELF object (docs/embedding.md for its symbols).
    pub object: Vec<u8>,
    /// Its C header.
    pub header: String,
    /// The source's warnings (none for textual IR), as `adc compile`
    /// prints them.
    pub warnings: Vec<Diagnostic>,
}

/// Source text to an object file and its C header, as `adc compile`
/// writes them: `guard` is the header's include guard (see
/// `docs/embedding.md` for the symbols and their C signatures).
///
/// ```
/// let src = "double twice(double x) { return 2.0 * x; } static double helper(double x) { return x; }";
/// let out = adc::driver::compile_object("twice.ad", src, "TWICE_H", &adc::CompileOptions::default()).expect("compiles");
/// assert!(out.object.starts_with(b"\x7fELF"));
/// assert!(out.header.contains("#ifndef TWICE_H"));
/// assert!(out.header.contains("double twice(double x);"));
/// assert!(!out.header.contains("helper"), "static functions are not exported");
/// assert!(out.warnings.is_empty());
/// ```
pub fn compile_object(
    path: &str,
    source: &str,
    guard: &str,
    options: &CompileOptions,
) -> Result<ObjectFile, Failure> {
    let (mut module, warnings) = load_with_warnings(path, source, options)?;
    let object = object_of(&mut module, path, source, options)?;
    Ok(ObjectFile {
        object,
        header: adc_codegen::c_header(&module, guard),
        warnings,
    })
}

/// Source text to an object file and the final module it was made from
/// (whose exported functions are its symbols; `adc-build` writes Rust
/// bindings from them).
///
/// ```
/// let src = "double twice(double x) { return 2.0 * x; }";
/// let (object, module) = adc::driver::compile_object_module("twice.ad", src, &adc::CompileOptions::default())
///     .expect("compiles");
/// assert!(!object.is_empty());
/// let twice = module.func(module.find("twice").expect("defined"));
/// assert_eq!(twice.params[0].ty, adc::Type::F64);
/// assert_eq!(twice.returns, [adc::Type::F64]);
/// ```
pub fn compile_object_module(
    path: &str,
    source: &str,
    options: &CompileOptions,
) -> Result<(Vec<u8>, Module), Failure> {
    let mut module = load(path, source, options)?;
    let object = object_of(&mut module, path, source, options)?;
    Ok((object, module))
}

/// Every stage on a loaded module, then its object file.
fn object_of(
    module: &mut Module,
    path: &str,
    source: &str,
    options: &CompileOptions,
) -> Result<Vec<u8>, Failure> {
    run_stages_for(module, Stage::Final, path, source, options)?;
    let object = {
        let module = &mut *module;
        adc_frontend::with_deep_stack(move || adc_codegen::object(&*module, &locator(path, source)))
    };
    object.map_err(|e| codegen_failure(e, module, path, source, options))
}

/// `adc tape`: the tape reports of a file's reverse derivatives (after
/// every stage, as `compile` would build them); see [`crate::tape_report`].
///
/// ```
/// let src = "[autodiff_reverse(dprod, Duplicated, Active)]
/// double prod(double[] x) {
///     double p = 1.0;
///     for (int i = 0; i < len(x); i++) p *= x[i];
///     return p;
/// }";
/// let reports = adc::driver::tape_reports("prod.ad", src, &adc::CompileOptions::default()).expect("compiles");
/// assert_eq!(reports[0].function, "dprod");
/// // One f64 per iteration: the product before each multiplication.
/// assert_eq!(reports[0].loops[0].line, 4);
/// assert_eq!(reports[0].loops[0].bytes_per_iteration, 8);
/// ```
pub fn tape_reports(
    path: &str,
    source: &str,
    options: &CompileOptions,
) -> Result<Vec<crate::tape_report::Report>, Failure> {
    let mut module = load(path, source, options)?;
    let requested: Vec<String> = module
        .funcs
        .iter()
        .filter(|f| {
            f.deriv
                .as_ref()
                .is_some_and(|d| d.mode == adc_ir::AdMode::Reverse)
        })
        .map(|f| f.name.clone())
        .collect();
    // Every stage but `unroll-inner`, whose copies of a loop's body would
    // count four iterations as one, and `unswitch`, whose versions of a
    // loop would list its pushes twice (what is taped is the same).
    run_stages_for(&mut module, Stage::Transpose, path, source, options)?;
    adc_frontend::with_deep_stack(|| {
        adc_passes::optimize_except(&mut module, &["unroll-inner", "unswitch"])
    });
    let lines = adc_frontend::diag::LineIndex::new(source);
    let line_of = |span: Span| {
        span.is_defined()
            .then(|| lines.line_col(span.start).0 as u32)
    };
    Ok(crate::tape_report::reports(
        &module,
        &requested,
        &locator(path, source),
        &line_of,
    ))
}
