"""adc from Python: compile `.ad` source in memory, call it on NumPy arrays,
and get its derivatives.

>>> import adc, numpy as np
>>> m = adc.compile("double dot(double[] a, double[] b) {"
...                 " double s = 0.0; for (int i = 0; i < len(a); i++) s += a[i] * b[i];"
...                 " return s; }")
>>> m.dot(np.array([1.0, 2.0]), np.array([3.0, 4.0]))
11.0
>>> value, (da, db) = m.grad("dot")(np.array([1.0, 2.0]), np.array([3.0, 4.0]))
>>> value, da.tolist(), db.tolist()
(11.0, [3.0, 4.0], [1.0, 2.0])

- `compile(source, path="<string>")`, `load(path)`: a `Module`; a compile error
  raises `CompileError` (its text is what `adc check` prints; `.diagnostics`).
- `module.NAME` / `module["NAME"]`: the `Function` NAME. Arrays are 1-D NumPy
  arrays of the parameter's element type, passed in place; `inout`/`out`
  arrays are written in place; an `inout`/`out` scalar is a one-element array.
- `module.grad(name)`: `(result, gradients)`, as `adc run --grad`.
- `module.derivative(of, mode, params, result)`: any derivative, without
  editing the source.
- A runtime error raises `adc.RuntimeError`; the module stays usable.
- Calls release the GIL; modules pickle (source and derivatives asked for).
- `adc.jax.function(module, "f", ...)`: the function in JAX, with adc's
  derivatives (import `adc.jax`).

The documentation is docs/python.md in the repository.
"""

import functools as _functools

from ._adc import (
    CompileError,
    Diagnostic,
    Function,
    Gradient,
    Module,
    RuntimeError,
    compile,
    load,
)

__all__ = [
    "CompileError",
    "Diagnostic",
    "Function",
    "Gradient",
    "Module",
    "RuntimeError",
    "compile",
    "load",
]


# Unpickling: one compile per process for each source and set of requests,
# however many pickled functions of it arrive (a Dask worker gets one per task).
@_functools.lru_cache(maxsize=64)
def _rebuild_module(source, path, requests=()):
    module = compile(source, path)
    for of, mode, params, result in requests:
        module.derivative(of, mode, None if params is None else list(params), result)
    return module


def _rebuild_function(source, path, name):
    return _rebuild_module(source, path)[name]


def _rebuild_derivative(source, path, request):
    of, mode, params, result = request
    return _rebuild_module(source, path).derivative(
        of, mode, None if params is None else list(params), result
    )


def _rebuild_gradient(source, path, of):
    return _rebuild_module(source, path).grad(of)
