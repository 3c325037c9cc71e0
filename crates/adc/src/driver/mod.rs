//! The compilation pipeline as functions over source text and modules:
//! [`frontend`] (source to verified IR, or [`load`] for `.ad` or `.adir`
//! text), [`run_stages`] (derivatives and optimisations up to a
//! [`Stage`]), then [`compile_jit`] or [`compile_object`];
//! [`tape_reports`] is `adc tape`. Each step's errors are a [`Failure`]
//! with the rendered diagnostics.
//!
//! ```
//! use adc::driver::{self, Stage};
//!
//! let src = "[autodiff_reverse(dsq, Active, Active)] double sq(double x) { return x * x; }";
//! let mut module = driver::frontend("sq.ad", src, &adc::CompileOptions::default()).expect("compiles");
//! // The frontend declares the derivative; its passes write its body.
//! driver::run_stages(&mut module, Stage::Final).expect("differentiates");
//! assert!(module.to_string().contains("func @dsq(x: f64, "));
//!
//! let out = driver::compile_object("sq.ad", src, "SQ_H", &adc::CompileOptions::default()).expect("compiles");
//! assert!(!out.object.is_empty());
//! assert!(out.header.contains("dsq_result dsq(double x, double seed);"));
//! ```

use adc_frontend::{render, Diagnostic, RenderConfig};
use adc_ir::{Module, Span};
use adc_passes::ad::AdErrorKind;

mod compile;
pub use compile::{
    compile_jit, compile_jit_with, compile_jit_with_host, compile_object, compile_object_module,
    tape_reports, ObjectFile,
};
#[doc(hidden)]
pub use compile::{compile_jit_request, compile_jit_staged, locator, RequestFailure};

/// The stages `adc ir --after` can stop at, in pipeline order: the
/// frontend's output (`Lower`), the derivative passes (`Linearize` to
/// `Transpose`), the optimisations (`Opt`), and the whole pipeline
/// (`Final`, what code generation takes).
///
/// ```
/// use adc::Stage;
///
/// assert!(Stage::Lower < Stage::Transpose && Stage::Transpose < Stage::Final);
/// let src = "double f(double x) { double y = x * x; return x; }";
/// let mut module = adc::driver::frontend("f.ad", src, &adc::CompileOptions::default()).expect("compiles");
/// adc::driver::run_stages(&mut module, Stage::Transpose).expect("runs");
/// assert!(module.to_string().contains(" mul "));
/// adc::driver::run_stages(&mut module, Stage::Opt).expect("runs");
/// assert!(!module.to_string().contains(" mul "), "`y` is dead code");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Stage {
    /// The frontend's verified IR: requested derivatives are declared,
    /// without bodies.
    Lower,
    /// Forward mode: every derivative's body, each float value with its
    /// tangent (`diff` instructions; `dpair`s across blocks).
    Linearize,
    /// Every instruction of a derivative classified primal, differential
    /// or mixed.
    Propagate,
    /// Every `dpair` split into its value and its tangent.
    LowerPairs,
    /// Vector-mode derivatives (`width = W`) carry `W` lanes of
    /// differentials.
    Widen,
    /// Reverse derivatives split into a primal part and a differential
    /// part.
    Unzip,
    /// Reverse derivatives' differential parts turned around (the reverse
    /// sweep): every derivative is done.
    Transpose,
    /// The optimisations, after the derivative passes.
    Opt,
    /// The whole pipeline, what code generation takes (today the same
    /// passes as `Opt`).
    Final,
}

impl Stage {
    /// Every stage with its name on the command line (`adc ir --after
    /// NAME`), in pipeline order.
    ///
    /// ```
    /// use adc::Stage;
    ///
    /// assert_eq!(adc::Stage::ALL.first(), Some(&("lower", Stage::Lower)));
    /// assert_eq!(adc::Stage::ALL.last(), Some(&("final", Stage::Final)));
    /// assert!(Stage::ALL.windows(2).all(|w| w[0].1 < w[1].1));
    /// ```
    pub const ALL: &'static [(&'static str, Stage)] = &[
        ("lower", Stage::Lower),
        ("linearize", Stage::Linearize),
        ("propagate", Stage::Propagate),
        ("lower-pairs", Stage::LowerPairs),
        ("widen", Stage::Widen),
        ("unzip", Stage::Unzip),
        ("transpose", Stage::Transpose),
        ("opt", Stage::Opt),
        ("final", Stage::Final),
    ];

    /// The stage of a command-line name (see [`Stage::ALL`]).
    ///
    /// ```
    /// assert_eq!(adc::Stage::from_name("lower-pairs"), Some(adc::Stage::LowerPairs));
    /// assert_eq!(adc::Stage::from_name("LowerPairs"), None);
    /// ```
    pub fn from_name(s: &str) -> Option<Stage> {
        Stage::ALL.iter().find(|(n, _)| *n == s).map(|(_, st)| *st)
    }
}

/// Why compilation stopped: the diagnostics, and their rendered text
/// (with the source lines) for the user.
///
/// ```
/// let err = adc::compile_jit("bad.ad", "double f(double x) { return x + ; }", &adc::CompileOptions::default())
///     .err()
///     .expect("a syntax error");
/// assert_eq!(err.diagnostics[0].severity, adc::Severity::Error);
/// assert!(err.rendered.contains("bad.ad:1:"));
/// ```
#[derive(Debug)]
pub struct Failure {
    /// The errors that stopped compilation, in source order.
    pub diagnostics: Vec<Diagnostic>,
    /// Their text as `adc` prints it (also `Failure`'s `Display`).
    pub rendered: String,
}

impl std::fmt::Display for Failure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.rendered)
    }
}

impl std::error::Error for Failure {}

/// How to compile; `CompileOptions::default()` is what `adc` does when
/// its standard error is not a terminal.
///
/// ```
/// use adc::CompileOptions;
///
/// let src = "double f(double x) { return y; }";
/// let plain = adc::compile_jit("f.ad", src, &CompileOptions::default()).err().expect("no `y`");
/// assert!(!plain.rendered.contains('\x1b'));
/// let colored = adc::compile_jit("f.ad", src, &CompileOptions { color: true, ..Default::default() })
///     .err()
///     .expect("no `y`");
/// assert!(colored.rendered.contains('\x1b'), "ANSI colours");
/// assert_eq!(plain.diagnostics, colored.diagnostics);
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CompileOptions {
    /// Render diagnostics ([`Failure::rendered`]) with ANSI colours.
    pub color: bool,
    /// Fuse each float multiply used only by an add or subtract into one
    /// fused multiply-add, rounded once (pass `contract`, in the `final`
    /// stage), where the machine has the instructions; results can differ
    /// in the last bit from the program's separately rounded operations.
    /// Off by default (`adc --fp-contract`).
    ///
    /// ```
    /// let src = "double f(double a, double b, double c) { return a * b + c; }";
    /// let options = adc::CompileOptions { fp_contract: true, ..Default::default() };
    /// let mut module = adc::driver::load("f.ad", src, &options).expect("compiles");
    /// adc::driver::run_stages_for(&mut module, adc::Stage::Final, "f.ad", src, &options).expect("runs");
    /// assert_eq!(module.to_string().contains(" fma "), adc::host_has_fma());
    /// ```
    pub fp_contract: bool,
}

/// At most this many errors are reported: 20,000 undefined names on one
/// long line printed 4 GB (each error shows its line) and took minutes.
pub const MAX_REPORTED_ERRORS: usize = 100;

/// Keeps the first `MAX_REPORTED_ERRORS` of `diags` (`what`: "errors" or
/// "warnings"), the last with a note of how many more there were.
pub fn cap_reported(diags: &mut Vec<Diagnostic>, what: &str) {
    if diags.len() > MAX_REPORTED_ERRORS {
        let more = diags.len() - MAX_REPORTED_ERRORS;
        diags.truncate(MAX_REPORTED_ERRORS);
        if let Some(last) = diags.last_mut() {
            last.notes.push(format!(
                "{more} more {what} not shown (only the first {MAX_REPORTED_ERRORS} are reported)"
            ));
        }
    }
}

fn failure(
    mut diags: Vec<Diagnostic>,
    path: &str,
    source: &str,
    options: &CompileOptions,
) -> Failure {
    cap_reported(&mut diags, "errors");
    let rendered = render(
        &diags,
        path,
        source,
        RenderConfig {
            color: options.color,
        },
    );
    Failure {
        diagnostics: diags,
        rendered,
    }
}

/// Source text to verified, lowered IR (the [`Stage::Lower`] module):
/// parsing, name resolution, type checking and lowering. `path` names the
/// source in diagnostics, which `options` renders.
///
/// ```
/// let src = "double f(double x) { return 2.0 * x; }";
/// let module = adc::driver::frontend("f.ad", src, &adc::CompileOptions::default()).expect("compiles");
/// assert!(module.find("f").is_some());
/// assert!(module.to_string().starts_with("func @f(x: f64) -> f64 {"));
///
/// let err = adc::driver::frontend("g.ad", "int g() { return true; }", &adc::CompileOptions::default())
///     .err()
///     .expect("a type error");
/// assert!(err.diagnostics[0].is_error());
/// assert!(err.rendered.contains("g.ad:1:"));
/// ```
pub fn frontend(path: &str, source: &str, options: &CompileOptions) -> Result<Module, Failure> {
    frontend_with_warnings(path, source, options).map(|(module, _)| module)
}

/// [`frontend`], with the warnings of the source (unused variables and
/// parameters) from the same run: `check` and `compile` print them; `run`,
/// `ir` and `tape` do not, so their output stays the program's.
///
/// ```
/// let src = "double f(double x, double unused) { return x; }";
/// let (module, warnings) = adc::driver::frontend_with_warnings("f.ad", src, &adc::CompileOptions::default()).expect("compiles");
/// assert!(module.find("f").is_some());
/// assert_eq!(warnings.len(), 1);
/// assert_eq!(warnings[0].code, "W0001");
/// assert!(warnings[0].message.contains("`unused`"));
/// ```
pub fn frontend_with_warnings(
    path: &str,
    source: &str,
    options: &CompileOptions,
) -> Result<(Module, Vec<Diagnostic>), Failure> {
    let compiled = adc_frontend::compile_to_ir(source)
        .map_err(|diags| failure(diags, path, source, options))?;
    if let Err(e) = adc_ir::verify(&compiled.module) {
        let d = Diagnostic::error(
            "E0999",
            format!("internal compiler error: lowered IR does not verify:\n{e}"),
            Span::UNDEFINED,
        );
        return Err(failure(vec![d], path, source, options));
    }
    Ok((compiled.module, compiled.warnings))
}

/// The warnings of a source that compiles (none for textual IR or a
/// source with errors), as [`frontend_with_warnings`] gives them.
///
/// ```
/// let src = "double f(double x, double unused) { return x; }";
/// let warnings = adc::driver::warnings("f.ad", src);
/// assert_eq!(warnings[0].code, "W0001");
/// assert!(adc::driver::warnings("f.adir", src).is_empty());
/// ```
pub fn warnings(path: &str, source: &str) -> Vec<Diagnostic> {
    match load_with_warnings(path, source, &CompileOptions::default()) {
        Ok((_, warnings)) => warnings,
        Err(_) => Vec::new(),
    }
}

/// Textual IR (the form `adc ir` prints, read from `.adir` files) to a
/// verified module, its unchecked loads and stores made safe.
///
/// ```
/// let text = "func @twice(x: f64) -> f64 {
/// block0(v0: f64):
///     v1: f64 = add v0, v0
///     return v1
/// }";
/// let module = adc::driver::parse_ir("twice.adir", text).expect("parses and verifies");
/// assert!(module.find("twice").is_some());
/// let err = adc::driver::parse_ir("bad.adir", "func @f(").err().expect("does not parse");
/// assert!(err.rendered.starts_with("error: bad.adir:1:"));
/// ```
pub fn parse_ir(path: &str, text: &str) -> Result<Module, Failure> {
    let bad = |message: String| Failure {
        diagnostics: Vec::new(),
        rendered: format!("error: {path}:{message}\n"),
    };
    let mut m = adc_ir::parse_module(text).map_err(|e| bad(e.to_string()))?;
    adc_ir::verify(&m).map_err(|e| bad(format!(" IR does not verify:\n{e}")))?;
    crate::user_ir::make_safe(&mut m).map_err(|e| bad(format!(" {e}")))?;
    adc_ir::verify(&m)
        .map_err(|e| bad(format!(" internal error: safe IR does not verify:\n{e}")))?;
    Ok(m)
}

/// Runs the passes of every stage up to and including `stage`.
/// On a deep stack (`adc_frontend::with_deep_stack`): passes may recurse
/// as deep as the source nests. The error is a derivative that cannot be
/// generated (E0401 as a diagnostic, see [`run_stages_for`]).
///
/// ```
/// use adc::Stage;
///
/// let src = "[autodiff_forward(tf, Dual, DualOnly)] double f(double x) { return x * x; }";
/// let mut module = adc::driver::frontend("f.ad", src, &adc::CompileOptions::default()).expect("compiles");
/// assert!(!module.to_string().contains(" = diff "), "`tf` has no body yet");
/// adc::driver::run_stages(&mut module, Stage::Linearize).expect("linearizes");
/// assert!(module.to_string().contains(" = diff mulz "));
/// ```
pub fn run_stages(module: &mut Module, stage: Stage) -> Result<(), adc_passes::ad::AdError> {
    adc_frontend::with_deep_stack(|| run_stages_here(module, stage))
}

fn run_stages_here(module: &mut Module, stage: Stage) -> Result<(), adc_passes::ad::AdError> {
    use adc_passes::ad::AdStage;
    let stop = match stage {
        Stage::Lower => return Ok(()),
        Stage::Linearize => AdStage::Linearize,
        Stage::Propagate => AdStage::Propagate,
        Stage::LowerPairs => AdStage::LowerPairs,
        Stage::Widen => AdStage::Widen,
        Stage::Unzip => AdStage::Unzip,
        _ => AdStage::Transpose,
    };
    adc_passes::ad::differentiate(module, stop)?;
    verify_in_debug(module, stage)?;
    if stage >= Stage::Opt {
        adc_passes::optimize(module);
        verify_in_debug(module, Stage::Opt)?;
    }
    Ok(())
}

/// The module after every stage from `lower` to `opt`, from one run of the
/// pipeline: entry `k` equals what `run_stages` up to that stage leaves
/// (for the differential tester, which interprets every stage).
// Not part of the library API: for the project's differential tests.
#[doc(hidden)]
pub fn stage_snapshots(module: Module) -> Result<Vec<(Stage, Module)>, adc_passes::ad::AdError> {
    adc_frontend::with_deep_stack(move || {
        use adc_passes::ad::AdStage;
        let mut module = module;
        let mut out = vec![(Stage::Lower, module.clone())];
        let mut seen = Vec::new();
        adc_passes::ad::differentiate_observed(&mut module, AdStage::Transpose, &mut |s, m| {
            seen.push((s, m.clone()))
        })?;
        let ad_stages = [
            (AdStage::Linearize, Stage::Linearize),
            (AdStage::Propagate, Stage::Propagate),
            (AdStage::LowerPairs, Stage::LowerPairs),
            (AdStage::Widen, Stage::Widen),
            (AdStage::Unzip, Stage::Unzip),
            (AdStage::Transpose, Stage::Transpose),
        ];
        for (ad, stage) in ad_stages {
            // A module that asks for no derivative is the same at every
            // derivative stage.
            let m = match seen.iter().position(|(s, _)| *s == ad) {
                Some(k) => seen.swap_remove(k).1,
                None => module.clone(),
            };
            verify_in_debug(&m, stage)?;
            out.push((stage, m));
        }
        adc_passes::optimize(&mut module);
        verify_in_debug(&module, Stage::Opt)?;
        out.push((Stage::Opt, module));
        Ok(out)
    })
}

/// Debug builds (every test) check the IR after each stage.
fn verify_in_debug(module: &Module, stage: Stage) -> Result<(), adc_passes::ad::AdError> {
    if cfg!(debug_assertions) {
        if let Err(e) = adc_ir::verify(module) {
            return Err(adc_passes::ad::AdError::internal(
                format!(
                    "internal compiler error: IR after `{stage:?}` does not verify:\n{e}\n{module}"
                ),
                Span::UNDEFINED,
            ));
        }
    }
    Ok(())
}

/// `run_stages`, with a derivative error as a rendered diagnostic (E0401;
/// E0999 for an internal error). `path`, `source` and `options` are those
/// given to [`frontend`], for the rendering.
///
/// ```
/// let src = "double f(double x) { return x; }";
/// let mut module = adc::driver::frontend("f.ad", src, &adc::CompileOptions::default()).expect("compiles");
/// adc::driver::run_stages_for(&mut module, adc::Stage::Final, "f.ad", src, &adc::CompileOptions::default())
///     .expect("nothing to differentiate");
/// assert!(module.find("f").is_some());
/// ```
pub fn run_stages_for(
    module: &mut Module,
    stage: Stage,
    path: &str,
    source: &str,
    options: &CompileOptions,
) -> Result<(), Failure> {
    run_stages(module, stage).map_err(|e| ad_failure(e, path, source, options))?;
    if stage == Stage::Final {
        opt_in_passes(module, options).map_err(|e| ad_failure(e, path, source, options))?;
    }
    Ok(())
}

/// Whether `options` ask for a pass of the `final` stage this machine can
/// run (`contract` needs fused multiply-add instructions).
pub(crate) fn wants_opt_in_passes(options: &CompileOptions) -> bool {
    options.fp_contract && adc_codegen::host_has_fma()
}

/// The `final` stage's passes that run only when asked: `contract` with
/// `options.fp_contract` where the machine has fused multiply-add
/// instructions. Whether any ran.
pub(crate) fn opt_in_passes(
    module: &mut Module,
    options: &CompileOptions,
) -> Result<bool, adc_passes::ad::AdError> {
    if !wants_opt_in_passes(options) {
        return Ok(false);
    }
    adc_passes::contract_module(module);
    verify_in_debug(module, Stage::Final)?;
    Ok(true)
}

/// A differentiation error as a diagnostic: E0401 for what is not
/// supported, E0999 for an internal error.
fn ad_failure(
    e: adc_passes::ad::AdError,
    path: &str,
    source: &str,
    options: &CompileOptions,
) -> Failure {
    let code = match e.kind {
        AdErrorKind::Unsupported => "E0401",
        AdErrorKind::Internal => "E0999",
    };
    failure(
        vec![Diagnostic::error(code, e.message, e.span)],
        path,
        source,
        options,
    )
}

/// Loads `.ad` source or `.adir` text (by `path`'s extension; a path with
/// neither extension is textual IR when its text is, see
/// [`is_textual_ir`]) as a verified module: [`frontend`] or [`parse_ir`].
///
/// ```
/// let from_source = adc::driver::load("f.ad", "double f(double x) { return x; }", &adc::CompileOptions::default())
///     .expect("compiles");
/// let ir = from_source.to_string();
/// let from_ir = adc::driver::load("f.adir", &ir, &adc::CompileOptions::default()).expect("parses");
/// assert_eq!(from_ir.to_string(), ir);
/// ```
pub fn load(path: &str, source: &str, options: &CompileOptions) -> Result<Module, Failure> {
    load_with_warnings(path, source, options).map(|(module, _)| module)
}

/// Whether [`load`] reads `source` as textual IR: a path ending in `.adir`,
/// or one ending in neither `.adir` nor `.ad` (`adc ir f.ad > f.ir`) whose
/// first item, after blank lines and `;` comments, starts as textual IR's
/// do (`func @`, `extern @` or `static @`, which `.ad` source never has).
///
/// ```
/// use adc::driver::is_textual_ir;
/// assert!(is_textual_ir("f.adir", ""));
/// assert!(is_textual_ir("f.ir", "; made by adc ir\nfunc @f() -> f64 {"));
/// assert!(!is_textual_ir("f.ad", "func @f() -> f64 {"));
/// assert!(!is_textual_ir("f.txt", "extern double j0(double x);"));
/// ```
pub fn is_textual_ir(path: &str, source: &str) -> bool {
    if path.ends_with(".adir") {
        return true;
    }
    if path.ends_with(".ad") {
        return false;
    }
    let first = source
        .lines()
        .map(str::trim)
        .find(|l| !l.is_empty() && !l.starts_with(';'))
        .unwrap_or("");
    ["func", "extern", "static"].iter().any(|kw| {
        first
            .strip_prefix(kw)
            .is_some_and(|rest| rest.trim_start().starts_with('@'))
    })
}

/// [`load`], with the warnings of `.ad` source ([`frontend_with_warnings`];
/// textual IR has none).
pub fn load_with_warnings(
    path: &str,
    source: &str,
    options: &CompileOptions,
) -> Result<(Module, Vec<Diagnostic>), Failure> {
    if is_textual_ir(path, source) {
        parse_ir(path, source).map(|module| (module, Vec::new()))
    } else {
        frontend_with_warnings(path, source, options)
    }
}
