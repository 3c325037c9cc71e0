"""adc.torch.function: values, backward, gradcheck (reverse and forward
mode), torch.func.jvp and vmap, against the same functions written in
torch operations. Skipped where PyTorch is not installed (docs/python.md
says how to install it)."""

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import adc  # noqa: E402
import adc.torch  # noqa: E402

SOURCE = """
double energy(double[] xs, double k) {
    double s = 0.0;
    for (int i = 0; i < len(xs); i++) {
        s += k * sin(xs[i]) * xs[i];
        if (s > 1e6) break;
    }
    return s;
}
double pairs(double[] xs, out double[] diffs, int stride) {
    double s = 0.0;
    for (int i = 0; i + stride < len(xs); i++) {
        diffs[i] = xs[i + stride] - xs[i];
        s += diffs[i] * diffs[i];
    }
    return s;
}
int count(double[] xs) { return len(xs); }
"""


@pytest.fixture(scope="module")
def mod():
    return adc.compile(SOURCE, "t.ad")


def energy_torch(xs, k):
    return torch.sum(k * torch.sin(xs) * xs)


def pairs_torch(xs, stride):
    d = xs[stride:] - xs[:-stride]
    return torch.sum(d * d), d


X = [0.3, -1.2, 2.0, 0.7]
K = 1.7


def leaf(v):
    return torch.tensor(v, dtype=torch.float64, requires_grad=True)


def test_values(mod):
    f = adc.torch.function(mod, "energy")
    y = f(leaf(X), K)
    assert y.dtype == torch.float64 and y.dim() == 0
    torch.testing.assert_close(y, energy_torch(torch.tensor(X, dtype=torch.float64), K))


def test_backward_against_torch(mod):
    f = adc.torch.function(mod, "energy")
    xs, k = leaf(X), leaf(K)
    f(xs, k).backward()
    xs2, k2 = leaf(X), leaf(K)
    energy_torch(xs2, k2).backward()
    torch.testing.assert_close(xs.grad, xs2.grad, rtol=1e-12, atol=1e-12)
    torch.testing.assert_close(k.grad, k2.grad, rtol=1e-12, atol=1e-12)


def test_gradcheck_reverse_and_forward(mod):
    f = adc.torch.function(mod, "energy")
    assert torch.autograd.gradcheck(f, (leaf(X), leaf(K)), check_forward_ad=True)
    g = adc.torch.function(mod, "pairs", out={"diffs": lambda xs, stride: xs[0] - 2})
    assert torch.autograd.gradcheck(lambda xs: g(xs, 2), (leaf(X),), check_forward_ad=True)


def test_out_arrays_and_int_inputs(mod):
    g = adc.torch.function(mod, "pairs", out=[lambda xs, stride: xs[0] - 1])
    xs = leaf(X)
    s, d = g(xs, 1)
    s2, d2 = pairs_torch(torch.tensor(X, dtype=torch.float64), 1)
    torch.testing.assert_close(s, s2)
    torch.testing.assert_close(d, d2)
    (s + 3.0 * d.sum()).backward()
    xs2 = leaf(X)
    s3, d3 = pairs_torch(xs2, 1)
    (s3 + 3.0 * d3.sum()).backward()
    torch.testing.assert_close(xs.grad, xs2.grad, rtol=1e-12, atol=1e-12)


def test_func_jvp_and_vjp(mod):
    f = adc.torch.function(mod, "energy")
    xs = torch.tensor(X, dtype=torch.float64)
    v = torch.tensor([1.0, -0.5, 0.25, 2.0], dtype=torch.float64)
    y, t = torch.func.jvp(lambda x: f(x, K), (xs,), (v,))
    y2, t2 = torch.func.jvp(lambda x: energy_torch(x, K), (xs,), (v,))
    torch.testing.assert_close(y, y2)
    torch.testing.assert_close(t, t2, rtol=1e-12, atol=1e-12)
    _, pull = torch.func.vjp(lambda x: f(x, K), xs)
    (g,) = pull(torch.tensor(2.0, dtype=torch.float64))
    _, pull2 = torch.func.vjp(lambda x: energy_torch(x, K), xs)
    torch.testing.assert_close(g, pull2(torch.tensor(2.0, dtype=torch.float64))[0])


def test_vmap_and_grad_of_vmap(mod):
    f = adc.torch.function(mod, "energy")
    batch = torch.tensor(
        np.random.default_rng(3).uniform(-1, 1, (5, 4)), dtype=torch.float64, requires_grad=True
    )
    ys = torch.func.vmap(lambda x: f(x, K))(batch)
    want = torch.stack([energy_torch(b, K) for b in batch.detach()])
    torch.testing.assert_close(ys, want)
    ys.sum().backward()
    ref = batch.detach().clone().requires_grad_(True)
    torch.stack([energy_torch(b, K) for b in ref]).sum().backward()
    torch.testing.assert_close(batch.grad, ref.grad, rtol=1e-12, atol=1e-12)


def test_errors(mod):
    f = adc.torch.function(mod, "energy")
    with pytest.raises(TypeError, match="takes 2 arguments"):
        f(leaf(X))
    with pytest.raises(ValueError, match="expected 1 dimension"):
        f(leaf([[1.0, 2.0]]), K)
    with pytest.raises(ValueError, match="returns `int`"):
        adc.torch.function(mod, "count")
    with pytest.raises(ValueError, match="length of each `out` array"):
        adc.torch.function(mod, "pairs")


def test_func_grad_under_vmap(mod):
    f = adc.torch.function(mod, "energy")
    batch = torch.tensor(np.random.default_rng(4).uniform(-1, 1, (3, 4)), dtype=torch.float64)
    got = torch.func.vmap(torch.func.grad(lambda x: f(x, K)))(batch)
    want = torch.func.vmap(torch.func.grad(lambda x: energy_torch(x, K)))(batch)
    torch.testing.assert_close(got, want, rtol=1e-12, atol=1e-12)


def test_second_derivatives_raise(mod):
    f = adc.torch.function(mod, "energy")
    xs = leaf(X)
    (g,) = torch.autograd.grad(f(xs, K), xs, create_graph=True)
    with pytest.raises(NotImplementedError, match="second order"):
        g.sum().backward()
    # The module is still usable afterwards.
    torch.testing.assert_close(f(leaf(X), K), energy_torch(torch.tensor(X, dtype=torch.float64), K))
