"""Modules, functions and gradients pickle (by source and the derivatives
asked for) and are rebuilt in worker processes: multiprocessing-style pools
and Dask give the same numbers as calls in this process."""

import multiprocessing
import pickle
from concurrent.futures import ProcessPoolExecutor

import numpy as np
import pytest

import adc


def test_pickle_round_trip(m):
    m.derivative("dot", "forward")
    m2 = pickle.loads(pickle.dumps(m))
    assert m2.source == m.source and m2.path == m.path
    assert m2.requests == m.requests
    a = np.array([1.0, 2.0])
    assert m2.dot(a, a) == 5.0
    f = pickle.loads(pickle.dumps(m.dot))
    assert f(a, a) == 5.0
    g = pickle.loads(pickle.dumps(m.grad("dot")))
    assert g(a, 2 * a)[1][0].tolist() == [2.0, 4.0]
    tdot = pickle.loads(pickle.dumps(m.derivative("dot", "forward")))
    assert tdot(a, a, a, a)[1] == 10.0


def inputs():
    rng = np.random.default_rng(7)
    return [rng.normal(size=(3, 50)) for _ in range(12)]


def reference(m):
    return [m.grad("norm3")(*xs) for xs in inputs()]


def same(results, expected):
    assert len(results) == len(expected)
    for (v, gs), (w, hs) in zip(results, expected):
        assert v == w
        for g, h in zip(gs, hs):
            np.testing.assert_array_equal(g, h)


def call_grad(grad, xs):
    return grad(*xs)


def test_process_pool(m):
    grad = m.grad("norm3")
    # Spawned workers: each unpickles the gradient, so compiles the source.
    spawn = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(max_workers=2, mp_context=spawn) as pool:
        results = list(pool.map(grad, *zip(*inputs())))
    same(results, reference(m))


def test_dask_local_cluster(m):
    distributed = pytest.importorskip("distributed")
    grad = m.grad("norm3")
    with distributed.LocalCluster(
        n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None
    ) as cluster, distributed.Client(cluster) as client:
        futures = client.map(call_grad, [grad] * 12, inputs(), pure=False)
        results = client.gather(futures)
        pids = set(client.run(lambda: __import__("os").getpid()).values())
    assert len(pids) == 2
    same(results, reference(m))
