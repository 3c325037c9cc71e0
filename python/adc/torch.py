"""adc functions in PyTorch: `adc.torch.function(module, "f", ...)`.

The function becomes a `torch.autograd.Function` whose forward pass runs
adc's compiled code, whose backward pass (`loss.backward()`,
`torch.autograd.grad`, `torch.func.vjp`) runs adc's reverse derivative, and
whose forward-mode rule (`torch.func.jvp`, `torch.autograd.forward_ad`)
runs adc's forward derivative. `torch.func.vmap` adds leading batch
dimensions, which the host side loops over. Tensors are CPU tensors; they
cross to adc as NumPy arrays sharing their memory where the dtype matches.

Inputs are the parameters that are not `out`, in order: a tensor (or a
Python number) for a scalar or an `inout` scalar, a 1-D tensor for an array.
Outputs are the float result (if the function has one) and then the `out`
parameters (an `out` array as a 1-D tensor, an `out` scalar as a 0-D one).
`inout` parameters are inputs: the function runs on a copy, and their final
values are dropped.
"""

from __future__ import annotations

from typing import Any, Callable, Dict, Optional, Sequence, Union

import numpy as np
import torch

from . import Module
from ._host import Length, Spec, host

__all__ = ["function"]


def _numpy(x: Any) -> np.ndarray:
    if isinstance(x, torch.Tensor):
        return x.detach().cpu().numpy()
    return np.asarray(x)


def _cpu_tensor(a: Any, p) -> torch.Tensor:
    """An argument as a CPU tensor (a number or array in `p`'s dtype)."""
    x = a if isinstance(a, torch.Tensor) else torch.as_tensor(np.asarray(a, dtype=p.dtype))
    if x.device.type != "cpu":
        raise ValueError(f"argument `{p.name}`: adc runs on the CPU; got a tensor on {x.device}")
    return x


def _tensors(arrays) -> tuple:
    return tuple(torch.as_tensor(np.asarray(a)) for a in arrays)


def _vmap(apply, info, in_dims, args):
    """vmap of a host function: every tensor argument gets the batch
    dimension in front (expanded where it has none); the host loops over
    leading dimensions."""
    moved = []
    for x, d in zip(args, in_dims):
        if not isinstance(x, torch.Tensor):
            moved.append(x)
        elif d is None:
            moved.append(x.expand((info.batch_size,) + tuple(x.shape)))
        else:
            moved.append(torch.movedim(x, d, 0))
    outs = apply(*moved)
    return outs, (0,) * len(outs)


class _Host(torch.autograd.Function):
    """adc's forward ("jvp") or reverse ("vjp") derivative as a function of
    tensors: `apply(spec, kind, *arrays)`. `_Call`'s rules call it (not
    NumPy directly) so that torch.func's transforms unwrap their tensors."""

    @staticmethod
    def forward(spec: Spec, kind: str, *arrays):
        return _tensors(host(spec, kind, *(_numpy(a) for a in arrays)))

    @staticmethod
    def setup_context(ctx, inputs, output):
        pass

    @staticmethod
    def backward(ctx, *cotangents):
        raise NotImplementedError(
            "adc.torch: derivatives of adc's derivatives (second order) are not supported yet"
        )

    @staticmethod
    def vmap(info, in_dims, spec, kind, *arrays):
        return _vmap(lambda *a: _Host.apply(spec, kind, *a), info, in_dims[2:], arrays)


class _Call(torch.autograd.Function):
    """One adc function: `apply(spec, *inputs)`."""

    @staticmethod
    def forward(spec: Spec, *inputs):
        return _tensors(host(spec, "call", *(_numpy(x) for x in inputs)))

    @staticmethod
    def setup_context(ctx, inputs, output):
        spec, *xs = inputs
        ctx.spec = spec
        ctx.out_shapes = [o.shape for o in output]
        # Saved this way, the inputs reach backward and jvp unwrapped under
        # torch.func's transforms.
        ctx.save_for_backward(*xs)
        ctx.save_for_forward(*xs)

    @staticmethod
    def backward(ctx, *cotangents):
        spec = ctx.spec
        xs = ctx.saved_tensors
        cts = [
            torch.zeros(s, dtype=torch.float64) if c is None else c
            for c, s in zip(cotangents, ctx.out_shapes)
        ]
        grads = iter(_Host.apply(spec, "vjp", *xs, *cts))
        floats = set(spec.float_inputs())
        out = [None]
        for i, x in enumerate(xs):
            out.append(next(grads).to(x.dtype) if i in floats else None)
        return tuple(out)

    @staticmethod
    def jvp(ctx, _spec_tangent, *tangents):
        spec = ctx.spec
        xs = ctx.saved_tensors
        ts = [
            torch.zeros_like(xs[i], dtype=torch.float64) if tangents[i] is None else tangents[i]
            for i in spec.float_inputs()
        ]
        return _Host.apply(spec, "jvp", *xs, *ts)

    @staticmethod
    def vmap(info, in_dims, spec, *inputs):
        return _vmap(lambda *a: _Call.apply(spec, *a), info, in_dims[1:], inputs)


def function(
    module: Module,
    name: str,
    out: Optional[Union[Dict[str, Length], Sequence[Length]]] = None,
) -> Callable[..., Any]:
    """The adc function `name` of `module` as a PyTorch function.

    Its arguments are the parameters that are not `out`, in order; its
    outputs the float result (if any) and the `out` parameters, one output
    returned plainly and several as a tuple. `out` gives the length of each
    `out` array, by parameter name (a dict) or in order (a sequence): a
    number, or a function of the inputs' shapes (one shape tuple per input)
    returning one.

    Gradients flow through it (`backward`, `torch.autograd.grad`,
    `torch.autograd.gradcheck`: adc's reverse derivative), forward-mode AD
    uses adc's forward derivative, and `torch.func.vmap` loops over the
    batch. Second derivatives are not supported.
    """
    spec = Spec(module, name, out, "adc.torch.function")

    def wrapped(*args):
        xs = spec.check_args(args, "PyTorch", _cpu_tensor)
        outs = _Call.apply(spec, *xs)
        return outs[0] if len(outs) == 1 else tuple(outs)

    wrapped.__name__ = name
    wrapped.__doc__ = f"{spec.primal.signature}, compiled by adc, as a PyTorch function."
    return wrapped
