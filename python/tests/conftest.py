"""Shared sources for the tests of the Python package (python/tests)."""

import numpy as np
import pytest

import adc

SOURCE = """
double dot(double[] a, double[] b) {
    double s = 0.0;
    for (int i = 0; i < len(a); i++) s += a[i] * b[i];
    return s;
}
double norm3(double[] x, double[] y, double[] z) {
    double s = 0.0;
    for (int i = 0; i < len(x); i++) s += x[i] * x[i] + y[i] * y[i] + z[i] * z[i];
    return s;
}
void scale(inout double[] xs, double k) {
    for (int i = 0; i < len(xs); i++) xs[i] *= k;
}
void iota(out int[] xs) { for (int i = 0; i < len(xs); i++) xs[i] = i; }
float fsum(float[] xs) {
    float s = 0.0;
    for (int i = 0; i < len(xs); i++) s += xs[i];
    return s;
}
int count(bool[] bs) {
    int n = 0;
    for (int i = 0; i < len(bs); i++) if (bs[i]) n++;
    return n;
}
(double, int) first(double[] xs) { return (xs[0], len(xs)); }
int at(int[] xs, int i) { return xs[i]; }
int div(int a, int b) { return a / b; }
void bump(inout double total, double by) { total += by; }
bool positive(double x) { return x > 0.0; }
int pick(bool b) { return b ? 1 : 0; }
static double twice(double x) { return 2.0 * x; }
double poly(double x, int n, double[] c, inout double acc) {
    double s = 0.0;
    for (int i = 0; i < len(c); i++) s += c[i] * pow(x, double(i));
    acc = acc * x;
    return s * double(n);
}
[autodiff_reverse(ddot, Duplicated, Duplicated, Active)]
double dot2(double[] a, double[] b) { return dot(a, b); }
double sum_to(int n) {
    double s = 0.0;
    for (int i = 0; i < n; i++) s += double(i);
    return s;
}
"""


@pytest.fixture(scope="session")
def m():
    return adc.compile(SOURCE, "t.ad")


def finite_difference(f, args, i, h=1e-6):
    """The central difference of `f` in argument `i` (a float or an array)."""
    x = args[i]
    if isinstance(x, float):
        up = list(args)
        down = list(args)
        up[i], down[i] = x + h, x - h
        return (f(*up) - f(*down)) / (2 * h)
    g = np.zeros_like(x)
    for k in range(len(x)):
        up = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
        down = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
        up[i][k] += h
        down[i][k] -= h
        g[k] = (f(*up) - f(*down)) / (2 * h)
    return g
