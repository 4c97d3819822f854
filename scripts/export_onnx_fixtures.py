#!/usr/bin/env python3
"""Exports the ONNX fixtures of data/onnx/ (run on demand; CI only reads them).

Uses Debian's python3-torch and python3-torchvision, so run it with the
system interpreter from the repository root:

    /usr/bin/python3 scripts/export_onnx_fixtures.py [--out data/onnx] [NAME ...]

Every model is exported at opset 14, in training mode, without weights
(export_params=False), so each file holds only the graph; the tiny
parameter_layouts model alone keeps its values (see its docstring). Image
models run at batch 128 (ConvNeXt-T and Swin-T at 2, see models()), token
models at batch 16 and sequence 128. Stochastic depth is off (its Bernoulli
noise does not trace in training mode); dropout stays. Large
constants that the exporter still embeds are replaced by empty
ConstantOfShape-free placeholders (see strip_big_constants) to keep the
files small; pase only needs their shapes. The models in SHORT_NAMES also
get short intermediate value names (see shorten_names): pase imports them
to the same graph.
"""
import argparse
import math
import os
import sys

import onnx
import torch
import torchvision
from onnx import numpy_helper

BATCH = 128
OPSET = 14
BIG_CONSTANT_BYTES = 4096
# Graph output names where a model returns more than one tensor.
OUTPUT_NAMES = {"rnn_encoder": ["output", "hidden"]}
# Fixtures whose intermediate names are shortened (see shorten_names).
SHORT_NAMES = {"swin_t", "rnn_encoder"}


class Encoder(torch.nn.Module):
    """A 6-layer nn.TransformerEncoder: d 512, 8 heads, ff 2048, seq 128."""

    def __init__(self):
        super().__init__()
        layer = torch.nn.TransformerEncoderLayer(d_model=512, nhead=8, dim_feedforward=2048, batch_first=True)
        self.encoder = torch.nn.TransformerEncoder(layer, num_layers=6, enable_nested_tensor=False)

    def forward(self, x):
        return self.encoder(x)


class ParameterLayouts(torch.nn.Module):
    """Parameters held or read in every layout the importer names: a bias on
    the graph input, a matrix held [K, N] (h @ W, TensorFlow's layout), a
    Linear (its [N, K] weight through a Transpose), a transposed parameter on
    an einsum's left (W.t() @ h), a Gemm with transB = 0 (addmm), and buffers
    that are neither data nor weights: BatchNorm's running statistics and a
    [seq, dim] mask. Exported with its values (a few KB): without them the
    left operand of a MatMul and the mask would be graph inputs taken for data."""

    def __init__(self):
        super().__init__()
        self.shift = torch.nn.Parameter(torch.zeros(16))
        self.kn = torch.nn.Parameter(torch.zeros(16, 24))
        self.linear = torch.nn.Linear(24, 16)
        self.mix = torch.nn.Parameter(torch.zeros(4, 6))
        self.bn = torch.nn.BatchNorm1d(6)
        self.head = torch.nn.Parameter(torch.zeros(96, 10))
        self.head_bias = torch.nn.Parameter(torch.zeros(10))
        self.register_buffer("mask", torch.ones(4, 16))

    def forward(self, x):  # x: [batch, 4, 16]
        h = (x + self.shift) * self.mask
        h = torch.relu(h @ self.kn)
        h = self.linear(h)
        h = self.bn(torch.matmul(self.mix.t(), h))  # [batch, 6, 16]
        return torch.addmm(self.head_bias, h.flatten(1), self.head)


# --- today's architectures (issue "Read today's models"): small configurations
# with the real op mix; token models read int64 ids [batch, seq] ---------------

VOCAB = 1024
SEQ = 128
LM_BATCH = 16


def causal_attention(q, k, v, mask):
    """Scaled dot-product attention with a [1, 1, S, S] 0/1 causal mask buffer
    applied by masked_fill (Equal + Where), as GPT-2 and LLaMA code does."""
    att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(k.size(-1)))
    s = q.size(-2)
    att = att.masked_fill(mask[:, :, :s, :s] == 0, float("-inf"))
    return torch.softmax(att, dim=-1) @ v


class Gpt2Block(torch.nn.Module):
    def __init__(self, d, heads):
        super().__init__()
        self.heads = heads
        self.ln_1 = torch.nn.LayerNorm(d)
        self.c_attn = torch.nn.Linear(d, 3 * d)
        self.c_proj = torch.nn.Linear(d, d)
        self.ln_2 = torch.nn.LayerNorm(d)
        self.c_fc = torch.nn.Linear(d, 4 * d)
        self.mlp_proj = torch.nn.Linear(4 * d, d)
        self.drop = torch.nn.Dropout(0.1)
        self.register_buffer("bias", torch.tril(torch.ones(SEQ, SEQ)).view(1, 1, SEQ, SEQ))

    def forward(self, x):
        b, s, d = x.shape
        q, k, v = self.c_attn(self.ln_1(x)).split(d, dim=2)
        q, k, v = (t.view(b, s, self.heads, d // self.heads).transpose(1, 2) for t in (q, k, v))
        y = causal_attention(q, k, v, self.bias).transpose(1, 2).contiguous().view(b, s, d)
        x = x + self.drop(self.c_proj(y))
        h = self.c_fc(self.ln_2(x))
        h = 0.5 * h * (1.0 + torch.tanh(math.sqrt(2.0 / math.pi) * (h + 0.044715 * torch.pow(h, 3.0))))  # GPT-2's gelu_new
        return x + self.drop(self.mlp_proj(h))


class Gpt2(torch.nn.Module):
    """A GPT-2-style decoder: token and learned position embeddings, pre-LN
    blocks with a fused qkv Linear, a causal-mask buffer, gelu_new, and an LM
    head tied to the token embedding. d 256, 4 heads, 2 layers."""

    def __init__(self, d=256, heads=4, layers=2):
        super().__init__()
        self.wte = torch.nn.Embedding(VOCAB, d)
        self.wpe = torch.nn.Embedding(SEQ, d)
        self.h = torch.nn.ModuleList([Gpt2Block(d, heads) for _ in range(layers)])
        self.ln_f = torch.nn.LayerNorm(d)

    def forward(self, ids):
        pos = torch.arange(0, ids.size(1), dtype=torch.long).unsqueeze(0)
        x = self.wte(ids) + self.wpe(pos)
        for block in self.h:
            x = block(x)
        return self.ln_f(x) @ self.wte.weight.t()


class RmsNorm(torch.nn.Module):
    def __init__(self, d, eps=1e-6):
        super().__init__()
        self.eps = eps
        self.weight = torch.nn.Parameter(torch.ones(d))

    def forward(self, x):
        return self.weight * (x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps))


def rotate_half(x):
    x1, x2 = x[..., : x.shape[-1] // 2], x[..., x.shape[-1] // 2 :]
    return torch.cat((-x2, x1), dim=-1)


class LlamaBlock(torch.nn.Module):
    def __init__(self, d, heads, kv_heads, ff):
        super().__init__()
        self.heads, self.kv_heads, self.hd = heads, kv_heads, d // heads
        self.input_layernorm = RmsNorm(d)
        self.q_proj = torch.nn.Linear(d, d, bias=False)
        self.k_proj = torch.nn.Linear(d, kv_heads * self.hd, bias=False)
        self.v_proj = torch.nn.Linear(d, kv_heads * self.hd, bias=False)
        self.o_proj = torch.nn.Linear(d, d, bias=False)
        self.post_attention_layernorm = RmsNorm(d)
        self.gate_proj = torch.nn.Linear(d, ff, bias=False)
        self.up_proj = torch.nn.Linear(d, ff, bias=False)
        self.down_proj = torch.nn.Linear(ff, d, bias=False)

    def forward(self, x, cos, sin, mask):
        b, s, d = x.shape
        h = self.input_layernorm(x)
        q = self.q_proj(h).view(b, s, self.heads, self.hd).transpose(1, 2)
        k = self.k_proj(h).view(b, s, self.kv_heads, self.hd).transpose(1, 2)
        v = self.v_proj(h).view(b, s, self.kv_heads, self.hd).transpose(1, 2)
        q = q * cos + rotate_half(q) * sin
        k = k * cos + rotate_half(k) * sin
        rep = self.heads // self.kv_heads  # grouped-query attention: HF's repeat_kv (expand + reshape)
        k = k[:, :, None, :, :].expand(b, self.kv_heads, rep, s, self.hd).reshape(b, self.heads, s, self.hd)
        v = v[:, :, None, :, :].expand(b, self.kv_heads, rep, s, self.hd).reshape(b, self.heads, s, self.hd)
        y = causal_attention(q, k, v, mask).transpose(1, 2).reshape(b, s, d)
        x = x + self.o_proj(y)
        h = self.post_attention_layernorm(x)
        return x + self.down_proj(torch.nn.functional.silu(self.gate_proj(h)) * self.up_proj(h))


class Llama(torch.nn.Module):
    """A LLaMA-style decoder: RMSNorm, SwiGLU, rotary embeddings from cos/sin
    buffers, grouped-query attention (8 heads, 2 kv heads), untied head.
    d 256, ff 688, 2 layers."""

    def __init__(self, d=256, heads=8, kv_heads=2, ff=688, layers=2):
        super().__init__()
        self.embed_tokens = torch.nn.Embedding(VOCAB, d)
        self.layers = torch.nn.ModuleList([LlamaBlock(d, heads, kv_heads, ff) for _ in range(layers)])
        self.norm = RmsNorm(d)
        self.lm_head = torch.nn.Linear(d, VOCAB, bias=False)
        hd = d // heads
        inv_freq = 1.0 / (10000 ** (torch.arange(0, hd, 2).float() / hd))
        freqs = torch.outer(torch.arange(SEQ).float(), inv_freq)
        emb = torch.cat((freqs, freqs), dim=-1)
        self.register_buffer("cos_cached", emb.cos())
        self.register_buffer("sin_cached", emb.sin())
        self.register_buffer("causal_mask", torch.tril(torch.ones(SEQ, SEQ)).view(1, 1, SEQ, SEQ))

    def forward(self, ids):
        s = ids.size(1)
        cos, sin = self.cos_cached[:s], self.sin_cached[:s]
        x = self.embed_tokens(ids)
        for layer in self.layers:
            x = layer(x, cos, sin, self.causal_mask)
        return self.lm_head(self.norm(x))


class Seq2Seq(torch.nn.Module):
    """A T5-sized nn.Transformer encoder-decoder (2 + 2 layers, d 256, 4 heads,
    ff 1024, batch_first) with the causal target mask built in forward."""

    def __init__(self, d=256):
        super().__init__()
        self.transformer = torch.nn.Transformer(d_model=d, nhead=4, num_encoder_layers=2, num_decoder_layers=2,
                                                dim_feedforward=1024, batch_first=True)
        self.head = torch.nn.Linear(d, VOCAB)

    def forward(self, src, tgt):
        mask = self.transformer.generate_square_subsequent_mask(tgt.size(1))
        return self.head(self.transformer(src, tgt, tgt_mask=mask))


class Moe(torch.nn.Module):
    """A capacity-based top-2 mixture-of-experts FFN layer (GShard, fairseq's
    top2gating) after an attention block: 8 experts, d 256, ff 512, over the
    2048 tokens of the batch. The router's softmax picks each token's top-1
    expert (ArgMax, OneHot) and its top-2 among the rest; CumSum gives each
    token its position in its expert's queue, and a token past the capacity
    (2 * tokens / experts = 512) is dropped (Less). The dispatch "sec,sm->ecm"
    gathers each expert's c slots, the experts are batched GEMMs over e on
    [e, c, m] ("ecm,emh->ech", relu, "ech,ehm->ecm"), and the combine
    "sec,ecm->sm" weighs the results back into tokens: the experts compute
    e * c tokens' worth, not e * tokens."""

    def __init__(self, d=256, experts=8, ff=512):
        super().__init__()
        self.experts = experts
        self.attn = torch.nn.MultiheadAttention(d, 4, batch_first=True)
        self.ln_1 = torch.nn.LayerNorm(d)
        self.ln_2 = torch.nn.LayerNorm(d)
        self.router = torch.nn.Linear(d, experts, bias=False)
        self.w_in = torch.nn.Parameter(torch.zeros(experts, d, ff))
        self.w_out = torch.nn.Parameter(torch.zeros(experts, ff, d))

    def forward(self, x):
        b, s, d = x.shape
        experts = self.experts
        tokens = b * s
        capacity = 2 * tokens // experts
        h = self.ln_1(x)
        x = x + self.attn(h, h, h, need_weights=False)[0]
        t = self.ln_2(x).reshape(tokens, d)
        logits = self.router(t)
        gates = torch.softmax(logits, dim=1)
        mask1 = torch.nn.functional.one_hot(torch.argmax(gates, dim=1), experts)
        second = logits.masked_fill(mask1.bool(), float("-inf"))
        mask2 = torch.nn.functional.one_hot(torch.argmax(second, dim=1), experts)
        # Each token's slot in its expert's queue; the top-2 choices queue behind every top-1 choice.
        locations1 = torch.cumsum(mask1, dim=0) - 1
        locations2 = torch.cumsum(mask2, dim=0) - 1 + torch.sum(mask1, dim=0, keepdim=True)
        mask1 = mask1 * torch.lt(locations1, capacity)
        mask2 = mask2 * torch.lt(locations2, capacity)
        slot1 = torch.sum(locations1 * mask1, dim=1)
        slot2 = torch.sum(locations2 * mask2, dim=1)
        gate1 = (gates * mask1).sum(dim=1)
        gate2 = (gates * mask2).sum(dim=1)
        total = torch.clamp(gate1 + gate2, min=1e-9)
        gate1, gate2 = gate1 / total, gate2 / total
        one_hot = torch.nn.functional.one_hot
        combine = (torch.einsum("se,sc->sec", gate1.unsqueeze(1) * mask1, one_hot(slot1, capacity).to(x.dtype))
                   + torch.einsum("se,sc->sec", gate2.unsqueeze(1) * mask2, one_hot(slot2, capacity).to(x.dtype)))
        dispatch = combine.bool().to(x.dtype)
        routed = torch.einsum("sec,sm->ecm", dispatch, t)
        hidden = torch.relu(torch.einsum("ecm,emh->ech", routed, self.w_in))
        out = torch.einsum("ech,ehm->ecm", hidden, self.w_out)
        return x + torch.einsum("sec,ecm->sm", combine, out).reshape(b, s, d)


class ScatterTokens(torch.nn.Module):
    """ScatterND on activations: a projected summary of each sequence
    overwrites the tokens at 4 fixed positions (`h[:, slots] = summary`,
    PyTorch's index_put_), between two Linear layers. [16, 128, 256]."""

    def __init__(self, d=256):
        super().__init__()
        self.proj = torch.nn.Linear(d, d)
        self.summarise = torch.nn.Linear(d, d)
        self.out = torch.nn.Linear(d, d)

    def forward(self, x):
        h = self.proj(x)
        slots = torch.tensor([0, 32, 64, 96])
        summary = self.summarise(x.mean(dim=1, keepdim=True)).expand(-1, slots.numel(), -1)
        h[:, slots] = summary
        return self.out(h)


class RnnLm(torch.nn.Module):
    """An LSTM (or GRU) language model: embedding 256, 2 layers of 256 units, batch_first."""

    def __init__(self, cell, d=256):
        super().__init__()
        self.embed = torch.nn.Embedding(VOCAB, d)
        self.rnn = cell(d, d, num_layers=2, batch_first=True)
        self.head = torch.nn.Linear(d, VOCAB)

    def forward(self, ids):
        return self.head(self.rnn(self.embed(ids))[0])


class RnnEncoder(torch.nn.Module):
    """A speech-style encoder: a Conv1d over 80 features, then a 2-layer
    bidirectional LSTM of 256 units (input 128 in the first layer, 512 in
    the second), batch_first; returns the outputs and the final hidden
    states (ONNX's Y_h)."""

    def __init__(self):
        super().__init__()
        self.conv = torch.nn.Conv1d(80, 128, 3, padding=1)
        self.rnn = torch.nn.LSTM(128, 256, num_layers=2, bidirectional=True, batch_first=True)

    def forward(self, x):  # x: [batch, seq, 80]
        h = torch.relu(self.conv(x.transpose(1, 2))).transpose(1, 2)
        y, (h_n, _) = self.rnn(h)
        return y, h_n


def ids(batch=LM_BATCH, seq=SEQ):
    return ("ids", torch.randint(0, VOCAB, (batch, seq)))


def floats(name, *shape):
    return (name, torch.randn(*shape))


def models():
    """name -> (factory, inputs, export_params): inputs are (name, example) pairs."""
    tv = torchvision.models
    image = [floats("input", BATCH, 3, 224, 224)]
    return {
        "alexnet": (lambda: tv.alexnet(weights=None), image),
        "vgg16": (lambda: tv.vgg16(weights=None), image),
        "resnet50": (lambda: tv.resnet50(weights=None), image),
        "inception_v3": (lambda: tv.inception_v3(weights=None, aux_logits=False, init_weights=False),
                         [floats("input", BATCH, 3, 299, 299)]),
        "densenet121": (lambda: tv.densenet121(weights=None), image),
        "transformer_encoder": (Encoder, [floats("input", BATCH, 128, 512)]),
        "parameter_layouts": (ParameterLayouts, [floats("input", BATCH, 4, 16)], True),
        "gpt2": (Gpt2, [ids()]),
        "llama": (Llama, [ids()]),
        "seq2seq": (Seq2Seq, [floats("src", LM_BATCH, SEQ, 256), floats("tgt", LM_BATCH, SEQ, 256)]),
        "moe": (Moe, [floats("input", LM_BATCH, SEQ, 256)]),
        "scatter_tokens": (ScatterTokens, [floats("input", LM_BATCH, SEQ, 256)]),
        "lstm_lm": (lambda: RnnLm(torch.nn.LSTM), [ids()]),
        "gru_lm": (lambda: RnnLm(torch.nn.GRU), [ids()]),
        "rnn_encoder": (RnnEncoder, [floats("input", LM_BATCH, SEQ, 80)]),
        "mobilenet_v2": (lambda: tv.mobilenet_v2(weights=None), image),
        "efficientnet_b0": (lambda: tv.efficientnet_b0(weights=None, stochastic_depth_prob=0.0), image),
        # Tracing ConvNeXt-T in training mode at batch 128 takes many minutes
        # on a small machine; its export has no batch baked into a Reshape,
        # so `--batch 128` re-batches the batch-2 file.
        "convnext_tiny": (lambda: tv.convnext_tiny(weights=None, stochastic_depth_prob=0.0),
                          [floats("input", 2, 3, 224, 224)]),
        # Swin-T (2-2-6-2 blocks), batch 2 as ConvNeXt-T. Every block's
        # shifted-window mask arithmetic adds a hundred small nodes; their
        # names are shortened (SHORT_NAMES), or the file would be 1.4 MB.
        # (tv.swin_t fixes stochastic_depth_prob at 0.2, hence the constructor.)
        "swin_t": (lambda: tv.swin_transformer.SwinTransformer(
            patch_size=[4, 4], embed_dim=96, depths=[2, 2, 6, 2], num_heads=[3, 6, 12, 24], window_size=[7, 7],
            stochastic_depth_prob=0.0), [floats("input", 2, 3, 224, 224)]),
    }


def strip_big_constants(model):
    """Replaces Constant tensors over BIG_CONSTANT_BYTES by a ConstantOfShape of zeros.

    Shape arithmetic only ever needs small constants; a big one is a weight
    the tracer inlined, and only its shape matters to pase.
    """
    stripped = 0
    for node in model.graph.node:
        if node.op_type != "Constant":
            continue
        for attr in node.attribute:
            if attr.name == "value" and attr.t.ByteSize() > BIG_CONSTANT_BYTES:
                dims = list(attr.t.dims)
                dtype = attr.t.data_type
                attr.t.Clear()
                attr.t.CopyFrom(onnx.helper.make_tensor("zero", dtype, [1], [0]))
                shape = onnx.helper.make_tensor("shape", onnx.TensorProto.INT64, [len(dims)], dims)
                node.op_type = "ConstantOfShape"
                node.input.append(node.output[0] + "/shape")
                node.ClearField("attribute")
                node.attribute.append(onnx.helper.make_attribute("value", onnx.helper.make_tensor("zero", dtype, [1], [0])))
                model.graph.initializer.append(shape)
                model.graph.initializer[-1].name = node.output[0] + "/shape"
                stripped += 1
                break
    return stripped


def shorten_names(model):
    """Renames intermediate values to short ids and drops the names of nodes
    that compute only from constants and shapes.

    Most of a traced transformer's bytes are names such as
    "/features/features.1/features.1.0/attn/Constant_12_output_0". pase names
    a vertex after its ONNX node and a weight after its graph input, so graph
    inputs, outputs and initializers keep their names, and so does every node
    that reads a graph input (directly or through other such nodes, Shape and
    Size cutting the chain, as pase's activations do). The others (Constant,
    Shape and the index arithmetic on them, shifted-window masks) never
    become vertices; pase calls an unnamed node OPTYPE_N.
    """
    graph = model.graph
    kept = {v.name for v in graph.input} | {v.name for v in graph.output} | {t.name for t in graph.initializer}
    derived = {v.name for v in graph.input}
    kept_nodes = set()
    for node in graph.node:
        if node.op_type not in ("Shape", "Size") and any(i in derived for i in node.input if i):
            derived.update(o for o in node.output if o)
            kept_nodes.add(node.name)
    for index, node in enumerate(graph.node):
        # An unnamed node must not take the name of a kept one.
        if node.name not in kept_nodes and f"{node.op_type}_{index}" not in kept_nodes:
            node.name = ""
    renamed, counter = {}, 0
    for node in graph.node:
        for k, out in enumerate(node.output):
            if not out or out in kept:
                continue
            while True:
                short = "t" + base36(counter)
                counter += 1
                if short not in kept:
                    break
            renamed[out] = short
            node.output[k] = short
        for k, value in enumerate(node.input):
            if value in renamed:
                node.input[k] = renamed[value]
    for info in graph.value_info:
        if info.name in renamed:
            info.name = renamed[info.name]
    return len(renamed)


def base36(n):
    digits = "0123456789abcdefghijklmnopqrstuvwxyz"
    text = ""
    while True:
        n, r = divmod(n, 36)
        text = digits[r] + text
        if n == 0:
            return text


def export(name, factory, inputs, export_params=False, *, out_dir):
    torch.manual_seed(0)
    model = factory()
    model.train()
    path = os.path.join(out_dir, name + ".onnx")
    torch.onnx.export(model, tuple(x for _, x in inputs), path, export_params=export_params, opset_version=OPSET,
                      training=torch.onnx.TrainingMode.TRAINING, do_constant_folding=False,
                      input_names=[n for n, _ in inputs], output_names=OUTPUT_NAMES.get(name, ["output"]))
    onnx_model = onnx.load(path)
    stripped = strip_big_constants(onnx_model)
    if name in SHORT_NAMES:
        shorten_names(onnx_model)
    onnx.save(onnx_model, path)
    print(f"{name}: {len(onnx_model.graph.node)} nodes, {os.path.getsize(path)} bytes"
          + (f", {stripped} big constants stripped" if stripped else ""))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default=os.path.join("data", "onnx"))
    parser.add_argument("names", nargs="*")
    args = parser.parse_args()
    table = models()
    names = args.names or list(table)
    os.makedirs(args.out, exist_ok=True)
    for name in names:
        if name not in table:
            sys.exit(f"unknown model {name}; known: {', '.join(table)}")
        export(name, *table[name], out_dir=args.out)


if __name__ == "__main__":
    main()
