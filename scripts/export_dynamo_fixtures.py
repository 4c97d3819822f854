#!/usr/bin/env python3
"""Exports data/onnx/dynamo/: models as today's exporter writes them (run on
demand; CI only reads the files).

Hugging Face `transformers` models built from small configs (no checkpoint
is downloaded) and torchvision CNNs, exported by `torch.onnx.export(...,
dynamo=True)`, the exporter PyTorch recommends since 2.5. It needs a current
PyTorch, transformers, torchvision, onnx and onnxscript (a virtual
environment; the versions last used are in docs/onnx.md):

    python scripts/export_dynamo_fixtures.py [--out data/onnx/dynamo] [NAME ...]

Every parameter is drawn at random before the export (norm scales too), as a
trained checkpoint's would be: the exporter's optimizer merges initializers
whose values are equal, and a fresh model's norm scales are all ones, which
would leave every norm reading the first one's name. The files keep every
initializer's name and shape, as the checkpoint has them; the values of those
over 4 KB are left out (marked as external data in a file that is not
shipped, see drop_weight_values), since pase reads only their shapes. Language models take [BATCH, SEQ] token ids, image models
[BATCH, 3, IMAGE, IMAGE].
"""
import argparse
import os
import sys

import onnx
import torch
import torchvision
import transformers

BATCH, SEQ, VOCAB, IMAGE = 16, 64, 512, 64
BIG_INITIALIZER_BYTES = 4096
# A small transformer: 2 layers, width 64, 4 heads.
SMALL = dict(hidden_size=64, num_hidden_layers=2, num_attention_heads=4, vocab_size=VOCAB,
             max_position_embeddings=SEQ)


def token_ids():
    return torch.randint(0, VOCAB, (BATCH, SEQ))


def models():
    """name -> (module, positional inputs, keyword inputs, input names). The
    models are exported as they are, not wrapped, so that the ONNX names of
    their parameters are their state_dict's; the first output is the logits."""
    t = transformers
    causal = dict(intermediate_size=176, num_key_value_heads=2, **SMALL)
    no_cache = {"use_cache": False}
    images = (torch.randn(BATCH, 3, IMAGE, IMAGE),)
    vit = t.ViTConfig(image_size=IMAGE, patch_size=8, num_labels=10, intermediate_size=128, hidden_size=64,
                      num_hidden_layers=2, num_attention_heads=4)
    return {
        "gpt2": (t.GPT2LMHeadModel(t.GPT2Config(n_layer=2, n_embd=64, n_head=4, n_positions=SEQ, vocab_size=VOCAB)),
                 (token_ids(),), no_cache, ["input_ids"]),
        "llama": (t.LlamaForCausalLM(t.LlamaConfig(**causal)), (token_ids(),), no_cache, ["input_ids"]),
        "mistral": (t.MistralForCausalLM(t.MistralConfig(sliding_window=None, **causal)), (token_ids(),), no_cache,
                    ["input_ids"]),
        "mixtral": (mixtral(), (token_ids(),), no_cache, ["input_ids"]),
        "bert": (t.BertForMaskedLM(t.BertConfig(intermediate_size=128, **SMALL)), (token_ids(),), {}, ["input_ids"]),
        "t5": (t.T5ForConditionalGeneration(t.T5Config(d_model=64, d_ff=128, d_kv=16, num_layers=2, num_heads=4,
                                                       vocab_size=VOCAB)),
               (token_ids(),), {"decoder_input_ids": token_ids(), **no_cache}, ["input_ids", "decoder_input_ids"]),
        "vit": (t.ViTForImageClassification(vit), images, {}, ["pixel_values"]),
        "resnet18": (torchvision.models.resnet18(num_classes=10), images, {}, ["x"]),
        "mobilenet_v3_small": (torchvision.models.mobilenet_v3_small(num_classes=10), images, {}, ["x"]),
        "resnet18_unoptimized": (torchvision.models.resnet18(num_classes=10), images, {}, ["x"]),
    }


def mixtral():
    """Mixtral, its experts as one batched GEMM over the routed tokens: the default grouped-GEMM
    kernel is a custom op the exporter cannot translate, and the eager loop over
    the experts hit is data-dependent, which torch.export refuses."""
    model = transformers.MixtralForCausalLM(transformers.MixtralConfig(
        num_local_experts=4, num_experts_per_tok=2, intermediate_size=176, num_key_value_heads=2, **SMALL))
    model.set_experts_implementation("batched_mm")
    return model


def randomize(module, seed):
    """Every parameter random, so no two initializers are equal (see the docstring)."""
    generator = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for parameter in module.parameters():
            parameter.copy_(torch.randn(parameter.shape, generator=generator) * 0.05 + 1e-3)


def drop_weight_values(path):
    """Marks every initializer over BIG_INITIALIZER_BYTES as external data of a
    file that does not exist: the name, dims and type stay, the bytes go."""
    model = onnx.load(path)
    for tensor in model.graph.initializer:
        if len(tensor.raw_data) <= BIG_INITIALIZER_BYTES:
            continue
        length = len(tensor.raw_data)
        tensor.ClearField("raw_data")
        tensor.data_location = onnx.TensorProto.EXTERNAL
        del tensor.external_data[:]
        for key, value in (("location", os.path.basename(path) + ".weights"), ("offset", "0"),
                           ("length", str(length))):
            entry = tensor.external_data.add()
            entry.key, entry.value = key, value
    strip_stack_traces(model)
    onnx.save(model, path)


def strip_stack_traces(model):
    """The exporter records each node's Python stack, with the exporting
    machine's paths; the rest of the metadata (the module a node ran in) stays."""
    for node in model.graph.node:
        kept = [entry for entry in node.metadata_props if entry.key != "pkg.torch.onnx.stack_trace"]
        del node.metadata_props[:]
        node.metadata_props.extend(kept)


def export(name, module, inputs, keywords, input_names, out):
    module.train()  # the step pase plans; dropout stays
    # The exporter's optimizer folds every BatchNormalization into the Conv
    # before it (new weights "conv1.weight_bias"), training mode or not:
    # `_unoptimized` keeps the graph as traced.
    optimize = not name.endswith("_unoptimized")
    randomize(module, seed=len(name))
    path = os.path.join(out, name + ".onnx")
    try:
        torch.onnx.export(module, inputs, path, kwargs=keywords, dynamo=True, input_names=input_names,
                          output_names=["logits"], external_data=False, optimize=optimize, verbose=False)
    except Exception as error:  # the exporter's own failure: report it and go on with the others
        summary = str(error).split("## Exception summary", 1)[-1].strip().splitlines()[0]
        print(f"{name}: the exporter failed: {summary}", file=sys.stderr)
        return False
    drop_weight_values(path)
    print(f"{path}: {os.path.getsize(path)} bytes", file=sys.stderr)
    return True


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default=os.path.join("data", "onnx", "dynamo"))
    parser.add_argument("names", nargs="*")
    args = parser.parse_args()
    os.makedirs(args.out, exist_ok=True)
    torch.manual_seed(0)
    table = models()
    failed = []
    for name in args.names or table:
        if name not in table:
            parser.error(f"no model '{name}'; the models: {', '.join(table)}")
        if not export(name, *table[name], args.out):
            failed.append(name)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
