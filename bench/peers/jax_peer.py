#!/usr/bin/env python3
"""jax.jit peer of bench/peers: the five training steps in plain JAX (no
flax or optax, so only jax[cpu] is needed), driven over stdin/stdout (see
peer_common.py):

    jax_peer.py

Each step is one jitted function: forward, gradient (jax.value_and_grad)
and the optimizer update, with the parameters and optimizer state donated.
A step returns when jax.block_until_ready has seen every output. The
models, initializations and optimizers follow PyTorch's (and so
bench/peers_step.c): Linear/Conv weights and biases U(-1/sqrt(fan_in),
1/sqrt(fan_in)), embeddings N(0, 1), layer norm eps 1e-5, exact GELU,
PyTorch's Adam/AdamW with bias correction. Dropout draws from a key carried
in the state and split inside the step.
"""
import math
import os
import sys

import jax
import jax.numpy as jnp
from jax import lax

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import peer_common as pc  # noqa: E402

# ---- parameters -----------------------------------------------------------


class Init:
    def __init__(self, seed):
        self.key = jax.random.PRNGKey(seed)

    def next(self):
        self.key, sub = jax.random.split(self.key)
        return sub

    def uniform(self, shape, fan_in):
        bound = 1.0 / math.sqrt(fan_in)
        return jax.random.uniform(self.next(), shape, jnp.float32, -bound, bound)

    def linear(self, n_in, n_out, bias=True):
        p = {"w": self.uniform((n_out, n_in), n_in)}
        if bias:
            p["b"] = self.uniform((n_out,), n_in)
        return p

    def conv(self, c_in, c_out, k):
        fan_in = c_in * k * k
        return {"w": self.uniform((c_out, c_in, k, k), fan_in), "b": self.uniform((c_out,), fan_in)}

    def layer_norm(self, d):
        return {"g": jnp.ones((d,), jnp.float32), "b": jnp.zeros((d,), jnp.float32)}

    def embedding(self, n, d):
        return jax.random.normal(self.next(), (n, d), jnp.float32)


# ---- layers -----------------------------------------------------------------


def linear(p, x):
    y = x @ p["w"].T
    return y + p["b"] if "b" in p else y


def layer_norm(p, x):
    mean = x.mean(-1, keepdims=True)
    var = ((x - mean) ** 2).mean(-1, keepdims=True)
    return (x - mean) * lax.rsqrt(var + 1e-5) * p["g"] + p["b"]


def attention(p, x, heads, causal):
    b, t, d = x.shape
    qkv = linear(p["qkv"], x)
    q, k, v = (qkv[:, :, i * d:(i + 1) * d].reshape(b, t, heads, d // heads).transpose(0, 2, 1, 3)
               for i in range(3))
    scores = (q @ k.transpose(0, 1, 3, 2)) * (1.0 / math.sqrt(d // heads))
    if causal:
        mask = jnp.triu(jnp.ones((t, t), bool), 1)
        scores = jnp.where(mask, -jnp.inf, scores)
    y = (jax.nn.softmax(scores, axis=-1) @ v).transpose(0, 2, 1, 3).reshape(b, t, d)
    return linear(p["out"], y)


def block_init(init, d, ffn):
    return {"ln1": init.layer_norm(d), "attn": {"qkv": init.linear(d, 3 * d), "out": init.linear(d, d)},
            "ln2": init.layer_norm(d), "fc1": init.linear(d, ffn), "fc2": init.linear(ffn, d)}


def block(p, x, heads, causal):
    h = x + attention(p["attn"], layer_norm(p["ln1"], x), heads, causal)
    return h + linear(p["fc2"], jax.nn.gelu(linear(p["fc1"], layer_norm(p["ln2"], h)), approximate=False))


def cross_entropy(logits, y):
    logp = jax.nn.log_softmax(logits, axis=-1)
    return -jnp.take_along_axis(logp, y[:, None], axis=1).mean()


def dropout(key, x, p):
    keep = jax.random.bernoulli(key, 1.0 - p, x.shape)
    return jnp.where(keep, x / (1.0 - p), 0.0)


def conv(p, x):
    y = lax.conv_general_dilated(x, p["w"], (1, 1), "VALID", dimension_numbers=("NCHW", "OIHW", "NCHW"))
    return y + p["b"][None, :, None, None]


# ---- workloads: (params, inputs, targets, loss(params, x, y, key)) ------------


def mlp_model(init):
    params = [init.linear(784, 512), init.linear(512, 512), init.linear(512, 10)]

    def loss(p, x, y, key):
        h = jax.nn.relu(linear(p[0], x))
        return cross_entropy(linear(p[2], jax.nn.relu(linear(p[1], h))), y)
    return params, loss


def transformer_model(init):
    def loss(p, x, y, key):
        out = block(p, x, 4, False)
        return (out * out).mean()
    return block_init(init, 256, 1024), loss


def gpt_model(init):
    params = {"tok": init.embedding(pc.GPT_VOCAB, pc.GPT_DIM), "pos": init.embedding(pc.GPT_CTX, pc.GPT_DIM),
              "blocks": [block_init(init, pc.GPT_DIM, pc.GPT_FF) for _ in range(pc.GPT_LAYERS)],
              "ln_f": init.layer_norm(pc.GPT_DIM), "head": init.linear(pc.GPT_DIM, pc.GPT_VOCAB, bias=False)}

    def loss(p, x, y, key):
        h = p["tok"][x] + p["pos"][jnp.arange(x.shape[1])]
        for bp in p["blocks"]:
            h = block(bp, h, pc.GPT_HEADS, True)
        logits = linear(p["head"], layer_norm(p["ln_f"], h))
        return cross_entropy(logits.reshape(-1, pc.GPT_VOCAB), y)
    return params, loss


def mnist_model(init):
    params = {"conv1": init.conv(1, 32, 3), "conv2": init.conv(32, 64, 3), "fc1": init.linear(9216, 128),
              "fc2": init.linear(128, 10)}

    def loss(p, x, y, key):
        k1, k2 = jax.random.split(key)
        h = jax.nn.relu(conv(p["conv2"], jax.nn.relu(conv(p["conv1"], x))))
        h = lax.reduce_window(h, -jnp.inf, lax.max, (1, 1, 2, 2), (1, 1, 2, 2), "VALID")
        h = dropout(k1, h, 0.25).reshape(x.shape[0], -1)
        h = dropout(k2, jax.nn.relu(linear(p["fc1"], h)), 0.5)
        logp = jax.nn.log_softmax(linear(p["fc2"], h), axis=1)
        return -jnp.take_along_axis(logp, y[:, None], axis=1).mean()
    return params, loss


def inputs(workload, key):
    kx, ky = jax.random.split(key)
    if workload in ("mlp_sgd", "mlp_adam"):
        return jax.random.normal(kx, (128, 784)), jax.random.randint(ky, (128,), 0, 10)
    if workload == "transformer":
        return jax.random.normal(kx, (16, 128, 256)), jnp.zeros((), jnp.int32)
    if workload == "gpt":
        tokens = jax.random.randint(kx, (pc.GPT_BATCH, pc.GPT_CTX + 1), 0, pc.GPT_VOCAB)
        return tokens[:, :-1], tokens[:, 1:].reshape(-1)
    return jax.random.normal(kx, (64, 1, 28, 28)), jax.random.randint(ky, (64,), 0, 10)


# ---- optimizers (PyTorch's formulations) ----------------------------------------


def sgd_update(lr):
    def update(params, grads, state):
        return jax.tree_util.tree_map(lambda p, g: p - lr * g, params, grads), state
    return (lambda params: {}), update


def adam_update(lr, weight_decay=0.0, b1=0.9, b2=0.999, eps=1e-8):
    """Adam (weight_decay 0) or AdamW (decoupled weight decay)."""
    def init(params):
        zeros = lambda p: jnp.zeros_like(p)  # noqa: E731
        return {"m": jax.tree_util.tree_map(zeros, params), "v": jax.tree_util.tree_map(zeros, params),
                "t": jnp.zeros((), jnp.float32)}

    def update(params, grads, state):
        t = state["t"] + 1
        m = jax.tree_util.tree_map(lambda m, g: b1 * m + (1 - b1) * g, state["m"], grads)
        v = jax.tree_util.tree_map(lambda v, g: b2 * v + (1 - b2) * g * g, state["v"], grads)
        c1, c2 = 1 - b1 ** t, 1 - b2 ** t

        def apply(p, m, v):
            p = p * (1 - lr * weight_decay) if weight_decay else p
            return p - lr * (m / c1) / (jnp.sqrt(v / c2) + eps)
        return jax.tree_util.tree_map(apply, params, m, v), {"m": m, "v": v, "t": t}
    return init, update


def make_step(workload):
    init = Init(0)
    model = {"mlp_sgd": mlp_model, "mlp_adam": mlp_model, "transformer": transformer_model, "gpt": gpt_model,
             "mnist_cnn": mnist_model}[workload]
    params, loss = model(init)
    x, y = inputs(workload, init.next())
    if workload == "mlp_sgd":
        opt_init, opt_update = sgd_update(0.01)
    elif workload == "gpt":
        opt_init, opt_update = adam_update(1e-3, weight_decay=0.01)
    else:
        opt_init, opt_update = adam_update(1e-3)

    def train_step(params, opt_state, key, x, y):
        key, sub = jax.random.split(key)
        value, grads = jax.value_and_grad(loss)(params, x, y, sub)
        params, opt_state = opt_update(params, grads, opt_state)
        return params, opt_state, key, value

    jitted = jax.jit(train_step, donate_argnums=(0, 1, 2))
    state = [params, opt_init(params), init.next()]

    def step():
        p, s, k, value = jitted(state[0], state[1], state[2], x, y)
        jax.block_until_ready((p, s, k, value))
        state[0], state[1], state[2] = p, s, k
    return step


def main():
    info = {"jax": jax.__version__, "python": sys.version.split()[0], "backend": jax.default_backend(),
            "devices": len(jax.devices())}
    pc.serve("jax", make_step, info)


if __name__ == "__main__":
    main()
