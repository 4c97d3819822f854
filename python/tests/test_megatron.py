"""Megatron-LM's own configuration reads the flags `pase export --format
megatron` writes (docs/launch.md, "Checked against the frameworks"):
megatron-core's TransformerConfig, built from the flags as Megatron-LM's
argument parser hands them on, accepts the parallel sizes and the split of
the layers, and the layers it gives each pipeline rank and virtual stage are
the blocks the plan gives that stage's chunk: Megatron-LM's equal split
(`--num-layers-per-virtual-pipeline-stage`), uneven first and last stages
(`--decoder-first/last-pipeline-num-layers`), and the layout of every chunk
(`--pipeline-model-parallel-layout`) that `--chunks auto` needs. A wrong
layout is refused, so the check can fail."""
import json
import os
import re
import shlex
import unittest
import warnings

try:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # no Transformer Engine or Apex on the CPU: its fallbacks are not used here
        import torch
        from megatron.core.transformer.enums import LayerType
        from megatron.core.transformer.transformer_config import TransformerConfig
except ImportError:  # pragma: no cover - the ctest run with the package's Python sets PASE_REQUIRE_MEGATRON
    if os.environ.get("PASE_REQUIRE_MEGATRON"):
        raise
    raise unittest.SkipTest("megatron-core is not installed (scripts/python-env.sh)")

from support import Scratch, run_pase

# A GPT of 12 blocks whose embedding and head (16384 tokens) each outweigh a block.
GRAPH = ["gpt", "--layers", "12", "--d-model", "128", "--heads", "4", "--seq", "32", "--vocab", "16384",
         "--batch", "24"]
BLOCK = re.compile(r"^transformer/h\.(\d+)/")


def megatron_flags(text):
    """The flags of the export, as Megatron-LM's parser would read the command line."""
    flags = {}
    for line in text.splitlines():
        if line.startswith("--"):
            words = shlex.split(line)
            flags[words[0]] = words[1] if len(words) > 1 else True
    return flags


def transformer_config(flags, hidden, heads):
    """TransformerConfig as Megatron-LM's arguments.py builds it from these flags."""
    pipeline = int(flags["--pipeline-model-parallel-size"])
    layers = int(flags["--num-layers"])
    config = dict(num_layers=layers, hidden_size=hidden, num_attention_heads=heads,
                  tensor_model_parallel_size=int(flags["--tensor-model-parallel-size"]),
                  pipeline_model_parallel_size=pipeline, pipeline_dtype=torch.float32)
    if "--num-layers-per-virtual-pipeline-stage" in flags:
        config["virtual_pipeline_model_parallel_size"] = layers // (
            pipeline * int(flags["--num-layers-per-virtual-pipeline-stage"]))
    if "--decoder-first-pipeline-num-layers" in flags:
        config["num_layers_in_first_pipeline_stage"] = int(flags["--decoder-first-pipeline-num-layers"])
    if "--decoder-last-pipeline-num-layers" in flags:
        config["num_layers_in_last_pipeline_stage"] = int(flags["--decoder-last-pipeline-num-layers"])
    if "--pipeline-model-parallel-layout" in flags:
        layout = flags["--pipeline-model-parallel-layout"]
        config["pipeline_model_parallel_layout"] = layout
        stages = len(layout.split("|"))
        if stages > pipeline:
            config["virtual_pipeline_model_parallel_size"] = stages // pipeline
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # its notes on CUDA graph scopes: nothing here runs
        return TransformerConfig(**config)


def plan_chunks(plan):
    """Each run of layers on one stage, in graph order: (stage, its blocks)."""
    chunks = []
    for layer in plan["layers"]:
        found = BLOCK.match(layer["name"])
        if not chunks or chunks[-1][0] != layer["stage"]:
            chunks.append((layer["stage"], set()))
        if found:
            chunks[-1][1].add(int(found.group(1)))
    return [(stage, len(blocks)) for stage, blocks in chunks]


class MegatronReadsTheFlags(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.scratch = Scratch()
        cls.graph = cls.scratch.model("gpt12.json", GRAPH)

    @classmethod
    def tearDownClass(cls):
        cls.scratch.close()

    def plan_and_flags(self, name, *options):
        strategy = self.scratch.path(name + ".json")
        run_pase("solve", self.graph, "--devices", "6", *options, "--json", "--out", strategy)
        with open(strategy, encoding="utf-8") as f:
            plan = json.load(f)
        flags = megatron_flags(run_pase("export", strategy, "--format", "megatron").stdout)
        return plan, flags

    def blocks_per_chunk(self, config, stages, chunks):
        """What Megatron builds: per chunk v S + k, rank k's v-th virtual stage's decoder layers."""
        if config.pipeline_model_parallel_layout is not None:
            layout = config.pipeline_model_parallel_layout.layout
            return [(k, layout[k][v].count(LayerType.decoder)) for v in range(chunks) for k in range(stages)]
        first, last = config.num_layers_in_first_pipeline_stage, config.num_layers_in_last_pipeline_stage
        middle = config.num_layers - (first or 0) - (last or 0)
        inner = stages - (first is not None) - (last is not None)
        per_stage = [middle // inner] * stages
        if first is not None:
            per_stage[0] = first
        if last is not None:
            per_stage[-1] = last
        return [(k, per_stage[k] // chunks) for v in range(chunks) for k in range(stages)]

    def check_layers(self, plan, flags):
        pipeline = plan["training"]["pipeline"]
        stages = pipeline["stages"]
        chunks = int(pipeline["schedule"].split(":")[1]) if ":" in pipeline["schedule"] else 1
        config = transformer_config(flags, 128, 4)
        self.assertEqual(config.pipeline_model_parallel_size, stages)
        self.assertEqual(config.virtual_pipeline_model_parallel_size, chunks if chunks > 1 else None)
        self.assertEqual(self.blocks_per_chunk(config, stages, chunks), plan_chunks(plan))
        return config

    def test_equal_interleaved_chunks(self):
        plan, flags = self.plan_and_flags("equal", "--pipeline-stages", "3", "--schedule", "interleaved:2",
                                          "--micro-batches", "12")
        self.assertEqual(flags["--num-layers-per-virtual-pipeline-stage"], "2")
        self.check_layers(plan, flags)

    def test_searched_interleaved_chunks_as_a_layout(self):
        plan, flags = self.plan_and_flags("chunks", "--pipeline-stages", "3", "--schedule", "interleaved:2",
                                          "--micro-batches", "12", "--chunks", "auto")
        self.assertEqual(flags["--pipeline-model-parallel-layout"], "E,t*1|t*4|t*1|t*1|t*4|t*1,L")
        self.check_layers(plan, flags)
        wrong = dict(flags, **{"--pipeline-model-parallel-layout": "E,t*1|t*4|t*1|t*1|t*4|t*2,L"})
        with self.assertRaisesRegex(AssertionError, "Number of decoder layers 13"):
            transformer_config(wrong, 128, 4)

    def test_uneven_first_and_last_stages(self):
        plan, flags = self.plan_and_flags("uneven", "--pipeline-stages", "3", "--micro-batches", "12")
        self.check_layers(plan, flags)


if __name__ == "__main__":
    unittest.main()
