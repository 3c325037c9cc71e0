//! `adc.CompileError` (with its `diagnostics`), `adc.RuntimeError` and
//! `adc.Diagnostic`.

use pyo3::prelude::*;
use pyo3::types::PyList;

pyo3::create_exception!(
    adc,
    CompileError,
    pyo3::exceptions::PyException,
    "The source does not compile. `str(e)` is what `adc check` prints; \
     `e.diagnostics` is a list of `adc.Diagnostic` (code, message, line, column)."
);

pyo3::create_exception!(
    adc,
    RuntimeError,
    pyo3::exceptions::PyRuntimeError,
    "A runtime error of compiled code (an index out of bounds, an integer \
     division by zero, arguments that alias, ...): the message and the \
     source location, as `adc run` prints them. The module stays usable."
);

/// One diagnostic of a compile error.
#[pyclass(module = "adc", frozen, get_all)]
pub struct Diagnostic {
    /// `"error"` or `"warning"`.
    pub severity: String,
    /// `E0116`, ... (`adc explain CODE` explains it).
    pub code: String,
    /// The message, without the source line.
    pub message: String,
    /// 1-based line, or `None` when the diagnostic has no location.
    pub line: Option<usize>,
    /// 1-based column in characters, or `None`.
    pub column: Option<usize>,
}

#[pymethods]
impl Diagnostic {
    fn __repr__(&self) -> String {
        let at = match (self.line, self.column) {
            (Some(l), Some(c)) => format!(" at {l}:{c}"),
            _ => String::new(),
        };
        format!(
            "<adc.Diagnostic {}[{}]{at}: {}>",
            self.severity, self.code, self.message
        )
    }
}

/// 1-based line and column (in characters) of byte `offset` of `source`.
fn line_col(source: &str, offset: usize) -> (usize, usize) {
    let mut offset = offset.min(source.len());
    while !source.is_char_boundary(offset) {
        offset -= 1;
    }
    let before = &source[..offset];
    let line = before.matches('\n').count() + 1;
    let start = before.rfind('\n').map_or(0, |i| i + 1);
    (line, source[start..offset].chars().count() + 1)
}

/// The `CompileError` of a failure to compile `source`.
pub fn compile_error(py: Python<'_>, failure: &adc::Failure, source: &str) -> PyErr {
    let err = CompileError::new_err(failure.rendered.trim_end().to_string());
    let diags: Vec<Diagnostic> = failure
        .diagnostics
        .iter()
        .map(|d| {
            let (line, column) = if d.span.is_defined() {
                let (l, c) = line_col(source, d.span.start as usize);
                (Some(l), Some(c))
            } else {
                (None, None)
            };
            Diagnostic {
                severity: if d.is_error() { "error" } else { "warning" }.into(),
                code: d.code.to_string(),
                message: d.message.clone(),
                line,
                column,
            }
        })
        .collect();
    let set = PyList::new(py, diags).and_then(|list| err.value(py).setattr("diagnostics", list));
    match set {
        Ok(()) => err,
        Err(e) => e,
    }
}
