//! `adc._adc`, the extension module of the Python package `adc`
//! (python/adc): the compiler of crate `adc` and its JIT, called from
//! Python. docs/python.md is its documentation; python/adc/__init__.py
//! re-exports what is public.

mod args;
mod errors;
mod function;
mod module;

use pyo3::prelude::*;

/// Compiles `.ad` source to machine code in memory and returns its
/// `adc.Module`. `path` names the source in diagnostics and runtime
/// errors. A compile error raises `adc.CompileError`.
#[pyfunction]
#[pyo3(signature = (source, path = "<string>"))]
fn compile(py: Python<'_>, source: &str, path: &str) -> PyResult<module::Module> {
    module::Module::compile(py, source, path)
}

/// Reads and compiles the `.ad` file at `path` (a `str` or `os.PathLike`).
#[pyfunction]
fn load(py: Python<'_>, path: std::path::PathBuf) -> PyResult<module::Module> {
    let source = std::fs::read_to_string(&path)?;
    module::Module::compile(py, &source, &path.to_string_lossy())
}

#[pymodule]
fn _adc(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    m.add_function(wrap_pyfunction!(compile, m)?)?;
    m.add_function(wrap_pyfunction!(load, m)?)?;
    m.add_class::<module::Module>()?;
    m.add_class::<function::Function>()?;
    m.add_class::<function::Gradient>()?;
    m.add_class::<errors::Diagnostic>()?;
    m.add("CompileError", py.get_type::<errors::CompileError>())?;
    m.add("RuntimeError", py.get_type::<errors::RuntimeError>())?;
    Ok(())
}
