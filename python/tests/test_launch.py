"""The PyTorch recipe `pase export --format torch` writes runs (docs/launch.md,
"Checked against PyTorch"): for a GPT named as pase's graph names its weights
(stage_gpt.py), the recipe of a pipeline plan (Megatron-LM's equal stages,
and pase's own optimum under GPipe) and of a one-stage plan, imported as
written, splits the model into its stages (torch.distributed.pipelining),
tensor parallel (parallelize_module), recomputation and FSDP2 over 8 gloo
ranks on the CPU; one step of its schedule has the single-process step's loss
and gradients."""
import os
import unittest

try:
    import torch
    import torch.multiprocessing as mp
except ImportError:  # pragma: no cover - the ctest run with the package's Python sets PASE_REQUIRE_TORCH
    if os.environ.get("PASE_REQUIRE_TORCH"):
        raise
    raise unittest.SkipTest("PyTorch is not installed (scripts/python-env.sh)")

import launch_worker
import stage_gpt
from support import Scratch, run_pase

# float32 sums in another order: the gradients agree to this share of the largest.
TOLERANCE = 1e-4
WORLD = 8

# (test, command and options): every recipe runs in one set of 8 processes.
JOBS = [
    ("megatron_pipeline", ["evaluate", "--baseline", "megatron", "--tensor-parallel", "2", "--pipeline-stages", "2",
                           "--micro-batches", "2", "--zero", "1", "--recompute", "full"]),
    ("pase_pipeline_gpipe", ["solve", "--bandwidth", "1000", "--pipeline-stages", "2", "--micro-batches", "2",
                             "--schedule", "gpipe"]),
    ("megatron_one_stage", ["evaluate", "--baseline", "megatron", "--tensor-parallel", "4", "--micro-batches", "2",
                            "--zero", "3"]),
]


class RecipesRunInPyTorch(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.scratch = Scratch()
        graph = cls.scratch.model("gpt.json", stage_gpt.GRAPH)
        cls.recipes, jobs = {}, []
        for test, (command, *options) in JOBS:
            strategy = cls.scratch.path(test + ".json")
            run_pase(command, graph, "--devices", str(WORLD), *options, "--json", "--out", strategy)
            recipe = cls.scratch.path(test + "_recipe.py")
            run_pase("export", strategy, "--format", "torch", "-o", recipe)
            cls.recipes[test] = launch_worker.load_recipe(recipe)
            jobs.append((recipe, cls.scratch.path(test)))
        mp.spawn(launch_worker.run, args=(WORLD, cls.scratch.path("store"), jobs), nprocs=WORLD)

    @classmethod
    def tearDownClass(cls):
        cls.scratch.close()

    def check_step(self, test):
        """The stages' reports of the test's step against the step in this process."""
        recipe = self.recipes[test]
        reports = [torch.load(self.scratch.path(f"{test}.stage{k}.pt")) for k in range(recipe.PIPELINE_STAGES)]
        model = stage_gpt.build()
        batch = stage_gpt.tokens()
        loss = stage_gpt.loss_fn(model(batch), batch)
        loss.backward()
        self.assertAlmostEqual(reports[-1]["loss"], loss.item(), delta=TOLERANCE * abs(loss.item()))
        grads = {name: grad for report in reports for name, grad in report["grads"].items()}
        # Each parameter in exactly one stage.
        self.assertEqual(sorted(grads), sorted(name for name, _ in model.named_parameters()))
        self.assertEqual(sum(len(report["grads"]) for report in reports), len(grads))
        for name, parameter in model.named_parameters():
            scale = float(parameter.grad.abs().max())
            self.assertLessEqual(float((grads[name] - parameter.grad).abs().max()), TOLERANCE * scale, name)
        return reports

    def test_megatron_pipeline_of_two_stages_tensor_2_data_2(self):
        recipe = self.recipes["megatron_pipeline"]
        self.assertEqual((recipe.PIPELINE_STAGES, recipe.DATA_PARALLEL, recipe.TENSOR_PARALLEL), (2, 2, 2))
        self.assertEqual((recipe.SCHEDULE.__name__, recipe.RECOMPUTE_BLOCKS), ("Schedule1F1B", True))
        self.assertEqual(recipe.STAGE_MODULES[1][0], "transformer.h.2")
        reports = self.check_step("megatron_pipeline")
        self.assertIn("transformer.wte.weight", reports[0]["grads"])
        self.assertIn("lm_head.weight", reports[1]["grads"])

    def test_pase_pipeline_optimum_under_gpipe(self):
        recipe = self.recipes["pase_pipeline_gpipe"]
        self.assertEqual(recipe.SCHEDULE.__name__, "ScheduleGPipe")
        # The optimum keeps the position table whole: said, and left replicated.
        self.assertNotIn("transformer.wpe", recipe.TENSOR_PARALLEL_PLAN)
        self.assertIn("transformer/wpe: tensor 1 x data 2, not tensor 2 x data 2", recipe.NOT_SAID)
        self.check_step("pase_pipeline_gpipe")

    def test_one_stage_tensor_4_data_2_zero_3(self):
        recipe = self.recipes["megatron_one_stage"]
        self.assertEqual((recipe.PIPELINE_STAGES, recipe.DATA_PARALLEL, recipe.TENSOR_PARALLEL), (1, 2, 4))
        self.assertTrue(recipe.RESHARD_AFTER_FORWARD)
        self.check_step("megatron_one_stage")


if __name__ == "__main__":
    unittest.main()
