"""Type stubs of the package `adc` (docs/python.md)."""

import builtins
import os
from typing import Any, Callable, List, Optional, Sequence, Tuple, Union

import numpy as np
import numpy.typing as npt

Scalar = Union[float, int, bool]
Result = Union[None, float, int, bool, Tuple[Union[float, int, bool], ...]]

class CompileError(Exception):
    """The source does not compile. `str(e)` is what `adc check` prints."""

    diagnostics: List["Diagnostic"]

class RuntimeError(builtins.RuntimeError):
    """A runtime error of compiled code, with its message and source location.
    The module stays usable."""

class Diagnostic:
    """One diagnostic of a `CompileError`."""

    severity: str
    """`"error"` or `"warning"`."""
    code: str
    """`E0116`, ... (`adc explain CODE` explains it)."""
    message: str
    line: Optional[int]
    """1-based line, or `None` when the diagnostic has no location."""
    column: Optional[int]
    """1-based column in characters, or `None`."""

class Function:
    """A compiled function. Arguments: `float`/`int`/`bool` for scalars; a 1-D
    NumPy array of the element type (`float64`, `float32`, `int64`, `bool`) for
    an array, passed in place (other array-likes are converted for read-only
    parameters); a one-element array for an `inout`/`out` scalar."""

    __name__: str
    signature: str
    """The signature in `.ad` syntax: `double f(double[] xs, int n)`."""
    params: List[Tuple[str, str]]
    """`(name, type)` per parameter, the type as source writes it."""
    def __call__(self, *args: Any) -> Result: ...

class Gradient:
    """`module.grad(name)`: returns `(result, gradients)`, one gradient per
    parameter (a float, a new array, or `None`), as `adc run --grad`."""

    __name__: str
    def __call__(self, *args: Any) -> Tuple[float, Tuple[Any, ...]]: ...

class Module:
    """Compiled `.ad` source: `module.NAME` or `module["NAME"]` is a `Function`."""

    functions: List[str]
    """The names of the module's functions."""
    source: str
    path: str
    requests: List[Tuple[str, str, Optional[Tuple[str, ...]], str]]
    """The derivatives asked for: `(of, mode, params, result)`."""
    def __getattr__(self, name: str) -> Function: ...
    def __getitem__(self, name: str) -> Function: ...
    def __contains__(self, name: str) -> bool: ...
    def grad(self, name: str) -> Gradient:
        """The gradient of `name`, a function with a float result."""
    def derivative(
        self,
        of: str,
        mode: str = "reverse",
        params: Optional[Sequence[str]] = None,
        result: Optional[str] = None,
    ) -> Function:
        """The derivative of `of` (`mode` "reverse", "forward", "jacobian" or "hessian"), with one
        activity name per parameter (default activities if `None`) and the
        result's activity, as the attribute `[autodiff_reverse(...)]` would
        generate it."""
    def jacobian(self, name: str) -> Callable[..., Tuple[Any, npt.NDArray[np.float64]]]:
        """The Jacobian of `name`: a callable returning `(result, J)`, J of
        shape (float outputs, float inputs)."""
    def hessian(self, name: str) -> Callable[..., Tuple[Any, npt.NDArray[np.float64]]]:
        """The Hessian of `name`, a function with a float result: a callable
        returning `(result, H)`, H of shape (float inputs, float inputs)."""

def compile(source: str, path: str = "<string>") -> Module:
    """Compiles `.ad` source in memory; `path` names it in messages."""

def load(path: Union[str, "os.PathLike[str]"]) -> Module:
    """Reads and compiles the `.ad` file at `path`."""
