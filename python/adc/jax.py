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

from typing import Any, Callable, Dict, Optional, Sequence, Union

import jax
import jax.numpy as jnp
import numpy as np
from jax.extend.core import Primitive
from jax.interpreters import ad, batching, mlir

from . import Module
from ._host import Length, Spec, host

__all__ = ["function"]


def _jax_dtype(dtype) -> np.dtype:
    """The dtype JAX uses for `dtype` (float64 becomes float32 without x64)."""
    return np.dtype(jax.dtypes.canonicalize_dtype(dtype))


# ---------------------------------------------------------------------------
# The primitives.

_call_p = Primitive("adc_call")
_jvp_p = Primitive("adc_jvp")
_vjp_p = Primitive("adc_vjp")
for _p in (_call_p, _jvp_p, _vjp_p):
    _p.multiple_results = True


def _core_shapes(spec: Spec, args, kind: str):
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


def _result_avals(spec: Spec, args, kind: str):
    batch, core_in = _core_shapes(spec, args, kind)
    if kind == "vjp":
        return [
            jax.core.ShapedArray(batch + core_in[i], _jax_dtype(spec.inputs[i].dtype))
            for i in spec.float_inputs()
        ]
    return [
        jax.core.ShapedArray(batch + s, _jax_dtype(d))
        for s, d in zip(spec.out_shapes(core_in), spec.out_dtypes())
    ]


def _host_call(spec: Spec, kind: str, avals, *arrays):
    out = host(spec, kind, *(np.asarray(a) for a in arrays))
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
    spec = Spec(module, name, out, "adc.jax.function")

    def wrapped(*args):
        xs = spec.check_args(args, "JAX", lambda a, p: jnp.asarray(a, dtype=_jax_dtype(p.dtype)))
        outs = _call_p.bind(*xs, spec=spec)
        return outs[0] if len(outs) == 1 else tuple(outs)

    wrapped.__name__ = name
    wrapped.__doc__ = f"{spec.primal.signature}, compiled by adc, as a JAX function."
    return wrapped
