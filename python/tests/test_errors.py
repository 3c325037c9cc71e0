"""Bad input raises, never crashes: types, dtypes, dimensions, lengths,
read-only arrays, runtime errors (and the module stays usable), aliasing,
compile errors, threads."""

import signal
import threading
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest

import adc


def test_compile_error_text_and_diagnostics():
    with pytest.raises(adc.CompileError) as e:
        adc.compile("double f(double x) {\n    return y;\n}", "bad.ad")
    assert "bad.ad:2:12" in str(e.value)
    assert "cannot find `y`" in str(e.value)
    (d,) = e.value.diagnostics
    assert (d.code, d.line, d.column, d.severity) == ("E0116", 2, 12, "error")
    assert "`y`" in d.message
    with pytest.raises(adc.CompileError) as e:
        adc.compile("int f() { return 1.5; }\nint g() { return true; }")
    assert len(e.value.diagnostics) == 2
    assert isinstance(e.value, Exception) and not isinstance(e.value, adc.RuntimeError)


def test_wrong_argument_types(m):
    a = np.ones(2)
    with pytest.raises(TypeError, match="takes 2 arguments, got 1"):
        m.dot(a)
    with pytest.raises(TypeError, match="expected a float"):
        m.twice("2")
    with pytest.raises(TypeError, match="expected a float"):
        m.twice(True)
    with pytest.raises(TypeError, match="expected an int"):
        m.div(1.5, 1)
    with pytest.raises(TypeError, match="expected a bool"):
        m.pick(1)
    assert m.pick(True) == 1 and m.pick(np.bool_(False)) == 0
    with pytest.raises(OverflowError):
        m.div(2**70, 1)
    with pytest.raises(TypeError):
        m.dot("ab", a)
    with pytest.raises(TypeError, match="does not convert safely"):
        m.at(np.array([1.5]), 0)
    with pytest.raises(TypeError, match="float32"):
        m.fsum(np.ones(2))  # float64 to float32 would lose precision


def test_writable_parameters_need_plain_arrays(m):
    with pytest.raises(TypeError, match=r"written in place\), got list"):
        m.scale([1.0, 2.0], 2.0)
    with pytest.raises(TypeError, match="got an array of int64"):
        m.scale(np.array([1, 2]), 2.0)
    with pytest.raises(ValueError, match="2-dimensional"):
        m.scale(np.ones((2, 2)), 2.0)
    with pytest.raises(ValueError, match="not contiguous"):
        m.scale(np.ones(6)[::2], 2.0)
    ro = np.ones(3)
    ro.flags.writeable = False
    with pytest.raises(ValueError, match="read-only"):
        m.scale(ro, 2.0)
    assert m.dot(ro, ro) == 3.0, "a read-only array is fine for a read-only parameter"
    with pytest.raises(ValueError, match="one-element array; this one has 2"):
        m.bump(np.zeros(2), 1.0)
    with pytest.raises(TypeError, match="one-element array"):
        m.bump(1.0, 1.0)
    with pytest.raises(ValueError, match="1-D"):
        m.dot(np.ones((2, 2)), np.ones(2))


def test_runtime_errors_then_reuse(m):
    for _ in range(3):
        with pytest.raises(adc.RuntimeError, match=r"index out of bounds at t\.ad:\d+:\d+"):
            m.at(np.array([1, 2]), 2)
        with pytest.raises(adc.RuntimeError, match="division by zero"):
            m.div(1, 0)
        assert m.at(np.array([1, 2]), 1) == 2
    assert issubclass(adc.RuntimeError, RuntimeError)


def test_aliasing_arguments(m):
    x = np.arange(4.0)
    with pytest.raises(adc.RuntimeError, match="arguments alias: `a` and `d_a`"):
        m.ddot(x, x, np.ones(4), np.zeros(4), 1.0)
    with pytest.raises(adc.RuntimeError, match="arguments alias"):
        m.ddot(x[:2], np.zeros(2), np.ones(2), x[1:3], 1.0)
    # Disjoint parts of one array are fine.
    m.ddot(x[:2], x[2:], np.ones(2), np.zeros(2), 1.0)
    assert x.tolist() == [0.0, 1.0, 3.0, 4.0]


def test_threads(m):
    xs = [np.full(1000, float(i)) for i in range(16)]

    def work(i):
        out = []
        for _ in range(50):
            out.append(m.dot(xs[i], xs[i]))
            try:
                m.at(np.array([1]), 5)
            except adc.RuntimeError:
                pass
        return out

    with ThreadPoolExecutor(max_workers=8) as pool:
        results = list(pool.map(work, range(16)))
    for i, r in enumerate(results):
        assert r == [1000.0 * i * i] * 50


def test_gil_is_released(m):
    # While a long call runs in one thread, another thread runs Python.
    started, done = threading.Event(), []
    n = 50_000_000

    def work():
        started.set()
        done.append(m.sum_to(n))

    t = threading.Thread(target=work)
    t.start()
    started.wait()
    ticks = 0
    while not done:
        ticks += 1
    t.join()
    assert done == [n * (n - 1) / 2]
    assert ticks > 1000, ticks


def test_interrupts_between_calls(m):
    # Ctrl-C between calls (and during one: it is raised when the call
    # returns) leaves the module usable.
    x = np.ones(10)
    interrupted = 0
    # A shell starts background jobs with SIGINT ignored, and Python then
    # installs no handler of its own: install it, as an interactive run has.
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    for i in range(100):
        try:
            if i % 10 == 0:
                signal.raise_signal(signal.SIGINT)
            assert m.dot(x, x) == 10.0
        except KeyboardInterrupt:
            interrupted += 1
    signal.signal(signal.SIGINT, previous)
    assert interrupted == 10
    assert m.dot(x, x) == 10.0


def test_huge_local_arrays_are_runtime_errors():
    m = adc.compile("double big(int n) { double t[n]; return double(len(t)); }", "big.ad")
    for n in (1 << 40, 1 << 60):
        with pytest.raises(adc.RuntimeError, match="out of memory at big.ad:1:"):
            m.big(n)
    with pytest.raises(adc.RuntimeError, match="negative array length"):
        m.big(-1)
    assert m.big(3) == 3.0
