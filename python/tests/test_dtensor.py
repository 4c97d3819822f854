"""PyTorch applies pase's plans: Hugging Face GPT-2 and LLaMA, built from
small configs, exported by torch.onnx.export(dynamo=True), solved by pase
from that ONNX file, distributed with DTensor by apply_dtensor over 4 gloo
ranks on the CPU, compute one step's loss and gradients as the
single-process model does (docs/python.md, "Checked against PyTorch")."""
import os
import unittest

try:
    import torch
    import torch.multiprocessing as mp
    import transformers  # noqa: F401  (the models)
    import onnxscript  # noqa: F401  (the exporter)
except ImportError:  # pragma: no cover - the ctest run with the package's Python sets PASE_REQUIRE_TORCH
    if os.environ.get("PASE_REQUIRE_TORCH"):
        raise
    raise unittest.SkipTest("PyTorch, transformers or onnxscript is not installed (scripts/python-env.sh --torch)")

import pase
import dtensor_worker
import torch_models
from support import Scratch, run_pase

# float32 sums in another order: the gradients agree to this share of the largest.
TOLERANCE = 1e-4


class PlansRunInDTensor(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.scratch = Scratch()
        cls.onnx = {}

    @classmethod
    def tearDownClass(cls):
        cls.scratch.close()

    def model(self, name):
        if name not in self.onnx:
            path = self.scratch.path(name + ".onnx")
            torch_models.export(name, path)
            self.onnx[name] = path
        return self.onnx[name]

    def plan(self, command, name, *options):
        """`pase solve` or `pase evaluate` of the model's ONNX file on 4 devices, its plan read back."""
        path = self.scratch.path(f"{command}-{name}-{'-'.join(o.strip('-') for o in options)}.json")
        run_pase(command, self.model(name), "--devices", "4", *options, "--out", path)
        return pase.read_plan(path)

    def check_step(self, name, plan, worker=dtensor_worker.step):
        """The step on 4 ranks with the plan applied against the step in this process; rank 0's report."""
        folder = plan.source + ".run"
        os.makedirs(folder)
        mp.spawn(worker, args=(plan.mesh.devices, folder, name, plan.source), nprocs=plan.mesh.devices)
        report = torch.load(os.path.join(folder, "rank0.pt"))
        model = torch_models.build(name)
        loss = torch_models.loss(model, torch_models.inputs(name))
        loss.backward()
        self.assertAlmostEqual(report["loss"], loss.item(), delta=TOLERANCE * abs(loss.item()))
        for n, parameter in model.named_parameters():
            scale = float(parameter.grad.abs().max())
            self.assertLessEqual(float((report["grads"][n] - parameter.grad).abs().max()), TOLERANCE * scale, n)
        self.assertEqual(report["skipped"], [])
        return report

    def test_gpt2_tensor_parallel_optimum(self):
        plan = self.plan("solve", "gpt2", "--bandwidth", "1000", "--mesh", "tp=4")
        report = self.check_step("gpt2", plan)
        # Every fc splits its reduction dimension K (Conv1D holds [K, N]); the
        # token table, tied to lm_head, its vocabulary.
        self.assertEqual(report["placements"]["transformer.h.0.attn.c_attn.weight"], ["Shard(dim=0)"])
        self.assertEqual(report["placements"]["lm_head.weight"], ["Shard(dim=0)"])
        # The exporter folded the position table's gather into a constant: not in the plan.
        self.assertEqual(report["replicated"], ["transformer.wpe.weight"])

    def test_gpt2_mixed_optimum(self):
        plan = self.plan("solve", "gpt2", "--bandwidth", "200", "--mesh", "tp=4")
        self.assertTrue(any(layout.spec[0] or layout.spec[1] for layout in plan.weights().values()
                            if len(layout.spec) == 2))
        self.check_step("gpt2", plan)

    def test_llama_data_and_tensor_parallel_optimum(self):
        plan = self.plan("solve", "llama", "--bandwidth", "1000", "--mesh", "tp=4")
        report = self.check_step("llama", plan)
        self.assertEqual(report["placements"]["lm_head.weight"], ["Shard(dim=0)"])  # the vocabulary split
        # The q projection was renamed val_N by the exporter's optimizer; the
        # plan names it as the module holds it, [out, in].
        self.assertIn("model.layers.0.self_attn.q_proj.weight", report["placements"])
        self.assertEqual(report["replicated"], [])

    def test_llama_tensor_parallel_as_parallelize_module_styles(self):
        # At batch 4 LLaMA's optimum is tensor 4: every projection splits K
        # (RowwiseParallel) but gate and up, which split N (ColwiseParallel).
        plan = self.plan("solve", "llama_b4", "--bandwidth", "1000", "--mesh", "tp=4")
        report = self.check_step("llama_b4", plan, dtensor_worker.step_parallelized)
        self.assertEqual(report["styles"]["model.layers.0.self_attn.q_proj"], "RowwiseParallel")
        self.assertEqual(report["styles"]["model.layers.1.mlp.up_proj"], "ColwiseParallel")
        self.assertEqual(report["styles"]["model.embed_tokens"], "RowwiseParallel")
        self.assertEqual(report["styles"]["lm_head"], "ColwiseParallel")
        # The plan splits the input norms along their width, which no style does.
        self.assertEqual(report["replicated"], ["model.layers.0.input_layernorm", "model.layers.1.input_layernorm"])

    def test_a_data_parallel_plan_is_no_parallelize_module_plan(self):
        plan = self.plan("evaluate", "llama", "--baseline", "data-parallel", "--mesh", "dp=4")
        with self.assertRaisesRegex(pase.PlanError, "layer 'node_embedding' splits its batch: parallelize_module "
                                                    "expresses tensor parallelism only"):
            pase.parallelize_plan(plan, torch_models.build("llama"))

    def test_llama_data_parallel(self):
        plan = self.plan("evaluate", "llama", "--baseline", "data-parallel", "--mesh", "dp=4")
        self.assertEqual(plan.graph_inputs()["input_ids"].spec, (("dp",), ()))
        self.check_step("llama", plan)


if __name__ == "__main__":
    unittest.main()
