//! The `adc` command line (docs/cli.md). Exit codes: 0 success,
//! 1 compile error, 2 bad usage or bad `--args`, 3 runtime error.

use adc::driver::{self, Stage};
use adc::json;
use clap::{Parser, Subcommand};
use std::io::IsTerminal;
use std::process::ExitCode;

mod explain;
mod jacobian_run;

#[derive(Parser)]
#[command(
    name = "adc",
    version,
    about = "A compiler for the .ad language with automatic differentiation"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
    /// How diagnostics are written to stderr: `human` (source lines and
    /// carets) or `json` (one object per line, for tools).
    #[arg(long, global = true, value_enum, default_value_t = ErrorFormat::Human)]
    error_format: ErrorFormat,
    /// Fuse a float multiply used only by an add or subtract into one
    /// multiply-add rounded once, where the machine has it (as C compilers
    /// do; results can differ in the last bit)
    #[arg(long, global = true)]
    fp_contract: bool,
}

#[derive(Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum ErrorFormat {
    Human,
    Json,
}

/// Writes diagnostics (a compile failure's, or warnings) to stderr.
fn report(
    diags: &[adc_frontend::Diagnostic],
    rendered: &str,
    format: ErrorFormat,
    file: &str,
    source: &str,
) {
    match format {
        ErrorFormat::Human => eprint!("{rendered}"),
        ErrorFormat::Json if diags.is_empty() => {
            // Failures without a located diagnostic (textual IR's parser).
            let obj = serde_json::json!({"severity": "error", "code": null,
                "message": rendered.trim_end(), "file": file});
            eprintln!("{obj}");
        }
        ErrorFormat::Json => eprint!("{}", json::diagnostics_json(diags, file, source)),
    }
}

fn report_failure(f: &driver::Failure, format: ErrorFormat, file: &str, source: &str) {
    report(&f.diagnostics, &f.rendered, format, file, source);
}

/// Prints the warnings of a source that compiled.
/// At most `MAX_REPORTED_ERRORS` of them, as for errors: each shows its
/// source line, and 8,000 unused variables on one line ran out of memory.
fn report_warnings(
    mut warnings: Vec<adc_frontend::Diagnostic>,
    format: ErrorFormat,
    file: &str,
    source: &str,
    options: &adc::CompileOptions,
) {
    driver::cap_reported(&mut warnings, "warnings");
    if !warnings.is_empty() {
        let rendered = adc_frontend::render(
            &warnings,
            file,
            source,
            adc_frontend::RenderConfig {
                color: options.color,
            },
        );
        report(&warnings, &rendered, format, file, source);
    }
}

#[derive(Subcommand)]
enum Command {
    /// Run every stage of `compile` (derivatives, code generation) without
    /// writing files; print diagnostics only.
    Check {
        /// The `.ad` source file.
        file: String,
    },
    /// Compile with the JIT and call a function.
    Run {
        /// The `.ad` source file (or textual IR: `.adir`, or IR text under another name).
        file: String,
        /// The function to call.
        #[arg(long, value_name = "NAME", default_value = "main")]
        entry: String,
        /// The arguments: a JSON array with one value per parameter
        /// (`'[1.5, [1, 2, 3]]'`); `@FILE` reads it from a file, `@-` from
        /// standard input.
        #[arg(long, value_name = "JSON")]
        args: Option<String>,
        /// Also compute the gradient of the entry's result (reverse mode,
        /// seed 1, default activities).
        #[arg(long, conflicts_with_all = ["tangent", "jacobian"])]
        grad: bool,
        /// Also compute the dense Jacobian of the entry (docs/derivatives.md),
        /// printed as rows.
        #[arg(long, conflicts_with = "tangent")]
        jacobian: bool,
        /// Also compute the dense Hessian of the entry's float result
        /// (docs/derivatives.md), printed as rows.
        #[arg(long, conflicts_with_all = ["tangent", "grad", "jacobian"])]
        hessian: bool,
        /// Forward mode: a JSON array with one tangent per parameter (`null`
        /// for parameters without a derivative); `@FILE` and `@-` as for
        /// `--args`.
        #[arg(long, value_name = "JSON")]
        tangent: Option<String>,
        /// Print one JSON object as the last line of stdout.
        #[arg(long)]
        json: bool,
    },
    /// Write an object file (and optionally a C header).
    Compile {
        /// The `.ad` source file (or textual IR: `.adir`, or IR text under another name).
        file: String,
        /// The object file to write (default: the file's stem with `.o`).
        #[arg(short = 'o', value_name = "OUT.o")]
        output: Option<String>,
        /// Also write a C header declaring the exported functions.
        #[arg(long = "emit-header", value_name = "OUT.h")]
        emit_header: Option<String>,
    },
    /// What each reverse derivative's tape stores (docs/cli.md).
    Tape {
        /// The `.ad` source file.
        file: String,
        /// Print one JSON object.
        #[arg(long)]
        json: bool,
    },
    /// Print the IR after a pipeline stage (`.ad` or `.adir` input).
    Ir {
        /// The `.ad` source file (or textual IR: `.adir`, or IR text under another name).
        file: String,
        /// The stage after which to print: lower, linearize, propagate,
        /// lower-pairs, widen, unzip, transpose, opt or final.
        #[arg(long, value_name = "STAGE", default_value = "final")]
        after: String,
    },
    /// Explain a diagnostic code, as in `adc explain E0116` (docs/errors.md).
    Explain {
        /// The code, as in `E0116` or `W0001`.
        code: String,
    },
}

fn usage_error(msg: &str) -> ExitCode {
    eprintln!("error: {msg}");
    ExitCode::from(2)
}

fn read(file: &str) -> Result<String, ExitCode> {
    std::fs::read_to_string(file).map_err(|e| usage_error(&format!("cannot read `{file}`: {e}")))
}

/// The text of a JSON option (`--args`, `--tangent`): as given, or read
/// from a file by `@FILE`, from standard input by `@-`.
fn option_text(what: &str, text: Option<&str>) -> Result<Option<String>, ExitCode> {
    let Some(text) = text else {
        return Ok(None);
    };
    let Some(path) = text.strip_prefix('@') else {
        return Ok(Some(text.to_string()));
    };
    let read = if path == "-" {
        let mut t = String::new();
        std::io::Read::read_to_string(&mut std::io::stdin(), &mut t).map(|_| t)
    } else {
        std::fs::read_to_string(path)
    };
    read.map(Some)
        .map_err(|e| usage_error(&format!("cannot read `{what}` from `{path}`: {e}")))
}

/// `--args` read against the entry's parameters (none needed for none).
fn read_args(
    entry: &str,
    args: Option<&str>,
    params: &[adc_ir::Param],
) -> Result<Vec<adc::ArgValue>, ExitCode> {
    match (option_text("--args", args)?, params.is_empty()) {
        (Some(text), _) => {
            json::args_from_json(entry, &text, params).map_err(|msg| usage_error(&msg))
        }
        (None, true) => Ok(Vec::new()),
        (None, false) => Err(usage_error(&format!(
            "{}\n  pass {} with `--args`, as in `--args '{}'`",
            json::takes(entry, params),
            if params.len() == 1 {
                "its value"
            } else {
                "their values"
            },
            json::example_args(params)
        ))),
    }
}

/// `adc run --grad` / `--tangent`.
#[allow(clippy::too_many_arguments)]
fn run_derivative(
    file: &str,
    source: &str,
    options: &adc::CompileOptions,
    entry: &str,
    args: Option<&str>,
    grad: bool,
    tangent: Option<&str>,
    json: bool,
    cli_format: ErrorFormat,
) -> ExitCode {
    use adc::derivs::{derivative_args, gradient_items, gradient_json, gradient_text, Request};
    let req = match option_text("--tangent", tangent) {
        Ok(Some(text)) if !grad => match json::json_list("--tangent", &text) {
            Ok(ts) => Request::Tangent(ts),
            Err(msg) => return usage_error(&msg),
        },
        Ok(_) => Request::Grad,
        Err(code) => return code,
    };
    let (jit, src, name) = match driver::compile_jit_request(file, source, options, entry, &req) {
        Ok(x) => x,
        Err(driver::RequestFailure::Compile(f)) => {
            report_failure(&f, cli_format, file, source);
            return ExitCode::from(1);
        }
        Err(driver::RequestFailure::Usage(m)) => return usage_error(&m),
    };
    let primal = match read_args(entry, args, &src.params) {
        Ok(v) => v,
        Err(code) => return code,
    };
    let (mut dargs, shadow_at) = match derivative_args(&src, &primal, &req) {
        Ok(x) => x,
        Err(m) => return usage_error(&m),
    };
    let results = match jit.call(&name, &mut dargs) {
        Ok(r) => r,
        Err(adc::CallError::Runtime(msg)) => {
            eprintln!("runtime error: {msg}");
            return ExitCode::from(3);
        }
        Err(e) => return usage_error(&e.to_string()),
    };
    let n_primal = src.returns.len().min(results.len());
    let result_text = json::result_json(&results[..n_primal]);
    let extra = &results[n_primal..];
    let arg_texts: Vec<String> = dargs
        .iter()
        .enumerate()
        .filter(|(i, _)| !shadow_at.contains(&Some(*i)) && *i < dargs.len() - usize::from(grad))
        .map(|(_, a)| json::arg_json(a))
        .collect();
    let (deriv_json, deriv_text) = if grad {
        let items = gradient_items(&src, &dargs, &shadow_at, extra);
        (
            format!("\"gradient\": {}", gradient_json(&items)),
            gradient_text(&src, &items),
        )
    } else {
        // A tuple's tangent is an array with one entry per element: the
        // float elements' tangents in order, `null` for the others.
        let tangent = if src.returns.len() > 1 {
            let mut floats = extra.iter();
            let items: Vec<String> = src
                .returns
                .iter()
                .map(|t| match t.elem().is_float() {
                    true => floats
                        .next()
                        .map_or("null".into(), |c| json::scalar_json(*c)),
                    false => "null".into(),
                })
                .collect();
            format!("[{}]", items.join(", "))
        } else {
            json::result_json(extra)
        };
        (
            format!("\"tangent\": {tangent}"),
            format!("tangent: {tangent}\n"),
        )
    };
    if json {
        println!(
            "{{\"result\": {result_text}, \"args\": [{}], {deriv_json}}}",
            arg_texts.join(", ")
        );
    } else {
        println!("result: {result_text}");
        print!("{deriv_text}");
    }
    ExitCode::SUCCESS
}

/// `print!` panics when stdout cannot be written (`> /dev/full`; a closed
/// pipe ends adc by SIGPIPE first): that is an error message and exit
/// code 2, not a panic with a backtrace.
fn quiet_output_errors() {
    let default = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        let payload = info.payload();
        let msg = payload
            .downcast_ref::<String>()
            .map(String::as_str)
            .or_else(|| payload.downcast_ref::<&str>().copied())
            .unwrap_or("");
        if msg.starts_with("failed printing to std") {
            use std::io::Write;
            let _ = writeln!(std::io::stderr(), "error: {msg}");
            std::process::exit(2);
        }
        default(info);
    }));
}

/// Why `adc compile FILE -o OUT --emit-header H` would overwrite what it
/// reads or write one file twice (as `cc`, it refuses).
fn output_clash(file: &str, output: Option<&str>, header: Option<&str>) -> Option<String> {
    let same = |a: &str, b: &str| {
        let (pa, pb) = (std::path::Path::new(a), std::path::Path::new(b));
        match (pa.canonicalize(), pb.canonicalize()) {
            (Ok(x), Ok(y)) => x == y,
            _ => pa == pb,
        }
    };
    for (what, out) in [("output file", output), ("header", header)] {
        if out.is_some_and(|o| same(o, file)) {
            return Some(format!(
                "the {what} `{}` is the input file",
                out.unwrap_or_default()
            ));
        }
    }
    match (output, header) {
        (Some(o), Some(h)) if same(o, h) => Some(format!(
            "the output file and the header are the same file `{o}`"
        )),
        _ => None,
    }
}

fn main() -> ExitCode {
    // Rust ignores SIGPIPE, so writing to a closed pipe (`adc run .. | head`)
    // is an error every `print!` turns into a panic; as other Unix tools,
    // adc ends quietly instead.
    #[cfg(unix)]
    // SAFETY: restoring a signal's default disposition at start-up, before
    // any thread exists.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
    quiet_output_errors();
    let cli = Cli::parse();
    let cli_format = cli.error_format;
    let options = adc::CompileOptions {
        color: std::io::stderr().is_terminal(),
        fp_contract: cli.fp_contract,
    };
    match cli.command {
        Command::Explain { code } => explain(&code),
        Command::Check { file } => check(&file, cli_format, &options),
        Command::Run {
            file,
            entry,
            args,
            grad,
            jacobian,
            hessian,
            tangent,
            json,
        } => {
            if jacobian || hessian {
                let source = match read(&file) {
                    Ok(s) => s,
                    Err(c) => return c,
                };
                let run = jacobian_run::Run {
                    file: &file,
                    source: &source,
                    options: &options,
                    entry: &entry,
                    args: args.as_deref(),
                    json,
                    cli_format,
                    hessian,
                };
                return run.run();
            }
            run(
                &file,
                &entry,
                args.as_deref(),
                grad,
                tangent.as_deref(),
                json,
                cli_format,
                &options,
            )
        }
        Command::Compile {
            file,
            output,
            emit_header,
        } => compile(&file, output, emit_header, cli_format, &options),
        Command::Tape { file, json } => tape(&file, json, cli_format, &options),
        Command::Ir { file, after } => ir(&file, &after, cli_format, &options),
    }
}

/// `adc explain CODE`: the page of an error code; exit 2 for an unknown one.
fn explain(code: &str) -> ExitCode {
    match explain::entry(code) {
        Some(text) => {
            print!("{text}");
            ExitCode::SUCCESS
        }
        None => usage_error(&format!(
            "no error code `{code}`; the codes are listed in docs/errors.md"
        )),
    }
}

/// `adc check FILE`: exit 1 when the program has errors.
fn check(file: &str, cli_format: ErrorFormat, options: &adc::CompileOptions) -> ExitCode {
    let source = match read(file) {
        Ok(s) => s,
        Err(c) => return c,
    };
    // Everything `adc compile` does but writing files, so check
    // succeeds exactly when compile does (derivatives included).
    match driver::compile_object(file, &source, "ADC_CHECK_H", options) {
        Ok(out) => {
            report_warnings(out.warnings, cli_format, file, &source, options);
            ExitCode::SUCCESS
        }
        Err(f) => {
            report_failure(&f, cli_format, file, &source);
            ExitCode::from(1)
        }
    }
}

/// `adc run FILE`: the entry's result (or a derivative's, `run_derivative`);
/// exit 1 for compile errors, 2 for bad arguments, 3 for a runtime error.
#[allow(clippy::too_many_arguments)]
fn run(
    file: &str,
    entry: &str,
    args: Option<&str>,
    grad: bool,
    tangent: Option<&str>,
    json: bool,
    cli_format: ErrorFormat,
    options: &adc::CompileOptions,
) -> ExitCode {
    let source = match read(file) {
        Ok(s) => s,
        Err(c) => return c,
    };
    if grad || tangent.is_some() {
        return run_derivative(
            file, &source, options, entry, args, grad, tangent, json, cli_format,
        );
    }
    let jit = match driver::compile_jit(file, &source, options) {
        Ok(j) => j,
        Err(f) => {
            report_failure(&f, cli_format, file, &source);
            return ExitCode::from(1);
        }
    };
    let Some(func) = jit.function(entry) else {
        let names: Vec<&str> = jit.functions().map(|f| f.name.as_str()).collect();
        return usage_error(&adc::derivs::no_entry(entry, &names));
    };
    let mut values = match read_args(entry, args, &func.params) {
        Ok(v) => v,
        Err(code) => return code,
    };
    match jit.call(entry, &mut values) {
        Ok(result) => {
            let result_text = json::result_json(&result);
            if json {
                let args: Vec<String> = values.iter().map(json::arg_json).collect();
                println!(
                    "{{\"result\": {result_text}, \"args\": [{}]}}",
                    args.join(", ")
                );
            } else {
                println!("{result_text}");
            }
            ExitCode::SUCCESS
        }
        Err(adc::CallError::Runtime(msg)) => {
            eprintln!("runtime error: {msg}");
            ExitCode::from(3)
        }
        Err(e) => usage_error(&e.to_string()),
    }
}

/// `adc compile FILE`: an object file (and a C header); exit 1 for compile
/// errors, 2 when a file cannot be written.
fn compile(
    file: &str,
    output: Option<String>,
    emit_header: Option<String>,
    cli_format: ErrorFormat,
    options: &adc::CompileOptions,
) -> ExitCode {
    let source = match read(file) {
        Ok(s) => s,
        Err(c) => return c,
    };
    if let Some(clash) = output_clash(file, output.as_deref(), emit_header.as_deref()) {
        return usage_error(&clash);
    }
    let stem = std::path::Path::new(file)
        .file_stem()
        .and_then(|s| s.to_str())
        .unwrap_or("out")
        .to_string();
    let guard: String = format!("ADC_{}_H", stem.to_uppercase())
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
        .collect();
    match driver::compile_object(file, &source, &guard, options) {
        Ok(compiled) => {
            report_warnings(compiled.warnings, cli_format, file, &source, options);
            let out = output.unwrap_or_else(|| format!("{stem}.o"));
            if let Err(e) = std::fs::write(&out, compiled.object) {
                return usage_error(&format!("cannot write `{out}`: {e}"));
            }
            if let Some(h) = emit_header {
                if let Err(e) = std::fs::write(&h, compiled.header) {
                    return usage_error(&format!("cannot write `{h}`: {e}"));
                }
            }
            ExitCode::SUCCESS
        }
        Err(f) => {
            report_failure(&f, cli_format, file, &source);
            ExitCode::from(1)
        }
    }
}

/// `adc tape FILE`: the tape report of each reverse derivative; exit 1 for
/// compile errors.
fn tape(
    file: &str,
    json: bool,
    cli_format: ErrorFormat,
    options: &adc::CompileOptions,
) -> ExitCode {
    let source = match read(file) {
        Ok(s) => s,
        Err(c) => return c,
    };
    match driver::tape_reports(file, &source, options) {
        Ok(reports) if json => {
            println!("{}", adc::tape_report::render_json(&reports));
            ExitCode::SUCCESS
        }
        Ok(reports) => {
            print!("{}", adc::tape_report::render_text(&reports));
            ExitCode::SUCCESS
        }
        Err(f) => {
            report_failure(&f, cli_format, file, &source);
            ExitCode::from(1)
        }
    }
}

/// `adc ir FILE --after STAGE`: the IR after a stage; exit 2 for an unknown
/// stage, 1 for compile errors.
fn ir(file: &str, after: &str, cli_format: ErrorFormat, options: &adc::CompileOptions) -> ExitCode {
    let Some(stage) = Stage::from_name(after) else {
        let names: Vec<&str> = Stage::ALL.iter().map(|(n, _)| *n).collect();
        return usage_error(&format!(
            "unknown stage `{after}`; stages: {}",
            names.join(", ")
        ));
    };
    let source = match read(file) {
        Ok(s) => s,
        Err(c) => return c,
    };
    let loaded = driver::load(file, &source, options).and_then(|mut m| {
        driver::run_stages_for(&mut m, stage, file, &source, options)?;
        Ok(m)
    });
    match loaded {
        Ok(m) => {
            print!("{m}");
            ExitCode::SUCCESS
        }
        Err(f) => {
            report_failure(&f, cli_format, file, &source);
            ExitCode::from(1)
        }
    }
}
