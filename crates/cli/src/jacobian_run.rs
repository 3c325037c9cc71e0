//! `adc run --jacobian` and `--hessian` (docs/cli.md): the source with
//! `[jacobian]` (`[hessian]`) put on the entry (or on a wrapper of it when
//! the entry is a generated function), the generated function
//! called on the arguments and a `jac` (`hess`) of the matrix's size, and
//! its rows printed.

use crate::{read_args, report_failure, usage_error, ErrorFormat};
use adc::derivs::{jacobian_json, jacobian_shape, JACOBIAN_ENTRY};
use adc::{driver, json, ArgValue, ArrayValue};
use std::process::ExitCode;

pub(crate) struct Run<'a> {
    pub file: &'a str,
    pub source: &'a str,
    pub options: &'a adc::CompileOptions,
    pub entry: &'a str,
    pub args: Option<&'a str>,
    pub json: bool,
    pub cli_format: ErrorFormat,
    /// `--hessian` rather than `--jacobian`.
    pub hessian: bool,
}

impl Run<'_> {
    pub(crate) fn run(&self) -> ExitCode {
        // The entry as written, for its parameters and a usage error
        // naming the functions there are.
        let plain = match driver::compile_jit(self.file, self.source, self.options) {
            Ok(j) => j,
            Err(f) => {
                report_failure(&f, self.cli_format, self.file, self.source);
                return ExitCode::from(1);
            }
        };
        let Some(func) = plain.function(self.entry) else {
            let names: Vec<&str> = plain.functions().map(|f| f.name.as_str()).collect();
            return usage_error(&adc::derivs::no_entry(self.entry, &names));
        };
        let (params, returns) = (func.params.clone(), func.returns.clone());
        let (flag, key) = if self.hessian {
            ("--hessian", "hessian")
        } else {
            ("--jacobian", "jacobian")
        };
        if self.hessian && !matches!(returns.as_slice(), [t] if t.elem().is_float()) {
            return usage_error(&format!(
                "`--hessian` needs an entry that returns `float` or `double`; `{}` does not",
                self.entry
            ));
        }
        // A generated entry (not in the source) gets a wrapper of this
        // signature.
        let compiled = || {
            Some(adc_frontend::jacobian::Signature {
                params: params.clone(),
                returns: returns.clone(),
            })
        };
        let request = if self.hessian {
            adc_frontend::hessian::with_request(self.source, self.entry, JACOBIAN_ENTRY, compiled)
        } else {
            adc_frontend::jacobian::with_request(self.source, self.entry, JACOBIAN_ENTRY, compiled)
        };
        let source = match request {
            Ok(s) => s,
            Err(m) => return usage_error(&format!("`{flag}`: {m}")),
        };
        let jit = match driver::compile_jit(self.file, &source, self.options) {
            Ok(j) => j,
            // The attribute this command wrote is refused (a tuple result):
            // a usage error, not a diagnostic quoting a line the file lacks.
            Err(f)
                if f.diagnostics
                    .iter()
                    .all(|d| matches!(d.code, "E0309" | "E0310")) =>
            {
                let what: Vec<&str> = f.diagnostics.iter().map(|d| d.message.as_str()).collect();
                return usage_error(&format!("`{flag}`: {}", what.join("; ")));
            }
            Err(f) => {
                report_failure(&f, self.cli_format, self.file, &source);
                return ExitCode::from(1);
            }
        };
        let mut values = match read_args(self.entry, self.args, &params) {
            Ok(v) => v,
            Err(code) => return code,
        };
        let (mut rows, cols) = jacobian_shape(&params, &returns, &values);
        if self.hessian {
            rows = cols;
        }
        values.push(ArgValue::Array(ArrayValue::F64(vec![0.0; rows * cols])));
        let result = match jit.call(JACOBIAN_ENTRY, &mut values) {
            Ok(r) => r,
            Err(adc::CallError::Runtime(msg)) => {
                eprintln!("runtime error: {msg}");
                return ExitCode::from(3);
            }
            Err(e) => return usage_error(&e.to_string()),
        };
        let Some(ArgValue::Array(ArrayValue::F64(jac))) = values.pop() else {
            return usage_error(&format!("internal error: no {key}"));
        };
        let result_text = json::result_json(&result);
        let jac_text = jacobian_json(&jac, rows, cols);
        if self.json {
            let args: Vec<String> = values.iter().map(json::arg_json).collect();
            println!(
                "{{\"result\": {result_text}, \"args\": [{}], \"{key}\": {jac_text}}}",
                args.join(", ")
            );
        } else {
            println!("result: {result_text}");
            println!("{key}: {jac_text}");
        }
        ExitCode::SUCCESS
    }
}
