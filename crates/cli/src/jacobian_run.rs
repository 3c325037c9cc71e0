//! `adc run --jacobian` (docs/cli.md): the source with `[jacobian]` put on
//! the entry, the generated function called on the arguments and a `jac`
//! of the Jacobian's size, and its rows printed.

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
        let source =
            match adc_frontend::jacobian::with_request(self.source, self.entry, JACOBIAN_ENTRY) {
                Ok(s) => s,
                Err(m) => return usage_error(&format!("`--jacobian`: {m}")),
            };
        let jit = match driver::compile_jit(self.file, &source, self.options) {
            Ok(j) => j,
            Err(f) => {
                report_failure(&f, self.cli_format, self.file, &source);
                return ExitCode::from(1);
            }
        };
        let mut values = match read_args(self.entry, self.args, &params) {
            Ok(v) => v,
            Err(code) => return code,
        };
        let (rows, cols) = jacobian_shape(&params, &returns, &values);
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
            return usage_error("internal error: no Jacobian");
        };
        let result_text = json::result_json(&result);
        let jac_text = jacobian_json(&jac, cols);
        if self.json {
            let args: Vec<String> = values.iter().map(json::arg_json).collect();
            println!(
                "{{\"result\": {result_text}, \"args\": [{}], \"jacobian\": {jac_text}}}",
                args.join(", ")
            );
        } else {
            println!("result: {result_text}");
            println!("jacobian: {jac_text}");
        }
        ExitCode::SUCCESS
    }
}
