//! Python arguments to the words a compiled function takes (the C ABI of
//! docs/embedding.md): scalars by value, NumPy arrays by pointer and
//! length without copying them, `inout`/`out` scalars as one-element
//! arrays. The rules are docs/python.md's "Calling a function".

use adc::{ScalarType, Type};
use adc_ir::{Param, ParamMode};
use numpy::npyffi::flags::NPY_ARRAY_WRITEABLE;
use numpy::{PyArrayDescrMethods, PyUntypedArray, PyUntypedArrayMethods};
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyBool, PyFloat, PyString};

/// The memory one array argument covers, for the aliasing check.
struct Region {
    start: usize,
    end: usize,
    writable: bool,
    param: usize,
}

/// The words of one call, and what they point into.
pub struct Prepared<'py> {
    /// One word per scalar or reference, two (pointer, length) per array.
    pub slots: Vec<u64>,
    /// Arrays made by converting an argument (kept alive for the call).
    keep: Vec<Bound<'py, PyAny>>,
    regions: Vec<Region>,
}

impl<'py> Prepared<'py> {
    pub fn with_capacity(words: usize) -> Self {
        Prepared {
            slots: Vec::with_capacity(words),
            keep: Vec::new(),
            regions: Vec::new(),
        }
    }

    /// Appends a fresh array's pointer and length (a shadow the gradient
    /// allocated: it overlaps nothing).
    pub fn push_owned(&mut self, array: &Bound<'py, PyUntypedArray>, with_len: bool) {
        // SAFETY: a live NumPy array object; `data` is its buffer.
        let data = unsafe { (*array.as_array_ptr()).fields.data } as u64;
        self.slots.push(data);
        if with_len {
            self.slots.push(array.len() as u64);
        }
    }
}

/// `double`, `float[]`, `inout int`: a parameter's type as source writes it.
pub fn param_text(p: &Param) -> String {
    let mode = match p.mode {
        ParamMode::In => "",
        ParamMode::Inout => "inout ",
        ParamMode::Out => "out ",
    };
    let elem = source_name(p.ty.elem());
    match p.ty {
        Type::Array(_) => format!("{mode}{elem}[]"),
        _ => format!("{mode}{elem}"),
    }
}

/// The source name of a scalar type.
pub fn source_name(s: ScalarType) -> &'static str {
    match s {
        ScalarType::F64 => "double",
        ScalarType::F32 => "float",
        ScalarType::I64 => "int",
        ScalarType::Bool => "bool",
    }
}

/// The NumPy dtype name of an element type.
pub fn dtype_name(s: ScalarType) -> &'static str {
    match s {
        ScalarType::F64 => "float64",
        ScalarType::F32 => "float32",
        ScalarType::I64 => "int64",
        ScalarType::Bool => "bool",
    }
}

/// What a function's argument is called in error messages.
pub struct Site<'a> {
    pub function: &'a str,
    pub index: usize,
    pub param: &'a Param,
}

impl Site<'_> {
    fn what(&self) -> String {
        format!(
            "argument {} (`{} {}`) of `{}`",
            self.index + 1,
            param_text(self.param),
            self.param.name,
            self.function
        )
    }
}

fn type_name(obj: &Bound<'_, PyAny>) -> String {
    obj.get_type()
        .name()
        .map(|n| n.to_string())
        .unwrap_or_else(|_| "?".into())
}

/// The word of a scalar argument.
fn scalar_word(site: &Site, s: ScalarType, obj: &Bound<'_, PyAny>) -> PyResult<u64> {
    let wrong = |expected: &str| {
        PyTypeError::new_err(format!(
            "{}: expected {expected}, got {}",
            site.what(),
            type_name(obj)
        ))
    };
    let is_bool =
        obj.is_instance_of::<PyBool>() || matches!(type_name(obj).as_str(), "bool" | "bool_");
    match s {
        ScalarType::F64 | ScalarType::F32 => {
            if is_bool || obj.is_instance_of::<PyString>() {
                return Err(wrong("a float"));
            }
            let x: f64 = obj.extract().map_err(|_| wrong("a float"))?;
            Ok(if s == ScalarType::F64 {
                x.to_bits()
            } else {
                (x as f32).to_bits() as u64
            })
        }
        ScalarType::I64 => {
            if is_bool || obj.is_instance_of::<PyFloat>() {
                return Err(wrong("an int"));
            }
            match obj.extract::<i64>() {
                Ok(i) => Ok(i as u64),
                // Too large an int says so (OverflowError).
                Err(e) if e.is_instance_of::<pyo3::exceptions::PyOverflowError>(obj.py()) => Err(e),
                Err(_) => Err(wrong("an int")),
            }
        }
        ScalarType::Bool => {
            if !is_bool {
                return Err(wrong("a bool"));
            }
            Ok(obj.extract::<bool>().map_err(|_| wrong("a bool"))? as u64)
        }
    }
}

fn dtype_fits(arr: &Bound<'_, PyUntypedArray>, s: ScalarType) -> bool {
    let py = arr.py();
    let want = match s {
        ScalarType::F64 => numpy::dtype::<f64>(py),
        ScalarType::F32 => numpy::dtype::<f32>(py),
        ScalarType::I64 => numpy::dtype::<i64>(py),
        ScalarType::Bool => numpy::dtype::<bool>(py),
    };
    arr.dtype().is_equiv_to(&want)
}

/// One-dimensional, contiguous and aligned: an array the compiled code
/// can read through a pointer.
fn plain(arr: &Bound<'_, PyUntypedArray>) -> bool {
    arr.ndim() == 1 && arr.is_c_contiguous() && arr.is_aligned()
}

fn writable(arr: &Bound<'_, PyUntypedArray>) -> bool {
    // SAFETY: a live NumPy array object.
    unsafe { (*arr.as_array_ptr()).fields.flags & NPY_ARRAY_WRITEABLE != 0 }
}

static NUMPY: PyOnceLock<Py<PyModule>> = PyOnceLock::new();

fn numpy_module(py: Python<'_>) -> PyResult<&Bound<'_, PyModule>> {
    Ok(NUMPY
        .get_or_try_init(py, || py.import("numpy").map(Bound::unbind))?
        .bind(py))
}

/// An argument for a read-only array parameter that is not already a
/// plain array of its type, converted (a copy): any array-like whose
/// values NumPy casts safely to the element type (`int64` to `float64`,
/// not `float64` to `float32`), one-dimensional.
fn convert<'py>(
    site: &Site,
    s: ScalarType,
    obj: &Bound<'py, PyAny>,
) -> PyResult<Bound<'py, PyAny>> {
    let np = numpy_module(obj.py())?;
    let a = np.call_method1("asarray", (obj,)).map_err(|e| {
        PyTypeError::new_err(format!(
            "{}: expected a 1-D array of {}, got {} ({e})",
            site.what(),
            dtype_name(s),
            type_name(obj)
        ))
    })?;
    let size: usize = a.getattr("size")?.extract()?;
    let from = a.getattr("dtype")?;
    let safe: bool = np
        .call_method1("can_cast", (&from, dtype_name(s), "safe"))?
        .extract()?;
    if !safe && size > 0 {
        return Err(PyTypeError::new_err(format!(
            "{}: expected an array of {}, got one of {} (which does not convert safely)",
            site.what(),
            dtype_name(s),
            from.str()?
        )));
    }
    let ndim: usize = a.getattr("ndim")?.extract()?;
    if ndim != 1 {
        return Err(PyValueError::new_err(format!(
            "{}: expected a 1-D array, got {ndim} dimensions",
            site.what()
        )));
    }
    np.call_method1("ascontiguousarray", (a, dtype_name(s)))
}

impl<'py> Prepared<'py> {
    /// Appends the words of argument `obj` for parameter `site.param`.
    pub fn push(&mut self, site: &Site, obj: &Bound<'py, PyAny>) -> PyResult<()> {
        let p = site.param;
        match p.ty {
            Type::Scalar(s) => {
                let w = scalar_word(site, s, obj)?;
                self.slots.push(w);
                Ok(())
            }
            Type::Ref(s) => self.push_array(site, s, true, obj, false),
            Type::Array(s) => self.push_array(site, s, p.mode != ParamMode::In, obj, true),
            // Invariant: compiled signatures have no dual-number pairs.
            Type::Pair(_) => Err(PyTypeError::new_err("a dual-number parameter")),
        }
    }

    /// An array (`with_len`) or an `inout`/`out` scalar (a one-element
    /// array, passed by its pointer alone).
    fn push_array(
        &mut self,
        site: &Site,
        s: ScalarType,
        write: bool,
        obj: &Bound<'py, PyAny>,
        with_len: bool,
    ) -> PyResult<()> {
        let what = if with_len {
            "a 1-D array"
        } else {
            "a one-element array"
        };
        let arr = match obj.cast::<PyUntypedArray>() {
            Ok(arr) if dtype_fits(arr, s) && plain(arr) => arr.clone(),
            Ok(arr) if write => {
                return Err(if dtype_fits(arr, s) {
                    PyValueError::new_err(format!(
                        "{}: expected {what} of {} written in place; this one is {}",
                        site.what(),
                        dtype_name(s),
                        if arr.ndim() != 1 {
                            format!("{}-dimensional", arr.ndim())
                        } else {
                            "not contiguous".to_string()
                        }
                    ))
                } else {
                    PyTypeError::new_err(format!(
                        "{}: expected {what} of {} written in place, got an array of {}",
                        site.what(),
                        dtype_name(s),
                        arr.dtype()
                    ))
                });
            }
            _ if write => {
                return Err(PyTypeError::new_err(format!(
                    "{}: expected {what} of {} (a NumPy array, written in place), got {}",
                    site.what(),
                    dtype_name(s),
                    type_name(obj)
                )))
            }
            _ => {
                let a = convert(site, s, obj)?;
                self.keep.push(a);
                // Invariant: `convert` returns a NumPy array (ascontiguousarray).
                self.keep[self.keep.len() - 1]
                    .cast::<PyUntypedArray>()?
                    .clone()
            }
        };
        if write && !writable(&arr) {
            return Err(PyValueError::new_err(format!(
                "{}: the array is read-only, and this parameter is written in place",
                site.what()
            )));
        }
        let len = arr.len();
        if !with_len && len != 1 {
            return Err(PyValueError::new_err(format!(
                "{}: an `{}` scalar is passed as a one-element array; this one has {len} elements",
                site.what(),
                param_text(site.param)
            )));
        }
        // SAFETY: a live NumPy array object; `data` is its buffer.
        let data = unsafe { (*arr.as_array_ptr()).fields.data } as usize;
        if len > 0 {
            let bytes = len * arr.dtype().itemsize();
            self.regions.push(Region {
                start: data,
                end: data + bytes,
                writable: write,
                param: site.index,
            });
        }
        self.slots.push(data as u64);
        if with_len {
            self.slots.push(len as u64);
        }
        Ok(())
    }

    /// The aliasing rule of docs/arrays.md: no two array arguments overlap
    /// where one of them is written. Returns the two parameters' indices.
    pub fn aliasing(&self) -> Option<(usize, usize)> {
        for (i, a) in self.regions.iter().enumerate() {
            for b in &self.regions[i + 1..] {
                if (a.writable || b.writable) && a.start < b.end && b.start < a.end {
                    return Some((a.param, b.param));
                }
            }
        }
        None
    }
}
