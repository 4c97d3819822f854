"""A pase-graph as a JAX program, op by op, for the checks of test_jax.py.

The program only has to be one function of the graph that a sharded and an
unsharded run compute alike; where the graph leaves an op's arithmetic open
(an `elementwise` with its `pointwise` count), it picks a stand-in: one input
→ tanh, two inputs → their sum, or SiLU(a)·b for a layer named `…/act`; an
einsum with more than one pointwise op per element → tanh after its bias.
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


def random_inputs(graph, vocab, seed=1):
    """Token ids for `input_ids` and positions for `position_ids`, where the graph has them."""
    rng = np.random.default_rng(seed)
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


def _layer(node, ins, params, tokens, reshards):
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
        return [jnp.einsum("...k,nk->...n", ins[0], _weight(node, params, node["weights"][0], reshards))]
    if op == "softmax_xent":  # next-token loss against the input tokens themselves
        log_p = jax.nn.log_softmax(ins[0], -1)
        return [-jnp.mean(jnp.take_along_axis(log_p, tokens[..., None], -1))]
    raise NotImplementedError(f"graph_jax: op '{op}' of layer '{node['name']}'")


def run(graph, params, inputs, shardings=None):
    """The graph's last layer's value. With `shardings` (pase.JaxShardings),
    each layer's outputs are constrained to the plan's layouts, and a tied
    weight to the layout its reader needs."""
    env = dict(inputs)
    tokens = inputs["input_ids"]
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
