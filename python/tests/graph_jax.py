"""A pase-graph as a JAX program, op by op, for the checks of test_jax.py.

The program only has to be one function of the graph that a sharded and an
unsharded run compute alike; where the graph leaves an op's arithmetic open
(an `elementwise` with its `pointwise` count), it picks a stand-in: one input
→ tanh, two inputs → their sum, or SiLU(a)·b for a layer named `…/act`; an
einsum with more than one pointwise op per element → tanh after its bias; a
conv2d or fc with any → tanh; pool2d → max; batchnorm → normalised per
channel over the batch and the image, without scale.
Each layer's output can be constrained to a sharding, as a framework that
applies the plan would. Parameters are held as the plan's weights() say: in
their checkpoint's shape where the graph declares them in more dimensions.
"""
import jax
import jax.numpy as jnp
import numpy as np


def weight_shapes(plan):
    return {name: layout.shape for name, layout in plan.weights().items()}


def random_params(plan, seed=0):
    rng = np.random.default_rng(seed)
    return {name: jnp.asarray(rng.standard_normal(shape) * 0.05, jnp.float32)
            for name, shape in sorted(weight_shapes(plan).items())}


def random_inputs(graph, vocab=None, seed=1):
    """Token ids for `input_ids` and positions for `position_ids`, where the
    graph has them; an `image` of normal values for a CNN."""
    rng = np.random.default_rng(seed)
    if "image" in graph["tensors"]:
        return {"image": jnp.asarray(rng.standard_normal(graph["tensors"]["image"]), jnp.float32)}
    vocab = vocab or graph["nodes"][0]["vocab"]
    out = {"input_ids": jnp.asarray(rng.integers(0, vocab, graph["tensors"]["input_ids"]), jnp.int32)}
    if "position_ids" in graph["tensors"]:
        shape = graph["tensors"]["position_ids"]
        out["position_ids"] = jnp.asarray(np.broadcast_to(np.arange(shape[-1]), shape), jnp.int32)
    return out


def _weight(node, params, name, reshards):
    # A tied weight read in another layout than it is held in: the reshard the plan says.
    w = params[name]
    if reshards is not None and name in reshards.get(node["name"], {}):
        w = jax.lax.with_sharding_constraint(w, reshards[node["name"]][name])
    return w


def _pointwise_weights(node, params):
    # Held as the checkpoint holds them (GPT-2's c_attn bias [3d]), read in the graph's shape.
    return [params[w["name"]].reshape(w["shape"]) for w in node.get("pointwise_weights", [])]


def _pair(value, default):
    value = default if value is None else value
    return (value, value) if isinstance(value, int) else tuple(value)


def _conv2d(node, x, w):
    ph, pw = _pair(node.get("padding"), 0)
    y = jax.lax.conv_general_dilated(x, w, _pair(node.get("stride"), 1), [(ph, ph), (pw, pw)],
                                     rhs_dilation=_pair(node.get("dilation"), 1),
                                     dimension_numbers=("NCHW", "OIHW", "NCHW"),
                                     feature_group_count=node.get("groups", 1))
    return jnp.tanh(y) if node.get("pointwise", 0) > 0 else y


def _max_pool(node, x):
    wh, ww = _pair(node.get("window"), None)
    sh, sw = _pair(node.get("stride"), 1)
    ph, pw = _pair(node.get("padding"), 0)
    return jax.lax.reduce_window(x, -jnp.inf, jax.lax.max, (1, 1, wh, ww), (1, 1, sh, sw),
                                 [(0, 0), (0, 0), (ph, ph), (pw, pw)])


def _batch_norm(x):
    # Statistics per channel (axis 1) over the batch and the image, as BatchNorm2d trains.
    axes = (0, 2, 3) if x.ndim == 4 else (0,)
    mean = jnp.mean(x, axes, keepdims=True)
    return (x - mean) * jax.lax.rsqrt(jnp.mean((x - mean) ** 2, axes, keepdims=True) + 1e-5)


def _cnn_layer(node, ins, params, reshards):
    """conv2d, pool2d (max), batchnorm, reshape, reduce_mean, concat; None for other ops."""
    op = node["op"]
    if op == "conv2d":
        return [_conv2d(node, ins[0], _weight(node, params, node["weights"][0], reshards))]
    if op == "pool2d":
        return [_max_pool(node, ins[0])]
    if op == "batchnorm":
        return [_batch_norm(ins[0])]
    if op == "reshape":
        return [jnp.reshape(ins[0], node["shape"])]
    if op == "reduce_mean":
        return [jnp.mean(ins[0], tuple(node["axes"]), keepdims=node.get("keepdims", False))]
    if op == "concat":
        return [jnp.concatenate(ins, node["axis"])]
    return None


def _layer(node, ins, params, tokens, reshards):
    cnn = _cnn_layer(node, ins, params, reshards)
    if cnn is not None:
        return cnn
    op = node["op"]
    if op == "embedding":
        return [_weight(node, params, node["weights"][0], reshards)[ins[0]]]
    if op in ("rmsnorm", "norm"):
        x = ins[0]
        scale = _pointwise_weights(node, params)
        if op == "norm":
            x = x - jnp.mean(x, -1, keepdims=True)
        y = x * jax.lax.rsqrt(jnp.mean(x * x, -1, keepdims=True) + 1e-6) * scale[0]
        return [y + scale[1] if len(scale) > 1 else y]
    if op == "einsum":
        y = jnp.einsum(node["equation"], *ins)
        for bias in _pointwise_weights(node, params):
            y = y + bias
        return [jnp.tanh(y) if node.get("pointwise", 0) > 1 else y]
    if op == "unstack":
        return [jnp.take(ins[0], i, axis=node["axis"]) for i in range(ins[0].shape[node["axis"]])]
    if op == "elementwise":
        if len(ins) == 1:
            return [jnp.tanh(ins[0])]
        if node["name"].endswith("/act"):
            return [jax.nn.silu(ins[0]) * ins[1]]
        return [ins[0] + ins[1]]
    if op == "softmax":
        return [jax.nn.softmax(ins[0], axis=node["axis"])]
    if op == "fc":  # the Hugging Face layout: weight [units, inputs]
        y = jnp.einsum("...k,nk->...n", ins[0], _weight(node, params, node["weights"][0], reshards))
        return [jnp.tanh(y) if node.get("pointwise", 0) > 0 else y]
    if op == "softmax_xent":
        # A language model's next-token loss against the input tokens themselves;
        # a classifier's against class (example index mod classes).
        log_p = jax.nn.log_softmax(ins[0], -1)
        if tokens is None:
            tokens = jnp.arange(ins[0].shape[0]) % ins[0].shape[-1]
        return [-jnp.mean(jnp.take_along_axis(log_p, tokens[..., None], -1))]
    raise NotImplementedError(f"graph_jax: op '{op}' of layer '{node['name']}'")


def run(graph, params, inputs, shardings=None):
    """The graph's last layer's value. With `shardings` (pase.JaxShardings),
    each layer's outputs are constrained to the plan's layouts, and a tied
    weight to the layout its reader needs."""
    env = dict(inputs)
    tokens = inputs.get("input_ids")
    reshards = shardings.reshards if shardings is not None else None
    y = None
    for node in graph["nodes"]:
        # The layer's name scopes its ops, so that the compiled HLO's metadata
        # says which layer each collective serves (hlo_collectives.py).
        with jax.named_scope(node["name"]):
            # A parameter is held in its checkpoint's shape (q_proj.weight [heads·hd, d]) and
            # read in the graph's ([kv heads, group, hd, d]): a reshape, as a model's forward does.
            ins = [env[t] if t in env else params[t].reshape(graph["tensors"][t]) for t in node["inputs"]]
            outs = _layer(node, ins, params, tokens, reshards)
            for k, y in enumerate(outs):
                if shardings is not None and y.ndim:
                    y = jax.lax.with_sharding_constraint(y, shardings.outputs[node["name"]][k])
                env[node["name"] if len(outs) == 1 else f"{node['name']}:{k}"] = y
    return y
