"""DeepSpeed loads the configs `pase export --format deepspeed` writes
(docs/launch.md, "Checked against the frameworks"): DeepSpeedConfig, as
deepspeed.initialize builds it, with the plan's data-parallel size, reads
back the batch, gradient accumulation, ZeRO stage and dtype pase wrote, and
its own check of the batch arithmetic (train batch = micro-batch per GPU x
accumulation x data parallel) passes, and fails at another data-parallel
size."""
import json
import os
import unittest

try:
    import deepspeed
    import deepspeed.ops
    from deepspeed.runtime.config import DeepSpeedConfig
except ImportError:  # pragma: no cover - the ctest run with the package's Python sets PASE_REQUIRE_DEEPSPEED
    if os.environ.get("PASE_REQUIRE_DEEPSPEED"):
        raise
    raise unittest.SkipTest("DeepSpeed is not installed (scripts/python-env.sh)")

import stage_gpt
from support import Scratch, run_pase


class DataParallelGroup:
    """What DeepSpeedConfig asks of Megatron's model-parallel unit: the data-parallel size."""

    def __init__(self, size):
        self.size = size

    def get_data_parallel_world_size(self):
        return self.size

    def get_data_parallel_rank(self):
        return 0


def load(config, data_parallel):
    return DeepSpeedConfig(config, mpu=DataParallelGroup(data_parallel))


class ConfigsLoadInDeepSpeed(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        # The config needs a process group to ask its rank, not DeepSpeed's
        # shared-memory kernels for the CPU, which it would compile first.
        from deepspeed.ops.op_builder.cpu import ShareMemCommBuilder
        deepspeed.ops.__compatible_ops__[ShareMemCommBuilder.NAME] = False
        os.environ.update(RANK="0", WORLD_SIZE="1", LOCAL_RANK="0", MASTER_ADDR="127.0.0.1",
                          MASTER_PORT=os.environ.get("PASE_TEST_PORT", "29541"))
        deepspeed.init_distributed(dist_backend="gloo")
        cls.scratch = Scratch()
        cls.graph = cls.scratch.model("gpt.json", stage_gpt.GRAPH)

    @classmethod
    def tearDownClass(cls):
        cls.scratch.close()

    def config_of(self, name, *options):
        strategy = self.scratch.path(name + ".json")
        run_pase("evaluate", self.graph, "--devices", "8", "--baseline", "megatron", *options, "--json", "--out",
                 strategy)
        out = self.scratch.path(name + ".deepspeed.json")
        run_pase("export", strategy, "--format", "deepspeed", "-o", out)
        with open(out, encoding="utf-8") as f:
            return json.load(f)

    def test_a_pipeline_plan_in_bf16_with_zero_1(self):
        config = self.config_of("pipeline", "--tensor-parallel", "2", "--pipeline-stages", "2", "--micro-batches",
                                "2", "--zero", "1", "--recompute", "full", "--dtype", "bf16")
        self.assertEqual(config["pase"]["data_parallel"], 2)
        loaded = load(config, config["pase"]["data_parallel"])
        self.assertEqual((loaded.train_batch_size, loaded.train_micro_batch_size_per_gpu,
                          loaded.gradient_accumulation_steps), (stage_gpt.BATCH, 2, 2))
        self.assertEqual(loaded.zero_optimization_stage, 1)
        self.assertTrue(loaded.bfloat16_config.enabled)
        self.assertTrue(loaded.activation_checkpointing_config is not None)
        with self.assertRaisesRegex(AssertionError, "Check batch related parameters"):
            load(config, 1)

    def test_one_stage_in_fp16_with_zero_3(self):
        config = self.config_of("zero3", "--tensor-parallel", "4", "--micro-batches", "4", "--zero", "3",
                                "--dtype", "fp16")
        loaded = load(config, config["pase"]["data_parallel"])
        self.assertEqual((loaded.train_batch_size, loaded.train_micro_batch_size_per_gpu,
                          loaded.gradient_accumulation_steps), (stage_gpt.BATCH, 1, 4))
        self.assertEqual(loaded.zero_optimization_stage, 3)
        self.assertTrue(loaded.float16_config.enabled)


if __name__ == "__main__":
    unittest.main()
