"""Per-call overhead from Python: an adc function of three float64 arrays,
called through the package (`module.norm3(x, y, z)`) and through ctypes on
the same code compiled to an object file (`adc compile`) and linked into a
shared library with `cc -shared`; and, where numba is installed, the same
loop as a `numba.njit` function. A benchmark, not a test:

    python python/bench/overhead.py [path/to/adc]

Prints a Markdown table, one row per array length (docs/performance.md).
"""

import ctypes
import os
import subprocess
import sys
import tempfile
import timeit

import numpy as np

import adc

SOURCE = """
double norm3(double[] x, double[] y, double[] z) {
    double s = 0.0;
    for (int i = 0; i < len(x); i++) s += x[i] * x[i] + y[i] * y[i] + z[i] * z[i];
    return s;
}
"""


def shared_library(adc_binary, tmp):
    src = os.path.join(tmp, "norm3.ad")
    with open(src, "w") as f:
        f.write(SOURCE)
    obj, lib = os.path.join(tmp, "norm3.o"), os.path.join(tmp, "libnorm3.so")
    subprocess.run([adc_binary, "compile", src, "-o", obj], check=True)
    subprocess.run(["cc", "-shared", "-o", lib, obj, "-lm"], check=True)
    return ctypes.CDLL(lib)


def numba_norm3():
    try:
        import numba
    except ImportError:
        return None

    @numba.njit
    def norm3(x, y, z):
        s = 0.0
        for i in range(len(x)):
            s += x[i] * x[i] + y[i] * y[i] + z[i] * z[i]
        return s

    return norm3


def best(stmt, number):
    """The fastest of 7 repeats, in microseconds per call."""
    return min(timeit.repeat(stmt, number=number, repeat=7)) / number * 1e6


def main():
    adc_binary = sys.argv[1] if len(sys.argv) > 1 else "target/release/adc"
    m = adc.compile(SOURCE, "norm3.ad")
    f = m.norm3
    with tempfile.TemporaryDirectory() as tmp:
        lib = shared_library(adc_binary, tmp)
        c = lib.norm3
        p = ctypes.POINTER(ctypes.c_double)
        c.argtypes = [p, ctypes.c_int64, p, ctypes.c_int64, p, ctypes.c_int64]
        c.restype = ctypes.c_double
        nb = numba_norm3()
        print("| length | ctypes (µs) | ctypes, pointers cached (µs) | adc (µs) | adc - ctypes (µs) | numba (µs) |")
        print("|---:|---:|---:|---:|---:|---:|")
        for n in (1, 1000):
            x, y, z = (np.random.default_rng(i).normal(size=n) for i in range(3))
            assert f(x, y, z) == c(x.ctypes.data_as(p), n, y.ctypes.data_as(p), n, z.ctypes.data_as(p), n)
            number = 200_000 if n == 1 else 50_000
            t_ctypes = best(
                lambda: c(x.ctypes.data_as(p), len(x), y.ctypes.data_as(p), len(y), z.ctypes.data_as(p), len(z)),
                number,
            )
            px, py_, pz = (a.ctypes.data_as(p) for a in (x, y, z))
            t_cached = best(lambda: c(px, n, py_, n, pz, n), number)
            t_adc = best(lambda: f(x, y, z), number)
            t_numba = "-"
            if nb is not None:
                assert abs(nb(x, y, z) - f(x, y, z)) <= 1e-12 * abs(f(x, y, z))
                t_numba = f"{best(lambda: nb(x, y, z), number):.2f}"
            print(
                f"| {n} | {t_ctypes:.2f} | {t_cached:.2f} | {t_adc:.2f} | {t_adc - t_ctypes:+.2f} | {t_numba} |"
            )


if __name__ == "__main__":
    main()
