"""adc functions in JAX: `adc.jax.function(module, "f", ...)`.

The function becomes three JAX primitives: the call, its forward derivative
(a linear map of the input tangents: JAX's JVP rule) and its reverse
derivative (the transpose of that map: what `jax.grad`, `jax.vjp` and
`jax.jacrev` use). Each runs adc's compiled code on the host through
`jax.pure_callback` under `jax.jit`, and calls it directly otherwise.
`jax.vmap` adds leading batch dimensions, which the host side loops over.

Inputs are the parameters that are not `out`, in order: a JAX scalar for a
scalar or an `inout` scalar, a 1-D array for an array. Outputs are the float
result (if the function has one) and then the `out` parameters (an `out`
array as a 1-D array, an `out` scalar as a scalar). `inout` parameters are
inputs: the function runs on a copy, and their final values are dropped.

`double` parameters are `float64` in JAX when `jax_enable_x64` is on, and
`float32` otherwise (adc still computes in double precision).
"""

from __future__ import annotations

import itertools
from typing import Any, Callable, Dict, Optional, Sequence, Tuple, Union

import jax
import jax.numpy as jnp
import numpy as np
from jax.extend.core import Primitive
from jax.interpreters import ad, batching, mlir

from . import Module

__all__ = ["function"]

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


class _Spec:
    """What the primitives need to know: the adc functions and shapes.
    Hashable by identity (it is a primitive parameter)."""

    def __init__(self, module: Module, name: str, out_lengths):
        self.module = module
        self.name = name
        self.primal = module[name]
        self.params = [_Param(n, t) for n, t in self.primal.params]
        sig = self.primal.signature
        ret = sig[: sig.index(name + "(")].strip()
        if ret not in ("void", "double", "float"):
            raise ValueError(
                f"adc.jax.function: `{name}` returns `{ret}`; a JAX function of it "
                "needs a `double` or `float` result, or `void` with `out` parameters"
            )
        self.ret = None if ret == "void" else np.dtype(_DTYPES[ret])
        self.inputs = [p for p in self.params if p.mode != "out"]
        self.outs = [p for p in self.params if p.mode == "out"]
        if self.ret is None and not self.outs:
            raise ValueError(f"adc.jax.function: `{name}` has no output")
        for p in self.outs:
            if not p.float:
                raise ValueError(
                    f"adc.jax.function: `out` parameter `{p.name}` of `{name}` is not a float"
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
                f"adc.jax.function: give the length of each `out` array of `{self.name}` "
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

    def jax_dtype(self, dtype) -> np.dtype:
        return np.dtype(jax.dtypes.canonicalize_dtype(dtype))

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


# ---------------------------------------------------------------------------
# The host side: NumPy arrays (with leading batch dimensions) in, calls of the
# compiled function per batch element, NumPy arrays out.


def _batch_shape(spec: _Spec, arrays, ranks) -> Tuple[int, ...]:
    shape: Tuple[int, ...] = ()
    for a, r in zip(arrays, ranks):
        lead = a.shape[: a.ndim - r]
        if len(lead) > len(shape):
            shape = lead
    return shape


def _arg(p: _Param, value: np.ndarray, copy: bool):
    """A value of one batch element as an argument of the adc function."""
    if p.ref:
        return np.array([value], dtype=p.dtype)
    if p.array:
        return np.array(value, dtype=p.dtype, copy=True) if copy else np.ascontiguousarray(value, dtype=p.dtype)
    return p.dtype.type(value).item()


def _host(spec: _Spec, kind: str, *arrays):
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
    batch = _batch_shape(spec, arrays, ranks)
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
        _host_one(spec, kind, idx, inputs, extra, results, out_shapes)
    return tuple(results)


def _host_one(spec, kind, idx, inputs, extra, results, out_shapes):
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
        args.append(_arg(p, next(it), copy=p.mode == "inout"))
        if not p.float or kind == "call":
            continue
        if kind == "jvp":
            args.append(_arg(p, next(tangents), copy=True))
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


# ---------------------------------------------------------------------------
# The primitives.

_call_p = Primitive("adc_call")
_jvp_p = Primitive("adc_jvp")
_vjp_p = Primitive("adc_vjp")
for _p in (_call_p, _jvp_p, _vjp_p):
    _p.multiple_results = True


def _core_shapes(spec: _Spec, args, kind: str):
    """(batch shape, core shapes of the inputs) of abstract values."""
    in_ranks = [p.rank for p in spec.inputs]
    n = len(spec.inputs)
    ranks = list(in_ranks)
    if kind == "jvp":
        ranks += [in_ranks[i] for i in spec.float_inputs()]
    core_in = [a.shape[len(a.shape) - r :] for a, r in zip(args[:n], in_ranks)]
    if kind == "vjp":
        ranks += [len(s) for s in spec.out_shapes(core_in)]
    batch = ()
    for a, r in zip(args, ranks):
        lead = tuple(a.shape[: len(a.shape) - r])
        if len(lead) > len(batch):
            batch = lead
    return batch, core_in


def _result_avals(spec: _Spec, args, kind: str):
    batch, core_in = _core_shapes(spec, args, kind)
    if kind == "vjp":
        return [
            jax.core.ShapedArray(batch + core_in[i], spec.jax_dtype(spec.inputs[i].dtype))
            for i in spec.float_inputs()
        ]
    return [
        jax.core.ShapedArray(batch + s, spec.jax_dtype(d))
        for s, d in zip(spec.out_shapes(core_in), spec.out_dtypes())
    ]


def _host_call(spec: _Spec, kind: str, avals, *arrays):
    out = _host(spec, kind, *(np.asarray(a) for a in arrays))
    return tuple(np.asarray(o, dtype=a.dtype) for o, a in zip(out, avals))


def _impl(kind):
    def impl(*args, spec):
        avals = _result_avals(spec, [jax.typeof(a) for a in args], kind)
        out = _host_call(spec, kind, avals, *args)
        return [jnp.asarray(o) for o in out]

    return impl


def _abstract(kind):
    def abstract(*args, spec):
        return _result_avals(spec, args, kind)

    return abstract


def _lowering(kind):
    def callback(*args, spec):
        avals = _result_avals(spec, [jax.typeof(a) for a in args], kind)
        shapes = [jax.ShapeDtypeStruct(a.shape, a.dtype) for a in avals]
        return jax.pure_callback(
            lambda *xs: _host_call(spec, kind, avals, *xs), tuple(shapes), *args
        )

    return mlir.lower_fun(callback, multiple_results=True)


for _kind, _prim in (("call", _call_p), ("jvp", _jvp_p), ("vjp", _vjp_p)):
    _prim.def_impl(_impl(_kind))
    _prim.def_abstract_eval(_abstract(_kind))
    mlir.register_lowering(_prim, _lowering(_kind))


def _batcher(prim, kind):
    """vmap: every argument gets the batch dimension in front (broadcast
    where it has none); the host side loops over leading dimensions."""

    def batch(args, dims, *, spec):
        size = next(a.shape[d] for a, d in zip(args, dims) if d is not None)
        moved = []
        for a, d in zip(args, dims):
            if d is None:
                a = jnp.broadcast_to(a, (size,) + a.shape)
            else:
                a = jnp.moveaxis(a, d, 0)
            moved.append(a)
        outs = prim.bind(*moved, spec=spec)
        return outs, [0] * len(outs)

    return batch


batching.primitive_batchers[_call_p] = _batcher(_call_p, "call")
batching.primitive_batchers[_jvp_p] = _batcher(_jvp_p, "jvp")
batching.primitive_batchers[_vjp_p] = _batcher(_vjp_p, "vjp")


def _call_jvp(primals, tangents, *, spec):
    outs = _call_p.bind(*primals, spec=spec)
    floats = spec.float_inputs()
    ts = [ad.instantiate_zeros(tangents[i]) for i in floats]
    tangent_outs = _jvp_p.bind(*primals, *ts, spec=spec)
    return outs, tangent_outs


ad.primitive_jvps[_call_p] = _call_jvp


def _jvp_transpose(cts, *args, spec):
    n = len(spec.inputs)
    primals = args[:n]
    if any(ad.is_undefined_primal(p) for p in primals):
        raise NotImplementedError(
            "adc.jax: second derivatives of an adc function are not supported yet"
        )
    tangent_avals = [t.aval for t in args[n:]]
    cts = [
        jnp.zeros(a.shape, a.dtype) if type(c) is ad.Zero else c
        for c, a in zip(cts, _result_avals(spec, [jax.typeof(p) for p in primals], "call"))
    ]
    grads = _vjp_p.bind(*primals, *cts, spec=spec)
    return [None] * n + [g.astype(a.dtype) for g, a in zip(grads, tangent_avals)]


ad.primitive_transposes[_jvp_p] = _jvp_transpose


def _no_second_order(primals, tangents, *, spec):
    raise NotImplementedError(
        "adc.jax: derivatives of adc's derivatives (second order) are not supported yet"
    )


ad.primitive_jvps[_jvp_p] = _no_second_order
ad.primitive_jvps[_vjp_p] = _no_second_order


# ---------------------------------------------------------------------------


def function(
    module: Module,
    name: str,
    out: Optional[Union[Dict[str, Length], Sequence[Length]]] = None,
) -> Callable[..., Any]:
    """The adc function `name` of `module` as a JAX function.

    Its arguments are the parameters that are not `out`, in order; its
    outputs the float result (if any) and the `out` parameters, one output
    returned plainly and several as a tuple. `out` gives the length of each
    `out` array, by parameter name (a dict) or in order (a sequence): a
    number, or a function of the inputs' shapes (one shape tuple per input)
    returning one.

    It works under `jax.jit`, `jax.grad`, `jax.vjp`, `jax.jacrev` (adc's
    reverse derivative), `jax.jvp`, `jax.jacfwd` (adc's forward derivative)
    and `jax.vmap` (a loop on the host over the batch).
    """
    spec = _Spec(module, name, out)

    def wrapped(*args):
        if len(args) != len(spec.inputs):
            names = ", ".join(p.name for p in spec.inputs)
            raise TypeError(
                f"`{name}` in JAX takes {len(spec.inputs)} arguments ({names}), got {len(args)}"
            )
        xs = [jnp.asarray(a, dtype=spec.jax_dtype(p.dtype)) for a, p in zip(args, spec.inputs)]
        for x, p in zip(xs, spec.inputs):
            if x.ndim != p.rank:
                raise ValueError(
                    f"argument `{p.name}` of `{name}`: expected {p.rank} dimension(s), got {x.ndim}"
                )
        outs = _call_p.bind(*xs, spec=spec)
        return outs[0] if len(outs) == 1 else tuple(outs)

    wrapped.__name__ = name
    wrapped.__doc__ = f"{spec.primal.signature}, compiled by adc, as a JAX function."
    return wrapped
