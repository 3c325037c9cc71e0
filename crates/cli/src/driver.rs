//! The compilation pipeline as functions over source text and modules.

use adc_frontend::{render, Diagnostic, RenderConfig};
use adc_ir::{Module, Span};

/// The stages `adc ir --after` can stop at, in pipeline order.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Stage {
    Lower,
    Linearize,
    Propagate,
    LowerPairs,
    Unzip,
    Transpose,
    Opt,
    Final,
}

impl Stage {
    pub const ALL: &'static [(&'static str, Stage)] = &[
        ("lower", Stage::Lower),
        ("linearize", Stage::Linearize),
        ("propagate", Stage::Propagate),
        ("lower-pairs", Stage::LowerPairs),
        ("unzip", Stage::Unzip),
        ("transpose", Stage::Transpose),
        ("opt", Stage::Opt),
        ("final", Stage::Final),
    ];

    pub fn from_name(s: &str) -> Option<Stage> {
        Stage::ALL.iter().find(|(n, _)| *n == s).map(|(_, st)| *st)
    }
}

/// Why compilation stopped: the diagnostics, and their rendered text
/// (with the source lines) for the user.
///
/// ```
/// let err = adc::compile_jit("bad.ad", "double f(double x) { return x + ; }", false)
///     .err()
///     .expect("a syntax error");
/// assert_eq!(err.diagnostics[0].severity, adc::Severity::Error);
/// assert!(err.rendered.contains("bad.ad:1:"));
/// ```
#[derive(Debug)]
pub struct Failure {
    pub diagnostics: Vec<Diagnostic>,
    pub rendered: String,
}

impl std::fmt::Display for Failure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.rendered)
    }
}

impl std::error::Error for Failure {}

fn failure(diags: Vec<Diagnostic>, path: &str, source: &str, color: bool) -> Failure {
    let rendered = render(&diags, path, source, RenderConfig { color });
    Failure {
        diagnostics: diags,
        rendered,
    }
}

/// Source text to verified, lowered IR.
pub fn frontend(path: &str, source: &str, color: bool) -> Result<Module, Failure> {
    let (module, diags) = adc_frontend::compile_to_ir(source);
    match module {
        Some(m) => {
            if let Err(e) = adc_ir::verify(&m) {
                let d = Diagnostic::error(
                    "E0999",
                    format!("internal compiler error: lowered IR does not verify:\n{e}"),
                    Span::UNDEFINED,
                );
                return Err(failure(vec![d], path, source, color));
            }
            Ok(m)
        }
        None => Err(failure(diags, path, source, color)),
    }
}

/// The warnings of a source that compiles (none for textual IR): unused
/// variables and parameters. `check` and `compile` print them; `run`,
/// `ir` and `tape` do not, so their output stays the program's.
pub fn warnings(path: &str, source: &str) -> Vec<Diagnostic> {
    if path.ends_with(".adir") {
        return Vec::new();
    }
    let (_, diags) = adc_frontend::compile_to_ir(source);
    diags.into_iter().filter(|d| !d.is_error()).collect()
}

/// Textual IR to a verified module.
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
/// as deep as the source nests.
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
            return Err(adc_passes::ad::AdError::new(
                format!(
                    "internal compiler error: IR after `{stage:?}` does not verify:\n{e}\n{module}"
                ),
                Span::UNDEFINED,
            ));
        }
    }
    Ok(())
}

/// `run_stages`, with a derivative error as a rendered diagnostic.
pub fn run_stages_for(
    module: &mut Module,
    stage: Stage,
    path: &str,
    source: &str,
    color: bool,
) -> Result<(), Failure> {
    run_stages(module, stage).map_err(|e| {
        let code = if e.message.starts_with("internal") {
            "E0999"
        } else {
            "E0401"
        };
        failure(
            vec![Diagnostic::error(code, e.message, e.span)],
            path,
            source,
            color,
        )
    })
}

/// `file:line:col` of a span, for runtime error messages.
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

pub(crate) fn codegen_failure(
    e: adc_codegen::CodegenError,
    path: &str,
    source: &str,
    color: bool,
) -> Failure {
    failure(
        vec![Diagnostic::error("E0500", e.to_string(), Span::UNDEFINED)],
        path,
        source,
        color,
    )
}

/// Source text (or textual IR when `path` ends in `.adir`) to JIT code.
/// `path` names the source in diagnostics and runtime errors; `color`
/// renders diagnostics with ANSI colours.
///
/// ```
/// let jit = adc::compile_jit("sq.ad", "double sq(double x) { return x * x; }", false)
///     .expect("compiles");
/// let sq: adc::TypedFunc<(f64,), f64> = jit.typed("sq").expect("signature");
/// assert_eq!(sq.call((3.0,)), Ok(9.0));
/// ```
pub fn compile_jit(
    path: &str,
    source: &str,
    color: bool,
) -> Result<adc_codegen::JitModule, Failure> {
    let mut module = load(path, source, color)?;
    run_stages_for(&mut module, Stage::Final, path, source, color)?;
    adc_codegen::jit(&module, &locator(path, source), &[])
        .map_err(|e| codegen_failure(e, path, source, color))
}

/// Why `adc run --grad/--tangent` stopped before calling anything.
#[derive(Debug)]
pub enum RequestFailure {
    Compile(Failure),
    Usage(String),
}

/// Like `compile_jit`, after adding the derivative `req` of `entry`.
/// Returns the module, the entry's IR signature and the generated name.
pub fn compile_jit_request(
    path: &str,
    source: &str,
    color: bool,
    entry: &str,
    req: &crate::derivs::Request,
) -> Result<(adc_codegen::JitModule, adc_ir::Function, String), RequestFailure> {
    let mut module = load(path, source, color).map_err(RequestFailure::Compile)?;
    let name =
        crate::derivs::add_request(&mut module, entry, req).map_err(RequestFailure::Usage)?;
    let src = module
        .func(module.find(entry).expect("add_request found it"))
        .clone();
    run_stages_for(&mut module, Stage::Final, path, source, color)
        .map_err(RequestFailure::Compile)?;
    let jit = adc_codegen::jit(&module, &locator(path, source), &[])
        .map_err(|e| RequestFailure::Compile(codegen_failure(e, path, source, color)))?;
    Ok((jit, src, name))
}

/// Source text to an object file and its C header.
pub fn compile_object(
    path: &str,
    source: &str,
    guard: &str,
    color: bool,
) -> Result<(Vec<u8>, String), Failure> {
    let (obj, module) = compile_object_module(path, source, color)?;
    Ok((obj, adc_codegen::c_header(&module, guard)))
}

/// Source text to an object file and the final module it was made from
/// (whose exported functions are its symbols; `adc-build` writes Rust
/// bindings from them).
pub fn compile_object_module(
    path: &str,
    source: &str,
    color: bool,
) -> Result<(Vec<u8>, Module), Failure> {
    let mut module = load(path, source, color)?;
    run_stages_for(&mut module, Stage::Final, path, source, color)?;
    let obj = adc_codegen::object(&module, &locator(path, source))
        .map_err(|e| codegen_failure(e, path, source, color))?;
    Ok((obj, module))
}

/// Loads `.ad` source or `.adir` text as a verified module.
pub fn load(path: &str, source: &str, color: bool) -> Result<Module, Failure> {
    if path.ends_with(".adir") {
        parse_ir(path, source)
    } else {
        frontend(path, source, color)
    }
}

/// `adc tape`: the tape reports of a file's reverse derivatives (after
/// every stage, as `compile` would build them).
pub fn tape_reports(
    path: &str,
    source: &str,
    color: bool,
) -> Result<Vec<crate::tape::Report>, Failure> {
    let mut module = load(path, source, color)?;
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
    run_stages_for(&mut module, Stage::Final, path, source, color)?;
    let lines = adc_frontend::diag::LineIndex::new(source);
    let line_of = |span: Span| {
        span.is_defined()
            .then(|| lines.line_col(span.start).0 as u32)
    };
    Ok(crate::tape::reports(
        &module,
        &requested,
        &locator(path, source),
        &line_of,
    ))
}
