//! `adc.Function`: one compiled function, called with Python values, and
//! `adc.Gradient`: `module.grad(name)`, the reverse derivative called as
//! `adc run --grad` calls it.

use crate::args::{param_text, source_name, Prepared, Site};
use crate::errors::RuntimeError;
use adc::{CallError, JitModule, ScalarType, Type};
use adc_ir::Param;
use numpy::{PyArray1, PyUntypedArray};
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyFloat, PyInt, PyTuple};
use std::sync::Arc;

/// The source a module was compiled from: what a pickle carries.
pub struct Origin {
    pub source: String,
    pub path: String,
}

/// A derivative asked for by `Module.derivative`, as given (activity
/// names), so that a pickle can ask for it again.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Request {
    pub of: String,
    pub mode: String,
    pub params: Option<Vec<String>>,
    pub result: String,
}

impl Request {
    pub fn to_tuple<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
        let params = self
            .params
            .as_ref()
            .map(|p| PyTuple::new(py, p))
            .transpose()?;
        (
            self.of.as_str(),
            self.mode.as_str(),
            params,
            self.result.as_str(),
        )
            .into_pyobject(py)
    }
}

/// Where a function comes from: the source's own, or a derivative.
pub enum Kind {
    Primal,
    Derived(Request),
}

/// A compiled function of a `Module`. Call it with one argument per
/// parameter: `float`/`int`/`bool` for scalars, a 1-D NumPy array of the
/// element type for an array (passed in place; other array-likes are
/// converted for read-only parameters), a one-element array for an
/// `inout`/`out` scalar. Returns a Python scalar, a tuple for a tuple
/// result, `None` for `void`. Runtime errors raise `adc.RuntimeError`.
#[pyclass(module = "adc", frozen)]
pub struct Function {
    pub jit: Arc<JitModule>,
    /// The name in the compiled module.
    pub symbol: String,
    pub params: Vec<Param>,
    pub returns: Vec<ScalarType>,
    pub origin: Arc<Origin>,
    pub kind: Kind,
}

/// The words of `returns` as a Python value.
fn result_object(py: Python<'_>, returns: &[ScalarType], words: &[u64]) -> PyResult<Py<PyAny>> {
    let one = |t: ScalarType, w: u64| -> PyResult<Py<PyAny>> {
        Ok(match t {
            ScalarType::F64 => PyFloat::new(py, f64::from_bits(w)).into_any().unbind(),
            ScalarType::F32 => PyFloat::new(py, f32::from_bits(w as u32) as f64)
                .into_any()
                .unbind(),
            ScalarType::I64 => PyInt::new(py, w as i64).into_any().unbind(),
            ScalarType::Bool => PyBool::new(py, w & 0xff != 0)
                .to_owned()
                .into_any()
                .unbind(),
        })
    };
    match returns {
        [] => Ok(py.None()),
        [t] => one(*t, words[0]),
        many => {
            let items: Vec<Py<PyAny>> = many
                .iter()
                .zip(words)
                .map(|(t, w)| one(*t, *w))
                .collect::<PyResult<_>>()?;
            Ok(PyTuple::new(py, items)?.into_any().unbind())
        }
    }
}

/// Calls `symbol` of `jit` with `slots`, the GIL released; the result
/// words (at least one).
pub fn invoke(
    py: Python<'_>,
    jit: &JitModule,
    symbol: &str,
    slots: &[u64],
    nrets: usize,
) -> PyResult<Vec<u64>> {
    let mut rets = vec![0u64; nrets.max(1)];
    // SAFETY: `Prepared` laid the words out for the function's parameters
    // from live, plain NumPy arrays of each parameter's element type
    // (writable where the parameter is written, and checked not to
    // overlap), held by the caller for the call.
    let r = py.detach(|| unsafe { jit.call_words(symbol, slots, &mut rets) });
    match r {
        Ok(()) => Ok(rets),
        Err(CallError::Runtime(m)) => Err(RuntimeError::new_err(m)),
        Err(e) => Err(PyTypeError::new_err(e.to_string())),
    }
}

/// Checks the number of arguments and the aliasing rule around `push`.
pub fn prepare<'py>(
    name: &str,
    params: &[Param],
    args: &Bound<'py, PyTuple>,
    mut after_each: impl FnMut(&mut Prepared<'py>, &Param) -> PyResult<()>,
) -> PyResult<Prepared<'py>> {
    if args.len() != params.len() {
        return Err(PyTypeError::new_err(format!(
            "`{}` takes {} argument{}, got {}",
            signature(name, params, None),
            params.len(),
            if params.len() == 1 { "" } else { "s" },
            args.len()
        )));
    }
    let mut prep = Prepared::with_capacity(2 * params.len() + 1);
    for (index, (param, obj)) in params.iter().zip(args.iter()).enumerate() {
        let site = Site {
            function: name,
            index,
            param,
        };
        prep.push(&site, &obj)?;
        after_each(&mut prep, param)?;
    }
    if let Some((a, b)) = prep.aliasing() {
        return Err(RuntimeError::new_err(format!(
            "arguments alias: `{}` and `{}` of `{name}` share memory, and one of them is written",
            params[a].name, params[b].name
        )));
    }
    Ok(prep)
}

/// `double f(double[] xs, inout int n)`.
pub fn signature(name: &str, params: &[Param], returns: Option<&[ScalarType]>) -> String {
    let ps: Vec<String> = params
        .iter()
        .map(|p| format!("{} {}", param_text(p), p.name))
        .collect();
    let ret = match returns {
        None => String::new(),
        Some([]) => "void ".into(),
        Some([t]) => format!("{} ", source_name(*t)),
        Some(many) => {
            let names: Vec<&str> = many.iter().map(|t| source_name(*t)).collect();
            format!("({}) ", names.join(", "))
        }
    };
    format!("{ret}{name}({})", ps.join(", "))
}

impl Function {
    pub fn new(
        jit: Arc<JitModule>,
        symbol: &str,
        origin: Arc<Origin>,
        kind: Kind,
    ) -> Option<Function> {
        let f = jit.function(symbol)?;
        let params = f.params.clone();
        let returns = f.returns.iter().map(|t| t.elem()).collect();
        Some(Function {
            symbol: symbol.to_string(),
            params,
            returns,
            jit,
            origin,
            kind,
        })
    }
}

#[pymethods]
impl Function {
    #[pyo3(signature = (*args))]
    fn __call__(&self, py: Python<'_>, args: &Bound<'_, PyTuple>) -> PyResult<Py<PyAny>> {
        let prep = prepare(&self.symbol, &self.params, args, |_, _| Ok(()))?;
        let words = invoke(py, &self.jit, &self.symbol, &prep.slots, self.returns.len())?;
        result_object(py, &self.returns, &words)
    }

    /// The function's name in the compiled module.
    #[getter]
    fn __name__(&self) -> &str {
        &self.symbol
    }

    /// The signature in `.ad` syntax: `double f(double[] xs, int n)`.
    #[getter]
    fn signature(&self) -> String {
        signature(&self.symbol, &self.params, Some(&self.returns))
    }

    /// The parameters: `(name, type)` pairs, the type as source writes it
    /// (`double`, `inout float[]`).
    #[getter]
    fn params(&self) -> Vec<(String, String)> {
        self.params
            .iter()
            .map(|p| (p.name.clone(), param_text(p)))
            .collect()
    }

    fn __repr__(&self) -> String {
        format!("<adc.Function {}>", self.signature())
    }

    fn __reduce__<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
        let adc = py.import("adc")?;
        let (src, path) = (self.origin.source.as_str(), self.origin.path.as_str());
        match &self.kind {
            Kind::Primal => (
                adc.getattr("_rebuild_function")?,
                (src, path, self.symbol.as_str()),
            )
                .into_pyobject(py),
            Kind::Derived(r) => (
                adc.getattr("_rebuild_derivative")?,
                (src, path, r.to_tuple(py)?),
            )
                .into_pyobject(py),
        }
    }
}

/// `module.grad(name)`: called with `name`'s arguments, returns
/// `(result, gradients)`, one gradient per parameter as `adc run --grad`
/// gives them: a float for a `float`/`double` scalar, a new array for an
/// array or `inout`/`out` scalar of floats, `None` for the others.
/// Writable arguments are written as a call of `name` writes them.
#[pyclass(module = "adc", frozen)]
pub struct Gradient {
    /// The function differentiated (its parameters, its name).
    pub of: String,
    pub params: Vec<Param>,
    pub ret: ScalarType,
    /// Its reverse derivative with default activities and seed 1.
    pub deriv: Py<Function>,
}

#[pymethods]
impl Gradient {
    #[pyo3(signature = (*args))]
    fn __call__(&self, py: Python<'_>, args: &Bound<'_, PyTuple>) -> PyResult<Py<PyAny>> {
        let deriv = self.deriv.get();
        let mut shadows: Vec<Option<Bound<'_, PyUntypedArray>>> = Vec::new();
        let mut prep = prepare(&self.of, &self.params, args, |prep, p| {
            let shadow = match p.ty {
                Type::Array(s) | Type::Ref(s) if s.is_float() => {
                    let len = match p.ty {
                        // The length word the array argument just pushed.
                        Type::Array(_) => prep.slots[prep.slots.len() - 1] as usize,
                        _ => 1,
                    };
                    let z = if s == ScalarType::F64 {
                        PyArray1::<f64>::zeros(py, len, false).into_any()
                    } else {
                        PyArray1::<f32>::zeros(py, len, false).into_any()
                    };
                    // Invariant: `zeros` makes a NumPy array.
                    let z = z.cast_into::<PyUntypedArray>()?;
                    prep.push_owned(&z, matches!(p.ty, Type::Array(_)));
                    Some(z)
                }
                _ => None,
            };
            shadows.push(shadow);
            Ok(())
        })?;
        prep.slots.push(match self.ret {
            ScalarType::F32 => 1.0f32.to_bits() as u64,
            _ => 1.0f64.to_bits(),
        });
        let words = invoke(
            py,
            &deriv.jit,
            &deriv.symbol,
            &prep.slots,
            deriv.returns.len(),
        )?;
        let result = result_object(py, &[self.ret], &words)?;
        let mut next = words[1..].iter().zip(&deriv.returns[1..]);
        let mut grads: Vec<Py<PyAny>> = Vec::new();
        for (p, shadow) in self.params.iter().zip(shadows) {
            let g = match (p.ty, shadow) {
                (_, Some(a)) => a.into_any().unbind(),
                (Type::Scalar(s), None) if s.is_float() => match next.next() {
                    Some((w, t)) => result_object(py, &[*t], &[*w])?,
                    None => return Err(PyValueError::new_err("a gradient is missing")),
                },
                _ => py.None(),
            };
            grads.push(g);
        }
        Ok((result, PyTuple::new(py, grads)?)
            .into_pyobject(py)?
            .into_any()
            .unbind())
    }

    /// The name of the function differentiated.
    #[getter]
    fn __name__(&self) -> String {
        format!("grad({})", self.of)
    }

    fn __repr__(&self) -> String {
        format!(
            "<adc.Gradient of {}>",
            signature(&self.of, &self.params, Some(&[self.ret]))
        )
    }

    fn __reduce__<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
        let adc = py.import("adc")?;
        let deriv = self.deriv.get();
        (
            adc.getattr("_rebuild_gradient")?,
            (
                deriv.origin.source.as_str(),
                deriv.origin.path.as_str(),
                self.of.as_str(),
            ),
        )
            .into_pyobject(py)
    }
}
