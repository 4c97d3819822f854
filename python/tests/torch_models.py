"""Small Hugging Face models for the DTensor checks of test_dtensor.py: built
from configs (no checkpoint), with the same random parameters in every
process, exported to ONNX by today's exporter, and their training loss."""
import torch
import transformers

VOCAB, SEQ = 4096, 32
# GPT-2 at batch 4, where pase's optima split its weights; LLaMA at batch
# 16, where they are mostly data parallel.
BATCH = {"gpt2": 4, "llama": 16, "llama_b4": 4}


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
    else:
        raise ValueError(f"no model '{name}'")
    model.set_attn_implementation(attention)
    generator = torch.Generator().manual_seed(1)
    with torch.no_grad():
        for parameter in model.parameters():
            parameter.copy_(torch.randn(parameter.shape, generator=generator) * 0.05 + 1e-3)
    return model.train()


def inputs(name):
    generator = torch.Generator().manual_seed(2)
    return {"input_ids": torch.randint(0, VOCAB, (BATCH[name], SEQ), generator=generator)}


def loss(model, batch):
    """Next-token cross entropy against the input tokens themselves (any fixed target will do)."""
    logits = model(**batch, use_cache=False).logits
    if hasattr(logits, "full_tensor"):
        logits = logits.full_tensor()
    ids = batch["input_ids"]
    ids = ids.full_tensor() if hasattr(ids, "full_tensor") else ids
    return torch.nn.functional.cross_entropy(logits.reshape(-1, logits.shape[-1]), ids.reshape(-1))


def export(name, path):
    """torch.onnx.export(dynamo=True) with the exporter's defaults, as a user would."""
    model = build(name)
    torch.onnx.export(model, (), path, kwargs={**inputs(name), "use_cache": False}, dynamo=True,
                      input_names=["input_ids"], output_names=["logits"], external_data=False, verbose=False)
