//! `adc.Module`: compiled source, its functions by name, the derivatives
//! asked for, and how it pickles.

use crate::errors::compile_error;
use crate::function::{Function, Gradient, Kind, Origin, Request};
use adc::{Activity, Derivative, JitModule};
use pyo3::exceptions::{PyAttributeError, PyKeyError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyTuple;
use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

/// Compiled `.ad` source. `module.NAME` or `module["NAME"]` is the
/// `adc.Function` `NAME` (generated derivatives and `static` functions
/// included); `module.grad("f")` the gradient of `f`. A module may be
/// called from several threads at once, and pickles by its source and the
/// derivatives asked for.
#[pyclass(module = "adc", frozen)]
pub struct Module {
    origin: Arc<Origin>,
    functions: BTreeMap<String, Py<Function>>,
    /// Derivatives asked for, in order, with their functions.
    derived: Mutex<Vec<(Request, Py<Function>)>>,
    grads: Mutex<BTreeMap<String, Py<Gradient>>>,
}

/// Compiles `source` with `derivatives` (`path` names it in messages), the
/// GIL released.
fn compile_jit(
    py: Python<'_>,
    source: &str,
    path: &str,
    derivatives: &[Derivative],
) -> PyResult<JitModule> {
    py.detach(|| adc::compile_jit_with(path, source, derivatives))
        .map_err(|f| match f.diagnostics.first() {
            // A request that does not fit the function (E0303) is the
            // caller's mistake, not the source's.
            Some(d) if d.code == "E0303" => PyValueError::new_err(d.message.clone()),
            _ => compile_error(py, &f, source),
        })
}

impl Module {
    pub fn compile(py: Python<'_>, source: &str, path: &str) -> PyResult<Module> {
        let jit = Arc::new(compile_jit(py, source, path, &[])?);
        let origin = Arc::new(Origin {
            source: source.to_string(),
            path: path.to_string(),
        });
        let mut functions = BTreeMap::new();
        for f in jit.functions() {
            if f.name.starts_with("__adc") {
                continue;
            }
            // Invariant: `f` is a function of `jit`.
            let func = Function::new(jit.clone(), &f.name, origin.clone(), Kind::Primal)
                .expect("a function of the module");
            functions.insert(f.name.clone(), Py::new(py, func)?);
        }
        Ok(Module {
            origin,
            functions,
            derived: Mutex::new(Vec::new()),
            grads: Mutex::new(BTreeMap::new()),
        })
    }

    fn missing(&self, name: &str) -> String {
        let mut msg = format!("`{}` defines no function `{name}`", self.origin.path);
        let close = self
            .functions
            .keys()
            .filter(|n| similar(n, name))
            .map(|n| format!("`{n}`"))
            .collect::<Vec<_>>();
        if !close.is_empty() {
            msg.push_str(&format!("; did you mean {}?", close.join(" or ")));
        }
        msg
    }

    fn primal(&self, name: &str) -> PyResult<&Py<Function>> {
        self.functions
            .get(name)
            .ok_or_else(|| PyValueError::new_err(self.missing(name)))
    }

    /// A name for a generated function that no function of the source has.
    fn fresh_name(&self, of: &str, mode: &str) -> String {
        let mut name = format!("{of}_{mode}_adcpy");
        while self.functions.contains_key(&name) {
            name.push('_');
        }
        name
    }
}

/// Close enough to suggest: one edit apart, or one a prefix of the other.
fn similar(a: &str, b: &str) -> bool {
    let (a, b): (Vec<char>, Vec<char>) = (a.chars().collect(), b.chars().collect());
    if a.len().abs_diff(b.len()) > 1 {
        return false;
    }
    let (mut i, mut j, mut edits) = (0, 0, 0);
    while i < a.len() && j < b.len() {
        if a[i] == b[j] {
            i += 1;
            j += 1;
            continue;
        }
        edits += 1;
        match a.len().cmp(&b.len()) {
            std::cmp::Ordering::Less => j += 1,
            std::cmp::Ordering::Greater => i += 1,
            std::cmp::Ordering::Equal => {
                i += 1;
                j += 1;
            }
        }
    }
    edits + (a.len() - i) + (b.len() - j) <= 1
}

fn activity(name: &str) -> PyResult<Activity> {
    Activity::from_name(name).ok_or_else(|| {
        PyValueError::new_err(format!(
            "no activity `{name}` (the activities are Const, Active, ActiveOnly, Duplicated, \
             DuplicatedOnly, Dual, DualOnly)"
        ))
    })
}

#[pymethods]
impl Module {
    fn __getattr__(&self, py: Python<'_>, name: &str) -> PyResult<Py<Function>> {
        match self.functions.get(name) {
            Some(f) => Ok(f.clone_ref(py)),
            None => Err(PyAttributeError::new_err(self.missing(name))),
        }
    }

    fn __getitem__(&self, py: Python<'_>, name: &str) -> PyResult<Py<Function>> {
        match self.functions.get(name) {
            Some(f) => Ok(f.clone_ref(py)),
            None => Err(PyKeyError::new_err(self.missing(name))),
        }
    }

    fn __contains__(&self, name: &str) -> bool {
        self.functions.contains_key(name)
    }

    fn __dir__(slf: &Bound<'_, Self>) -> PyResult<Vec<String>> {
        let mut names: Vec<String> = slf.get_type().dir()?.extract()?;
        names.extend(slf.get().functions.keys().cloned());
        Ok(names)
    }

    /// The names of the module's functions, generated derivatives and
    /// `static` functions included.
    #[getter]
    fn functions(&self) -> Vec<String> {
        self.functions.keys().cloned().collect()
    }

    /// The source the module was compiled from.
    #[getter]
    fn source(&self) -> &str {
        &self.origin.source
    }

    /// The path that names the source in diagnostics and runtime errors.
    #[getter]
    fn path(&self) -> &str {
        &self.origin.path
    }

    /// The derivatives asked for with `derivative` (and `grad`), as
    /// `(of, mode, params, result)` tuples: what a pickle asks for again.
    #[getter]
    fn requests<'py>(&self, py: Python<'py>) -> PyResult<Vec<Bound<'py, PyTuple>>> {
        let derived = self.derived.lock().map_err(|_| poisoned())?;
        derived.iter().map(|(r, _)| r.to_tuple(py)).collect()
    }

    /// The derivative of `of` in `mode` (`"reverse"` or `"forward"`, or
    /// `"jacobian"` for `[jacobian]`'s function, without activities),
    /// generated without editing the source, as the attribute
    /// `[autodiff_reverse(NAME, params..., result)]` would: `params` one
    /// activity name per parameter (default: docs/derivatives.md's default
    /// activities), `result` the result's (default: `Active` in reverse
    /// mode and `Dual` in forward mode for a float result, else `Const`).
    /// Returns the generated `adc.Function`.
    #[pyo3(signature = (of, mode = "reverse", params = None, result = None))]
    fn derivative(
        &self,
        py: Python<'_>,
        of: &str,
        mode: &str,
        params: Option<Vec<String>>,
        result: Option<String>,
    ) -> PyResult<Py<Function>> {
        let primal = self.primal(of)?.get();
        let float_ret = matches!(primal.returns.as_slice(), [t] if t.is_float());
        let any_float = primal.returns.iter().any(|t| t.is_float());
        let result = match (result, mode) {
            (Some(r), _) => r,
            (None, "reverse") if float_ret => "Active".into(),
            (None, "forward") if any_float => "Dual".into(),
            (None, _) => "Const".into(),
        };
        let request = Request {
            of: of.into(),
            mode: mode.into(),
            params,
            result,
        };
        {
            let derived = self.derived.lock().map_err(|_| poisoned())?;
            if let Some((_, f)) = derived.iter().find(|(r, _)| *r == request) {
                return Ok(f.clone_ref(py));
            }
        }
        let name = self.fresh_name(of, mode);
        let ret = activity(&request.result)?;
        let acts = match &request.params {
            Some(ps) => Some(
                ps.iter()
                    .map(|a| activity(a))
                    .collect::<PyResult<Vec<_>>>()?,
            ),
            None => None,
        };
        let d = match (mode, acts) {
            ("reverse", Some(a)) => Derivative::reverse(of, &name, a, ret),
            ("forward", Some(a)) => Derivative::forward(of, &name, a, ret),
            ("reverse", None) => Derivative {
                ret,
                ..Derivative::gradient(of, &name)
            },
            ("forward", None) => Derivative {
                params: None,
                ..Derivative::forward(of, &name, Vec::new(), ret)
            },
            ("jacobian", None) => Derivative::jacobian(of, &name),
            ("hessian", None) => Derivative::hessian(of, &name),
            _ => {
                return Err(PyValueError::new_err(format!(
                    "mode is \"reverse\", \"forward\", \"jacobian\" or \"hessian\" (without activities), not {mode:?}"
                )))
            }
        };
        let jit = Arc::new(compile_jit(
            py,
            &self.origin.source,
            &self.origin.path,
            &[d],
        )?);
        let func = Function::new(
            jit,
            &name,
            self.origin.clone(),
            Kind::Derived(request.clone()),
        )
        .ok_or_else(|| PyValueError::new_err(format!("`{name}` was not generated")))?;
        let func = Py::new(py, func)?;
        let mut derived = self.derived.lock().map_err(|_| poisoned())?;
        // Another thread may have asked for the same derivative meanwhile.
        if let Some((_, f)) = derived.iter().find(|(r, _)| *r == request) {
            return Ok(f.clone_ref(py));
        }
        derived.push((request, func.clone_ref(py)));
        Ok(func)
    }

    /// The gradient of `name` (a function with a `float` or `double`
    /// result): a callable taking `name`'s arguments and returning
    /// `(result, gradients)`, one gradient per parameter as
    /// `adc run --grad` gives them (a float, an array, or `None` for a
    /// parameter without a derivative).
    fn grad(&self, py: Python<'_>, name: &str) -> PyResult<Py<Gradient>> {
        if let Some(g) = self.grads.lock().map_err(|_| poisoned())?.get(name) {
            return Ok(g.clone_ref(py));
        }
        let primal = self.primal(name)?.get();
        let ret = match primal.returns.as_slice() {
            [t] if t.is_float() => *t,
            _ => {
                return Err(PyValueError::new_err(format!(
                    "`grad` needs a function that returns `float` or `double`; `{}` does not",
                    primal.symbol
                )))
            }
        };
        let deriv = self.derivative(py, name, "reverse", None, Some("Active".into()))?;
        let g = Py::new(
            py,
            Gradient {
                of: name.to_string(),
                params: primal.params.clone(),
                ret,
                deriv,
            },
        )?;
        let mut grads = self.grads.lock().map_err(|_| poisoned())?;
        Ok(grads.entry(name.to_string()).or_insert(g).clone_ref(py))
    }

    /// The Jacobian of `name` (docs/jacobians.md#jacobians): a callable
    /// taking `name`'s arguments and returning `(result, J)`, `J` a 2-D
    /// array with a row per float output (the result, then `out`/`inout`
    /// floats) and a column per float input.
    fn jacobian(slf: &Bound<'_, Self>, name: &str) -> PyResult<Py<PyAny>> {
        let py = slf.py();
        slf.get().primal(name)?;
        Ok(py
            .import("adc")?
            .getattr("_Jacobian")?
            .call1((slf, name))?
            .unbind())
    }

    /// The Hessian of `name` (a function with a `float` or `double`
    /// result, docs/jacobians.md#hessians): a callable taking `name`'s
    /// arguments and returning `(result, H)`, `H` a 2-D array with a row
    /// and a column per float input.
    fn hessian(slf: &Bound<'_, Self>, name: &str) -> PyResult<Py<PyAny>> {
        let py = slf.py();
        let primal = slf.get().primal(name)?.get();
        if !matches!(primal.returns.as_slice(), [t] if t.is_float()) {
            return Err(PyValueError::new_err(format!(
                "`hessian` needs a function that returns `float` or `double`; `{}` does not",
                primal.symbol
            )));
        }
        Ok(py
            .import("adc")?
            .getattr("_Hessian")?
            .call1((slf, name))?
            .unbind())
    }

    fn __repr__(&self) -> String {
        let names: Vec<&str> = self.functions.keys().map(|s| s.as_str()).collect();
        format!("<adc.Module {:?}: {}>", self.origin.path, names.join(", "))
    }

    fn __reduce__<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
        let rebuild = py.import("adc")?.getattr("_rebuild_module")?;
        let requests = PyTuple::new(py, self.requests(py)?)?;
        (
            rebuild,
            (
                self.origin.source.as_str(),
                self.origin.path.as_str(),
                requests,
            ),
        )
            .into_pyobject(py)
    }
}

fn poisoned() -> PyErr {
    PyValueError::new_err("a thread panicked while holding the module's lock")
}
