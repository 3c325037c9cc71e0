"""`module.grad` as `adc run --grad`, against finite differences;
`module.derivative`, `jacobian`, `hessian`."""

import numpy as np
import pytest

import adc
from conftest import finite_difference


def test_grad_matches_finite_differences(m):
    rng = np.random.default_rng(1)
    x, y, z = rng.normal(size=(3, 5))
    value, grads = m.grad("norm3")(x, y, z)
    assert value == pytest.approx(m.norm3(x, y, z))
    for i, g in enumerate(grads):
        fd = finite_difference(m.norm3, [x, y, z], i)
        np.testing.assert_allclose(g, fd, rtol=1e-6, atol=1e-8)


def test_grad_entries_per_parameter(m):
    c = np.array([1.0, 2.0, 3.0])
    acc = np.array([1.5])
    value, (dx, dn, dc, dacc) = m.grad("poly")(2.0, 2, c, acc)
    assert value == 2 * (1 + 4 + 12)
    assert acc[0] == 3.0, "writable arguments are written as a call writes them"
    assert dn is None, "an int has no derivative"
    assert dx == pytest.approx(2 * (2 + 3 * 2 * 2.0))
    assert dc.tolist() == [2.0, 4.0, 8.0]
    assert isinstance(dacc, np.ndarray) and dacc.shape == (1,)
    f = lambda x, c: m.poly(x, 2, c, np.array([1.5]))
    assert dx == pytest.approx(finite_difference(f, [2.0, c], 0), rel=1e-6)


def test_grad_float32(m):
    value, (g,) = m.grad("fsum")(np.array([1.0, 2.0], dtype=np.float32))
    assert value == 3.0 and g.dtype == np.float32 and g.tolist() == [1.0, 1.0]


def test_grad_errors(m):
    with pytest.raises(ValueError, match="returns `float` or `double`"):
        m.grad("div")
    with pytest.raises(ValueError, match="no function `nothing`"):
        m.grad("nothing")
    with pytest.raises(adc.RuntimeError):
        m.grad("dot")(np.ones(3), np.ones(2))
    assert m.grad("dot") is m.grad("dot"), "compiled once"


def test_derivative_requests(m):
    tdot = m.derivative("dot", "forward")
    a, b = np.array([1.0, 2.0]), np.array([3.0, 4.0])
    assert tdot(a, np.array([1.0, 0.0]), b, np.zeros(2)) == (11.0, 3.0)
    rev = m.derivative("norm3", "reverse", ["Duplicated", "Const", "Const"], "ActiveOnly")
    dx = np.zeros(2)
    assert rev(a, dx, b, b, 1.0) is None
    assert dx.tolist() == [2.0, 4.0]
    assert ("norm3", "reverse", ("Duplicated", "Const", "Const"), "ActiveOnly") in m.requests
    with pytest.raises(ValueError, match="activity `Active` does not fit"):
        m.derivative("dot", "reverse", ["Active", "Const"])
    with pytest.raises(ValueError, match="no activity `Bogus`"):
        m.derivative("dot", "reverse", ["Bogus", "Const"])
    with pytest.raises(ValueError, match="mode"):
        m.derivative("dot", "sideways")


def test_jacobian(m):
    x, y, z = np.array([1.0, 2.0]), np.array([3.0, 4.0]), np.array([5.0, 6.0])
    value, J = m.jacobian("norm3")(x, y, z)
    assert value == m.norm3(x, y, z) and J.shape == (1, 6)
    assert J[0].tolist() == (2 * np.concatenate([x, y, z])).tolist()
    xs = np.array([1.0, 2.0, 3.0])
    result, J = m.jacobian("scale")(xs, 2.0)
    assert result is None and xs.tolist() == [2.0, 4.0, 6.0], "it does what `scale` does"
    want = np.hstack([2.0 * np.eye(3), np.array([[1.0], [2.0], [3.0]])])
    np.testing.assert_array_equal(J, want)


def test_hessian(m):
    x, y, z = np.array([1.0, 2.0]), np.array([3.0, 4.0]), np.array([5.0, 6.0])
    value, H = m.hessian("norm3")(x, y, z)
    assert value == m.norm3(x, y, z)
    np.testing.assert_array_equal(H, 2.0 * np.eye(6))
    xs = np.array([1.0, 2.0, 3.0])
    with pytest.raises(ValueError, match="float"):
        m.hessian("scale")
    value, H = m.hessian("dot")(xs, np.array([4.0, 5.0, 6.0]))
    assert value == 32.0 and H.shape == (6, 6)
    np.testing.assert_array_equal(H, np.block([[np.zeros((3, 3)), np.eye(3)], [np.eye(3), np.zeros((3, 3))]]))


GENERATED = """
[autodiff_reverse(rg, Active, ActiveOnly)]
[autodiff_forward(tg, Dual, Dual)]
double g(double x) { return x * x * sin(x); }
[jacobian(J)]
double h(double[] x) { return x[0] * x[0] * x[1] + sin(x[0] * x[1]); }
"""


def test_jacobian_and_hessian_of_generated_functions():
    """Functions an attribute generates (`rg = seed * g'`, the Jacobian `J`
    of `h`) have Jacobians and Hessians too: against hand derivatives."""
    gm = adc.compile(GENERATED, "gen.ad")
    x, seed = 0.7, 1.3
    s, c = np.sin(x), np.cos(x)
    g1 = 2 * x * s + x * x * c
    g2 = 2 * s + 4 * x * c - x * x * s
    g3 = 6 * c - 6 * x * s - x * x * c
    value, J = gm.jacobian("rg")(x, seed)
    assert value == pytest.approx(seed * g1, rel=1e-12)
    np.testing.assert_allclose(J, [[seed * g2, g1]], rtol=1e-12)
    value, H = gm.hessian("rg")(x, seed)
    np.testing.assert_allclose(H, [[seed * g3, g2], [g2, 0.0]], rtol=1e-12, atol=1e-15)
    value, grads = gm.grad("rg")(x, seed)
    np.testing.assert_allclose(grads, [seed * g2, g1], rtol=1e-12)
    a, b = 0.4, -1.1
    sp, cp = np.sin(a * b), np.cos(a * b)
    grad = [2 * a * b + b * cp, a * a + a * cp]
    hess = [[2 * b - b * b * sp, 2 * a + cp - a * b * sp], [2 * a + cp - a * b * sp, -a * a * sp]]
    value, JJ = gm.jacobian("J")(np.array([a, b]), np.zeros(2))
    np.testing.assert_allclose(JJ, [grad] + hess, rtol=1e-12)
    value, HJ = gm.hessian("J")(np.array([a, b]), np.zeros(2))
    np.testing.assert_allclose(HJ, hess, rtol=1e-12)


def test_jacobian_of_a_tuple_names_no_internal_function(m):
    """A tuple result is refused, for a generated function (`tg` returns
    primal and tangent) as for the source's, naming only the function."""
    gm = adc.compile(GENERATED, "gen.ad")
    for module, name in [(gm, "tg"), (m, "first")]:
        with pytest.raises(adc.CompileError, match="returns a tuple") as e:
            module.jacobian(name)
        assert "_adcpy" not in str(e.value), str(e.value)
