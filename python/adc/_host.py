"""The host side of adc's functions in JAX and PyTorch (`adc.jax`,
`adc.torch`): what a function's parameters are, the shapes of its
outputs, and calls of the compiled function, its forward derivative and
its reverse derivative on NumPy arrays with leading batch dimensions (one
call per batch element).

Inputs are the parameters that are not `out`, in order; outputs the float
result (if any) and then the `out` parameters. `inout` parameters are
inputs: the function runs on a copy, and their final values are dropped.
"""

from __future__ import annotations

import itertools
from typing import Callable, Dict, Tuple, Union

import numpy as np

_DTYPES = {
    "double": np.float64,
    "float": np.float32,
    "int": np.int64,
    "bool": np.bool_,
}

Length = Union[int, Callable[..., int]]


class _Param:
    """One parameter of the adc function, as the JAX wrapper sees it."""

    def __init__(self, name: str, text: str):
        words = text.split()
        self.name = name
        self.mode = words[0] if words[0] in ("inout", "out") else "in"
        base = words[-1]
        self.array = base.endswith("[]")
        self.elem = base[:-2] if self.array else base
        self.dtype = np.dtype(_DTYPES[self.elem])
        self.float = self.elem in ("double", "float")
        # A scalar passed by reference (an `inout`/`out` scalar).
        self.ref = self.mode != "in" and not self.array

    @property
    def rank(self) -> int:
        return 1 if self.array else 0


class Spec:
    """What the primitives need to know: the adc functions and shapes.
    Hashable by identity (it is a primitive parameter)."""

    def __init__(self, module, name: str, out_lengths, who: str):
        self.who = who
        self.module = module
        self.name = name
        self.primal = module[name]
        self.params = [_Param(n, t) for n, t in self.primal.params]
        sig = self.primal.signature
        ret = sig[: sig.index(name + "(")].strip()
        if ret not in ("void", "double", "float"):
            raise ValueError(
                f"{self.who}: `{name}` returns `{ret}`; a JAX or PyTorch function of it "
                "needs a `double` or `float` result, or `void` with `out` parameters"
            )
        self.ret = None if ret == "void" else np.dtype(_DTYPES[ret])
        self.inputs = [p for p in self.params if p.mode != "out"]
        self.outs = [p for p in self.params if p.mode == "out"]
        if self.ret is None and not self.outs:
            raise ValueError(f"{self.who}: `{name}` has no output")
        for p in self.outs:
            if not p.float:
                raise ValueError(
                    f"{self.who}: `out` parameter `{p.name}` of `{name}` is not a float"
                )
        self.lengths = self._lengths(out_lengths)
        self._forward = None
        self._reverse = None

    def _lengths(self, out_lengths) -> Dict[str, Length]:
        arrays = [p.name for p in self.outs if p.array]
        if out_lengths is None:
            out_lengths = {}
        elif not isinstance(out_lengths, dict):
            out_lengths = dict(zip(arrays, out_lengths))
        missing = [n for n in arrays if n not in out_lengths]
        extra = [n for n in out_lengths if n not in arrays]
        if missing or extra:
            raise ValueError(
                f"{self.who}: give the length of each `out` array of `{self.name}` "
                f"({', '.join(arrays) or 'none'}) as a number or a function of the input "
                f"shapes; missing: {missing}, unknown: {extra}"
            )
        return out_lengths

    @property
    def forward(self):
        if self._forward is None:
            self._forward = self.module.derivative(self.name, "forward")
        return self._forward

    @property
    def reverse(self):
        if self._reverse is None:
            self._reverse = self.module.derivative(self.name, "reverse")
        return self._reverse

    def out_shapes(self, in_shapes) -> list:
        """The outputs' shapes (without batch dimensions) from the inputs'."""
        shapes = []
        if self.ret is not None:
            shapes.append(())
        for p in self.outs:
            if not p.array:
                shapes.append(())
                continue
            n = self.lengths[p.name]
            n = n(*in_shapes) if callable(n) else n
            shapes.append((int(n),))
        return shapes

    def out_dtypes(self) -> list:
        dts = [self.ret] if self.ret is not None else []
        return dts + [p.dtype for p in self.outs]

    def float_inputs(self) -> list:
        return [i for i, p in enumerate(self.inputs) if p.float]

    def check_args(self, args, framework: str, convert: Callable) -> list:
        """The wrapped function's arguments, each converted by `convert(a, p)`
        and checked: as many as the inputs, each of its parameter's rank
        (`ndim` of the converted value)."""
        if len(args) != len(self.inputs):
            names = ", ".join(p.name for p in self.inputs)
            raise TypeError(
                f"`{self.name}` in {framework} takes {len(self.inputs)} arguments ({names}), got {len(args)}"
            )
        xs = []
        for a, p in zip(args, self.inputs):
            x = convert(a, p)
            if x.ndim != p.rank:
                raise ValueError(
                    f"argument `{p.name}` of `{self.name}`: expected {p.rank} dimension(s), got {x.ndim}"
                )
            xs.append(x)
        return xs


# ---------------------------------------------------------------------------
# The host side: NumPy arrays (with leading batch dimensions) in, calls of the
# compiled function per batch element, NumPy arrays out.


def batch_shape(spec: Spec, arrays, ranks) -> Tuple[int, ...]:
    shape: Tuple[int, ...] = ()
    for a, r in zip(arrays, ranks):
        lead = a.shape[: a.ndim - r]
        if len(lead) > len(shape):
            shape = lead
    return shape


def arg(p: _Param, value: np.ndarray, copy: bool):
    """A value of one batch element as an argument of the adc function."""
    if p.ref:
        return np.array([value], dtype=p.dtype)
    if p.array:
        return np.array(value, dtype=p.dtype, copy=True) if copy else np.ascontiguousarray(value, dtype=p.dtype)
    return p.dtype.type(value).item()


def host(spec: Spec, kind: str, *arrays):
    """Runs the primal (`kind` "call"), the forward derivative ("jvp": inputs
    then tangents of the float inputs) or the reverse derivative ("vjp":
    inputs then cotangents of the outputs) on NumPy arrays."""
    inputs = list(arrays[: len(spec.inputs)])
    extra = list(arrays[len(spec.inputs) :])
    in_ranks = [p.rank for p in spec.inputs]
    floats = spec.float_inputs()
    if kind == "jvp":
        ranks = in_ranks + [in_ranks[i] for i in floats]
    elif kind == "vjp":
        ranks = in_ranks + [len(s) for s in spec.out_shapes([a.shape[a.ndim - r :] for a, r in zip(inputs, in_ranks)])]
    else:
        ranks = in_ranks
    batch = batch_shape(spec, arrays, ranks)
    arrays = [np.broadcast_to(a, batch + a.shape[a.ndim - r :]) for a, r in zip(arrays, ranks)]
    inputs, extra = arrays[: len(spec.inputs)], arrays[len(spec.inputs) :]
    core_in = [a.shape[len(batch) :] for a in inputs]
    out_shapes = spec.out_shapes(core_in)
    out_dtypes = spec.out_dtypes()
    if kind == "vjp":
        results = [np.zeros(batch + inputs[i].shape[len(batch) :], spec.inputs[i].dtype) for i in floats]
    else:
        results = [np.zeros(batch + s, d) for s, d in zip(out_shapes, out_dtypes)]
    for idx in itertools.product(*(range(n) for n in batch)):
        host_one(spec, kind, idx, inputs, extra, results, out_shapes)
    return tuple(results)


def host_one(spec, kind, idx, inputs, extra, results, out_shapes):
    """One call of the compiled function (`idx` a batch index)."""
    it = iter(a[idx] for a in inputs)
    tangents = iter(a[idx] for a in extra) if kind == "jvp" else None
    cts = [a[idx] for a in extra] if kind == "vjp" else None
    args = []
    outs_at = []  # (position of the output's array in args, output number)
    grads_at = []  # (position of the shadow in args) per float input, or None
    n_out = 1 if spec.ret is not None else 0
    out_i = n_out
    for p in spec.params:
        if p.mode == "out":
            a = np.zeros(out_shapes[out_i] if p.array else (1,), p.dtype)
            if kind == "vjp":
                a = np.zeros_like(a)
            args.append(a)
            if kind == "call":
                outs_at.append((len(args) - 1, out_i))
            elif kind == "jvp":
                args.append(np.zeros_like(a))
                outs_at.append((len(args) - 1, out_i))
            else:
                shadow = np.array(np.reshape(cts[out_i], a.shape), dtype=p.dtype)
                args.append(shadow)
            out_i += 1
            continue
        args.append(arg(p, next(it), copy=p.mode == "inout"))
        if not p.float or kind == "call":
            continue
        if kind == "jvp":
            args.append(arg(p, next(tangents), copy=True))
        elif p.array or p.ref:
            args.append(np.zeros(args[-1].shape if p.array else (1,), p.dtype))
            grads_at.append(len(args) - 1)
        else:
            grads_at.append(None)
    if kind == "call":
        r = spec.primal(*args)
        if spec.ret is not None:
            results[0][idx] = r
        for at, k in outs_at:
            results[k][idx] = np.reshape(args[at], results[k][idx].shape)
    elif kind == "jvp":
        r = spec.forward(*args)
        if spec.ret is not None:
            results[0][idx] = r[1]
        for at, k in outs_at:
            results[k][idx] = np.reshape(args[at], results[k][idx].shape)
    else:
        if spec.ret is not None:
            args.append(spec.ret.type(cts[0]).item())
        r = spec.reverse(*args)
        returned = list(r) if isinstance(r, tuple) else ([] if r is None else [r])
        if spec.ret is not None:
            returned = returned[1:]
        for k, at in enumerate(grads_at):
            if at is None:
                results[k][idx] = returned.pop(0)
            else:
                results[k][idx] = np.reshape(args[at], results[k][idx].shape)
