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
