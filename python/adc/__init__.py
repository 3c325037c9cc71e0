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


class _Jacobian:
    """`module.jacobian(name)`: called with `name`'s arguments, returns
    `(result, J)`, J of shape (float outputs, float inputs)."""

    def __init__(self, module, name):
        self.function = module[name]
        self.derivative = module.derivative(name, "jacobian")
        ret = self.function.signature.split(" ", 1)[0]
        self.float_result = ret in ("double", "float")
        self.__name__ = f"jacobian({name})"

    def __call__(self, *args):
        import numpy as np

        if len(args) != len(self.function.params):
            return self.function(*args)  # the TypeError of a wrong count
        rows, cols = int(self.float_result), 0
        for (_, text), a in zip(self.function.params, args):
            words = text.split()
            mode = words[0] if words[0] in ("inout", "out") else "in"
            if not words[-1].startswith(("double", "float")):
                continue
            n = len(a) if words[-1].endswith("[]") else 1
            cols += n if mode != "out" else 0
            rows += n if mode != "in" else 0
        jac = np.zeros(rows * cols)
        result = self.derivative(*args, jac)
        return result, jac.reshape(rows, cols)


class _Hessian:
    """`module.hessian(name)`: called with `name`'s arguments, returns
    `(result, H)`, H of shape (float inputs, float inputs)."""

    def __init__(self, module, name):
        self.function = module[name]
        self.derivative = module.derivative(name, "hessian")
        self.__name__ = f"hessian({name})"

    def __call__(self, *args):
        import numpy as np

        if len(args) != len(self.function.params):
            return self.function(*args)  # the TypeError of a wrong count
        cols = 0
        for (_, text), a in zip(self.function.params, args):
            words = text.split()
            if words[0] == "out" or not words[-1].startswith(("double", "float")):
                continue
            cols += len(a) if words[-1].endswith("[]") else 1
        hess = np.zeros(cols * cols)
        result = self.derivative(*args, hess)
        return result, hess.reshape(cols, cols)


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
