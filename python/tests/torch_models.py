"""Small models for the DTensor checks of test_dtensor.py: Hugging Face's
built from configs (no checkpoint) and torchvision's ResNet-18, with the same
random parameters in every process, exported to ONNX by today's exporter,
and their training loss."""
import torch
import transformers

VOCAB, SEQ = 4096, 32
# GPT-2 at batch 4, where pase's optima split its weights; LLaMA at batch
# 16, where they are mostly data parallel; ResNet-18 at batch 16 of 64x64
# images, 10 classes.
BATCH = {"gpt2": 4, "llama": 16, "llama_b4": 4, "resnet18": 16}
IMAGE, CLASSES = 64, 10


def _smooth_resnet18():
    """torchvision's ResNet-18 with SiLU in place of its ReLUs: a ReLU's
    gradient jumps at 0, so an activation within float32 rounding of 0 in
    the one run and not in the other flips one element of a gradient (seen:
    3% of the largest entry in one batchnorm's), while the step is right."""
    import torchvision

    model = torchvision.models.resnet18(num_classes=CLASSES)
    for module in list(model.modules()):
        for name, child in list(module.named_children()):
            if isinstance(child, torch.nn.ReLU):
                setattr(module, name, torch.nn.SiLU())
    return model


def build(name, attention="eager"):
    """GPT-2 (its token table tied to lm_head) or LLaMA (grouped-query
    attention), 2 layers of width 256, dropout off, eager attention by
    default: DTensor has no sharding rule for the CPU's fused attention
    kernel (`attention="sdpa"` is Hugging Face's default)."""
    t = transformers
    if name == "gpt2":
        model = t.GPT2LMHeadModel(t.GPT2Config(n_layer=2, n_embd=256, n_head=4, n_positions=SEQ, vocab_size=VOCAB,
                                               resid_pdrop=0.0, embd_pdrop=0.0, attn_pdrop=0.0))
    elif name in ("llama", "llama_b4"):
        model = t.LlamaForCausalLM(t.LlamaConfig(hidden_size=256, intermediate_size=512, num_hidden_layers=2,
                                                 num_attention_heads=4, num_key_value_heads=2, vocab_size=VOCAB,
                                                 max_position_embeddings=SEQ))
    elif name == "resnet18":
        model = _smooth_resnet18()
    else:
        raise ValueError(f"no model '{name}'")
    if name != "resnet18":
        model.set_attn_implementation(attention)
    generator = torch.Generator().manual_seed(1)
    with torch.no_grad():
        for parameter in model.parameters():
            parameter.copy_(torch.randn(parameter.shape, generator=generator) * 0.05 + 1e-3)
    return model.train()


def inputs(name):
    generator = torch.Generator().manual_seed(2)
    if name == "resnet18":
        return {"x": torch.randn(BATCH[name], 3, IMAGE, IMAGE, generator=generator)}
    return {"input_ids": torch.randint(0, VOCAB, (BATCH[name], SEQ), generator=generator)}


def _whole(value):
    return value.full_tensor() if hasattr(value, "full_tensor") else value


def loss(model, batch):
    """A language model's next-token cross entropy against the input tokens
    themselves, a classifier's against class (image index mod 10): any fixed
    target will do."""
    if "x" in batch:
        logits = _whole(model(batch["x"]))
        return torch.nn.functional.cross_entropy(logits, torch.arange(logits.shape[0]) % CLASSES)
    logits = _whole(model(**batch, use_cache=False).logits)
    ids = _whole(batch["input_ids"])
    return torch.nn.functional.cross_entropy(logits.reshape(-1, logits.shape[-1]), ids.reshape(-1))


def export(name, path):
    """torch.onnx.export(dynamo=True) with the exporter's defaults, as a user
    would; a CNN with optimize=False, which keeps its batchnorms (the
    optimizer folds them into the convolutions, docs/onnx.md)."""
    model = build(name)
    if name == "resnet18":
        torch.onnx.export(model, (inputs(name)["x"],), path, dynamo=True, optimize=False, input_names=["x"],
                          output_names=["logits"], external_data=False, verbose=False)
        return
    torch.onnx.export(model, (), path, kwargs={**inputs(name), "use_cache": False}, dynamo=True,
                      input_names=["input_ids"], output_names=["logits"], external_data=False, verbose=False)
