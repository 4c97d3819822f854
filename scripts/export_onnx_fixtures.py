#!/usr/bin/env python3
"""Exports the ONNX fixtures of data/onnx/ (run on demand; CI only reads them).

Uses Debian's python3-torch and python3-torchvision, so run it with the
system interpreter from the repository root:

    /usr/bin/python3 scripts/export_onnx_fixtures.py [--out data/onnx] [NAME ...]

Every model is exported at batch 128, opset 14, in training mode, without
weights (export_params=False), so each file holds only the graph; the tiny
parameter_layouts model alone keeps its values (see its docstring). Large
constants that the exporter still embeds are replaced by empty
ConstantOfShape-free placeholders (see strip_big_constants) to keep the
files small; pase only needs their shapes.
"""
import argparse
import os
import sys

import onnx
import torch
import torchvision
from onnx import numpy_helper

BATCH = 128
OPSET = 14
BIG_CONSTANT_BYTES = 4096


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


def models():
    tv = torchvision.models
    return {
        "alexnet": (lambda: tv.alexnet(weights=None), (BATCH, 3, 224, 224)),
        "vgg16": (lambda: tv.vgg16(weights=None), (BATCH, 3, 224, 224)),
        "resnet50": (lambda: tv.resnet50(weights=None), (BATCH, 3, 224, 224)),
        "inception_v3": (lambda: tv.inception_v3(weights=None, aux_logits=False, init_weights=False),
                         (BATCH, 3, 299, 299)),
        "densenet121": (lambda: tv.densenet121(weights=None), (BATCH, 3, 224, 224)),
        "transformer_encoder": (Encoder, (BATCH, 128, 512)),
        "parameter_layouts": (ParameterLayouts, (BATCH, 4, 16), True),
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


def export(name, factory, shape, out_dir, export_params=False):
    torch.manual_seed(0)
    model = factory()
    model.train()
    x = torch.randn(*shape)
    path = os.path.join(out_dir, name + ".onnx")
    torch.onnx.export(model, (x,), path, export_params=export_params, opset_version=OPSET,
                      training=torch.onnx.TrainingMode.TRAINING, do_constant_folding=False,
                      input_names=["input"], output_names=["output"])
    onnx_model = onnx.load(path)
    stripped = strip_big_constants(onnx_model)
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
        export(name, *table[name][:2], args.out, *table[name][2:])


if __name__ == "__main__":
    main()
