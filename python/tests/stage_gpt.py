"""A GPT for the launch recipe's check (test_launch.py): its modules named as
pase's `models export gpt` graph names its weights, and its forward written as
a pipeline stage runs it (torchtitan's convention): a module another stage
holds is None, a block another stage holds an identity."""
import torch
import torch.nn.functional as F
from torch import nn

# The graph's arguments for `pase models export` (its batch: the global batch).
LAYERS, WIDTH, HEADS, SEQ, VOCAB, BATCH = 4, 128, 4, 32, 512, 8
GRAPH = ["gpt", "--layers", str(LAYERS), "--d-model", str(WIDTH), "--heads", str(HEADS), "--seq", str(SEQ),
         "--vocab", str(VOCAB), "--batch", str(BATCH)]


class Attention(nn.Module):
    def __init__(self):
        super().__init__()
        self.head_dim = WIDTH // HEADS
        # The fused projection's outputs ordered [heads, q k v, head dim], as
        # Megatron-LM orders them: a column-parallel split keeps whole heads.
        self.c_attn = nn.Linear(WIDTH, 3 * WIDTH)
        self.c_proj = nn.Linear(WIDTH, WIDTH)

    def forward(self, x):
        b, n, _ = x.shape
        # -1: the heads this rank holds.
        q, k, v = (t.transpose(1, 2) for t in self.c_attn(x).view(b, n, -1, 3, self.head_dim).unbind(3))
        out = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        return self.c_proj(out.transpose(1, 2).reshape(b, n, -1))


class MLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.c_fc = nn.Linear(WIDTH, 4 * WIDTH)
        self.c_proj = nn.Linear(4 * WIDTH, WIDTH)

    def forward(self, x):
        return self.c_proj(F.gelu(self.c_fc(x)))


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.ln_1, self.attn = nn.LayerNorm(WIDTH), Attention()
        self.ln_2, self.mlp = nn.LayerNorm(WIDTH), MLP()

    def forward(self, x):
        x = x + self.attn(self.ln_1(x))
        return x + self.mlp(self.ln_2(x))


class GPT(nn.Module):
    """Token ids in on the first stage, hidden states between stages, logits
    out of the last. Its head has its own weight: tying it to the token
    table across stages is the user's to sum (the recipe's NOT_SAID)."""

    def __init__(self):
        super().__init__()
        self.transformer = nn.Module()
        self.transformer.wte = nn.Embedding(VOCAB, WIDTH)
        self.transformer.wpe = nn.Embedding(SEQ, WIDTH)
        self.transformer.h = nn.ModuleList(Block() for _ in range(LAYERS))
        self.transformer.ln_f = nn.LayerNorm(WIDTH)
        self.lm_head = nn.Linear(WIDTH, VOCAB, bias=False)

    def forward(self, x):
        t = self.transformer
        if t.wte is not None:
            x = t.wte(x) + t.wpe(torch.arange(x.shape[1], device=x.device))
        for block in t.h:
            x = block(x)
        if t.ln_f is not None:
            x = t.ln_f(x)
        return self.lm_head(x) if self.lm_head is not None else x


def build():
    """The same random parameters in every process."""
    generator = torch.Generator().manual_seed(1)
    model = GPT()
    with torch.no_grad():
        for parameter in model.parameters():
            parameter.copy_(torch.randn(parameter.shape, generator=generator) * 0.05 + 1e-3)
    return model.train()


def tokens():
    return torch.randint(0, VOCAB, (BATCH, SEQ), generator=torch.Generator().manual_seed(2))


def loss_fn(logits, target):
    """Next-token cross entropy against the input tokens themselves: any fixed target will do."""
    return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), target.reshape(-1))
