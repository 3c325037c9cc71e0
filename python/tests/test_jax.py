"""adc.jax.function: under jit, grad, vjp, jvp, jacfwd, jacrev and vmap,
against jax.numpy versions of the same functions and finite differences."""

import numpy as np
import pytest

jax = pytest.importorskip("jax")
jax.config.update("jax_enable_x64", True)
import jax.numpy as jnp  # noqa: E402

import adc  # noqa: E402
import adc.jax  # noqa: E402

SOURCE = """
// A small recurrence with a data-dependent exit.
double energy(double[] xs, double k) {
    double s = 0.0;
    for (int i = 0; i < len(xs); i++) {
        s += k * sin(xs[i]) * xs[i];
        if (s > 1e6) break;
    }
    return s;
}
void squares(double[] xs, double k, out double[] ys) {
    for (int i = 0; i < len(xs); i++) ys[i] = k * xs[i] * xs[i];
}
double pairs(double[] xs, out double[] diffs, int stride) {
    double s = 0.0;
    for (int i = 0; i + stride < len(xs); i++) {
        diffs[i] = xs[i + stride] - xs[i];
        s += diffs[i] * diffs[i];
    }
    return s;
}
float fdot(float[] a, float[] b) {
    float s = 0.0;
    for (int i = 0; i < len(a); i++) s += a[i] * b[i];
    return s;
}
int count(double[] xs) { return len(xs); }
"""


@pytest.fixture(scope="module")
def mod():
    return adc.compile(SOURCE, "j.ad")


def energy_jnp(xs, k):
    return jnp.sum(k * jnp.sin(xs) * xs)


def squares_jnp(xs, k):
    return k * xs * xs


def pairs_jnp(xs, stride):
    d = xs[stride:] - xs[:-stride]
    return jnp.sum(d * d), d


X = jnp.array([0.3, -1.2, 2.0, 0.7])
K = 1.7


def close(a, b, tol=1e-10):
    np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=tol, atol=tol)


def test_values_and_jit(mod):
    f = adc.jax.function(mod, "energy")
    close(f(X, K), energy_jnp(X, K))
    close(jax.jit(f)(X, K), energy_jnp(X, K))
    assert f(X, K).dtype == jnp.float64


def test_grad_vjp_against_jax(mod):
    f = adc.jax.function(mod, "energy")
    for g in (jax.grad(f, argnums=(0, 1)), jax.jit(jax.grad(f, argnums=(0, 1)))):
        gx, gk = g(X, K)
        hx, hk = jax.grad(energy_jnp, argnums=(0, 1))(X, K)
        close(gx, hx)
        close(gk, hk)
    y, pullback = jax.vjp(f, X, K)
    close(pullback(2.0)[0], 2.0 * jax.grad(energy_jnp)(X, K))


def test_jvp_jacfwd_jacrev_against_jax(mod):
    f = adc.jax.function(mod, "energy")
    t = jnp.array([1.0, 0.5, -0.25, 2.0])
    (y, ty), (z, tz) = jax.jvp(f, (X, K), (t, 0.3)), jax.jvp(energy_jnp, (X, K), (t, 0.3))
    close(y, z)
    close(ty, tz)
    close(jax.jacfwd(f)(X, K), jax.jacfwd(energy_jnp)(X, K))
    close(jax.jit(jax.jacrev(f))(X, K), jax.jacrev(energy_jnp)(X, K))


def test_out_arrays(mod):
    s = adc.jax.function(mod, "squares", out={"ys": lambda xs, k: xs[0]})
    close(s(X, K), squares_jnp(X, K))
    close(jax.jit(s)(X, K), squares_jnp(X, K))
    close(jax.jacfwd(s)(X, K), jax.jacfwd(squares_jnp)(X, K))
    close(jax.jacrev(s, argnums=(0, 1))(X, K)[1], jax.jacrev(squares_jnp, argnums=1)(X, K))
    p = adc.jax.function(mod, "pairs", out=[lambda xs, stride: xs[0] - 2])
    total, diffs = p(X, 2)
    want_total, want_diffs = pairs_jnp(X, 2)
    close(total, want_total)
    close(diffs, want_diffs)
    close(jax.grad(lambda x: p(x, 2)[0])(X), jax.grad(lambda x: pairs_jnp(x, 2)[0])(X))
    close(
        jax.jacrev(lambda x: p(x, 2)[1])(X), jax.jacrev(lambda x: pairs_jnp(x, 2)[1])(X)
    )
    q = adc.jax.function(mod, "pairs", out=[2])
    assert q(X, 2)[1].shape == (2,)


def test_vmap(mod):
    f = adc.jax.function(mod, "energy")
    xs = jnp.stack([X, 2 * X, -X])
    ks = jnp.array([1.0, 2.0, 3.0])
    close(jax.vmap(f)(xs, ks), jax.vmap(energy_jnp)(xs, ks))
    close(jax.vmap(f, in_axes=(0, None))(xs, K), jax.vmap(energy_jnp, in_axes=(0, None))(xs, K))
    close(jax.vmap(f, in_axes=(1, None))(xs.T, K), jax.vmap(energy_jnp, in_axes=(1, None))(xs.T, K))
    g = jax.jit(jax.vmap(jax.grad(f)))
    close(g(xs, ks), jax.vmap(jax.grad(energy_jnp))(xs, ks))
    # Nested vmap: two batch dimensions.
    xss = jnp.stack([xs, xs + 1])
    close(jax.vmap(jax.vmap(f, (0, None)), (0, None))(xss, K), jax.vmap(jax.vmap(energy_jnp, (0, None)), (0, None))(xss, K))


def test_against_finite_differences(mod):
    f = adc.jax.function(mod, "energy")
    g = np.asarray(jax.grad(f)(X, K))
    h = 1e-6
    for i in range(len(X)):
        e = np.zeros(len(X))
        e[i] = h
        fd = (f(X + e, K) - f(X - e, K)) / (2 * h)
        assert g[i] == pytest.approx(float(fd), rel=1e-6)


def test_float32_function(mod):
    f = adc.jax.function(mod, "fdot")
    a = jnp.array([1.0, 2.0], dtype=jnp.float32)
    assert f(a, a).dtype == jnp.float32
    close(jax.grad(f)(a, 2 * a), 2 * a, tol=1e-6)


def test_errors(mod):
    with pytest.raises(ValueError, match="returns `int`"):
        adc.jax.function(mod, "count")
    with pytest.raises(ValueError, match="length of each `out` array"):
        adc.jax.function(mod, "squares")
    f = adc.jax.function(mod, "energy")
    with pytest.raises(TypeError, match="takes 2 arguments"):
        f(X)
    with pytest.raises(ValueError, match="dimension"):
        f(jnp.ones((2, 2)), K)
    with pytest.raises(NotImplementedError, match="second"):
        jax.hessian(f)(X, K)
