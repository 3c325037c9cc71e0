"""GradBench's lstm objective's gradient from JAX: adc's (gradbench/evals/lstm.ad
through `adc.jax.function`) against `jax.grad` of the same model written in
`jax.numpy` (a `lax.scan` over the characters), both under `jax.jit`, on
GradBench's sizes (l layers, c characters, b = 14). A benchmark, not a test:

    python python/bench/lstm_jax.py

Prints a Markdown table (docs/performance.md).
"""

import os
import time

import jax
import jax.numpy as jnp
import numpy as np

jax.config.update("jax_enable_x64", True)

import adc  # noqa: E402
import adc.jax  # noqa: E402

ROOT = os.path.join(os.path.dirname(__file__), "..", "..")


def lstm_jnp(main, extra, state0, sequence, l, b):
    c = sequence.shape[0] // b
    seq = sequence.reshape(c, b)
    weights = main.reshape(l, 8, b)

    def layer(p, inp, h, cell):
        forget = jax.nn.sigmoid(inp * p[0] + p[4])
        ingate = jax.nn.sigmoid(h * p[1] + p[5])
        outgate = jax.nn.sigmoid(inp * p[2] + p[6])
        change = jnp.tanh(h * p[3] + p[7])
        cell = cell * forget + ingate * change
        return outgate * jnp.tanh(cell), cell

    def step(state, t):
        inp = seq[t] * extra[:b]
        layers = []
        for k in range(l):
            h, cell = layer(weights[k], inp, state[k, 0], state[k, 1])
            layers.append(jnp.stack([h, cell]))
            inp = h
        state = jnp.stack(layers)
        y = state[l - 1, 0] * extra[b : 2 * b] + extra[2 * b :]
        lse = jnp.log(jnp.sum(jnp.exp(y)) + 2.0)
        return state, jnp.sum(seq[t + 1] * (y - lse))

    _, totals = jax.lax.scan(step, state0.reshape(l, 2, b), jnp.arange(c - 1))
    return -jnp.sum(totals) / ((c - 1) * b)


def best(f, repeat=7):
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        jax.block_until_ready(f())
        times.append(time.perf_counter() - t)
    return min(times)


def main():
    with open(os.path.join(ROOT, "gradbench", "evals", "lstm.ad")) as f:
        m = adc.compile(f.read(), "lstm.ad")
    objective = adc.jax.function(m, "lstm_objective")
    print("| l, c | adc via adc.jax (ms) | jax.numpy, jax.grad (ms) | ratio | adc via m.grad (ms) |")
    print("|---|---:|---:|---:|---:|")
    b = 14
    for l, c in ((2, 1024), (4, 1024), (2, 4096), (4, 4096)):
        rng = np.random.default_rng(0)
        main_, extra = rng.normal(size=8 * b * l), rng.normal(size=3 * b)
        state0, sequence = rng.normal(size=2 * b * l), rng.normal(size=c * b)
        g_adc = jax.jit(jax.grad(objective, argnums=(0, 1)))
        g_jax = jax.jit(jax.grad(lambda p, e, s, q: lstm_jnp(p, e, s, q, l, b), argnums=(0, 1)))
        args = (main_, extra, state0, sequence)
        a, j = g_adc(*args), g_jax(*args)
        for x, y in zip(a, j):
            np.testing.assert_allclose(x, y, rtol=1e-9, atol=1e-12)
        grad = m.grad("lstm_objective")
        t_adc = best(lambda: g_adc(*args))
        t_jax = best(lambda: g_jax(*args))
        t_direct = best(lambda: grad(*args)[1][0])
        print(
            f"| {l}, {c} | {t_adc * 1e3:.2f} | {t_jax * 1e3:.2f} | {t_jax / t_adc:.1f}x | {t_direct * 1e3:.2f} |"
        )


if __name__ == "__main__":
    main()
