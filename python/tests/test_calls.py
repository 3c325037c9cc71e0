"""Calls: scalars, arrays passed in place, results (docs/python.md)."""

import numpy as np
import pytest

import adc


def test_scalars_and_arrays(m):
    a = np.array([1.0, 2.0, 3.0])
    assert m.dot(a, np.array([4.0, 5.0, 6.0])) == 32.0
    assert m["dot"](a, a) == 14.0
    assert m.div(7, 2) == 3 and isinstance(m.div(7, 2), int)
    assert m.positive(1.5) is True and m.positive(-1) is False
    assert m.twice(2) == 4.0, "static functions are callable; an int converts to double"
    assert m.sum_to(0) == 0.0


def test_arrays_are_passed_in_place(m):
    xs = np.array([1.0, 2.0, 4.0])
    assert m.scale(xs, 0.5) is None
    assert xs.tolist() == [0.5, 1.0, 2.0]
    # A view of a larger array is written through.
    big = np.arange(6.0)
    m.scale(big[2:4], 10.0)
    assert big.tolist() == [0.0, 1.0, 20.0, 30.0, 4.0, 5.0]
    ints = np.zeros(4, dtype=np.int64)
    m.iota(ints)
    assert ints.tolist() == [0, 1, 2, 3]


def test_element_types(m):
    assert m.fsum(np.array([0.5, 0.25], dtype=np.float32)) == 0.75
    assert m.count(np.array([True, False, True])) == 2
    assert m.at(np.array([5, 6, 7]), 2) == 7
    # The other array-likes convert for read-only parameters.
    assert m.dot([1, 2], (3.0, 4.0)) == 11.0
    assert m.count([True, True]) == 2
    assert m.dot(np.array([1, 2]), np.array([1.0, 1.0])) == 3.0, "int64 converts safely"
    assert m.dot(np.arange(10.0)[::2], np.ones(5)) == 20.0, "a strided view is copied"
    assert m.dot(np.array([], dtype=np.float64), []) == 0.0


def test_results(m):
    assert m.first(np.array([2.5, 1.0])) == (2.5, 2)
    total = np.array([1.0])
    m.bump(total, 2.0)
    assert total[0] == 3.0, "an inout scalar is a one-element array"
    acc = np.array([2.0])
    assert m.poly(2.0, 3, np.array([1.0, 1.0]), acc) == 9.0
    assert acc[0] == 4.0


def test_module_api(m):
    assert "dot" in m.functions and "ddot" in m.functions and "twice" in m.functions
    assert "dot" in m and "nothing" not in m
    assert "dot" in dir(m)
    assert m.dot.signature == "double dot(double[] a, double[] b)"
    assert m.bump.params == [("total", "inout double"), ("by", "double")]
    assert m.dot.__name__ == "dot"
    assert "dot" in repr(m) and "double dot(" in repr(m.dot)
    assert m.path == "t.ad" and "double dot" in m.source
    with pytest.raises(AttributeError, match="did you mean `dot`"):
        m.dott
    with pytest.raises(KeyError):
        m["nothing"]


def test_generated_derivative_in_the_source(m):
    a, b = np.array([1.0, 2.0]), np.array([3.0, 5.0])
    da, db = np.zeros(2), np.zeros(2)
    assert m.ddot(a, da, b, db, 1.0) == 13.0
    assert da.tolist() == [3.0, 5.0] and db.tolist() == [1.0, 2.0]


def test_load(tmp_path):
    p = tmp_path / "f.ad"
    p.write_text("double half(double x) { return x / 2.0; }")
    assert adc.load(p).half(3.0) == 1.5
    assert adc.load(str(p)).path == str(p)
    with pytest.raises(FileNotFoundError):
        adc.load(tmp_path / "missing.ad")


def test_nan_and_inf_pass_through(m):
    assert np.isnan(m.dot(np.array([np.nan]), np.array([1.0])))
    assert m.dot(np.array([np.inf]), np.array([1.0])) == np.inf
    assert np.isnan(m.twice(float("nan")))


def test_large_arrays(m):
    x = np.ones(3_000_000)
    assert m.dot(x, x) == 3_000_000.0
