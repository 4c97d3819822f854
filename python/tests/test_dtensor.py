"""PyTorch applies pase's plans: Hugging Face GPT-2 and LLaMA, built from
small configs, and torchvision's ResNet-18, exported by
torch.onnx.export(dynamo=True), solved by pase
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


# pase's own LLaMA graph (`pase models export`) of torch_models' llama_b4:
# its attention weights declared per head, [kv heads, group, head dim, model],
# and held by the module as the checkpoint has them, [heads · head dim, model].
LLAMA_B4_BUILDER = ["llama", "--layers", "2", "--d-model", "256", "--heads", "4", "--kv-heads", "2", "--ff", "512",
                    "--seq", str(torch_models.SEQ), "--vocab", str(torch_models.VOCAB), "--batch", "4"]

# (test, model, command, options, how the plan is applied, graph: the
# model's ONNX export, or `pase models export` arguments): every plan runs in
# one set of 4 processes (dtensor_worker.run), before the tests read the
# reports.
JOBS = [
    ("gpt2_tensor", "gpt2", "solve", ["--bandwidth", "1000", "--mesh", "tp=4"], "dtensor", "onnx"),
    ("gpt2_mixed", "gpt2", "solve", ["--bandwidth", "200", "--mesh", "tp=4"], "dtensor", "onnx"),
    ("llama_mixed", "llama", "solve", ["--bandwidth", "1000", "--mesh", "tp=4"], "dtensor", "onnx"),
    ("llama_data", "llama", "evaluate", ["--baseline", "data-parallel", "--mesh", "dp=4"], "dtensor", "onnx"),
    ("llama_tensor_styles", "llama_b4", "solve", ["--bandwidth", "1000", "--mesh", "tp=4"], "parallelize", "onnx"),
    ("llama_builder", "llama_b4", "solve", ["--bandwidth", "1000", "--mesh", "tp=4"], "dtensor", LLAMA_B4_BUILDER),
    ("resnet_data", "resnet18", "evaluate", ["--baseline", "data-parallel", "--mesh", "dp=4"], "dtensor", "onnx"),
    ("resnet_mixed", "resnet18", "solve", ["--bandwidth", "200", "--mesh", "tp=4"], "dtensor", "onnx"),
]


class PlansRunInDTensor(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.scratch = Scratch()
        onnx, cls.plans, jobs = {}, {}, []
        for test, name, command, options, mode, source in JOBS:
            if source != "onnx":
                graph = cls.scratch.model(test + "-graph.json", source)
            else:
                if name not in onnx:
                    onnx[name] = cls.scratch.path(name + ".onnx")
                    torch_models.export(name, onnx[name])
                graph = onnx[name]
            path = cls.scratch.path(test + ".json")
            run_pase(command, graph, "--devices", "4", *options, "--out", path)
            cls.plans[test] = pase.read_plan(path)
            jobs.append((name, path, mode, cls.scratch.path(test + ".pt")))
        mp.spawn(dtensor_worker.run, args=(4, cls.scratch.path("store"), jobs), nprocs=4)

    @classmethod
    def tearDownClass(cls):
        cls.scratch.close()

    def check_step(self, test, skipped=()):
        """Rank 0's report of the test's job against the step in this process;
        `skipped`: the names apply_dtensor is expected to report it could not
        carry out."""
        name = next(job[1] for job in JOBS if job[0] == test)
        report = torch.load(self.scratch.path(test + ".pt"))
        model = torch_models.build(name)
        loss = torch_models.loss(model, torch_models.inputs(name))
        loss.backward()
        self.assertAlmostEqual(report["loss"], loss.item(), delta=TOLERANCE * abs(loss.item()))
        for n, parameter in model.named_parameters():
            scale = float(parameter.grad.abs().max())
            self.assertLessEqual(float((report["grads"][n] - parameter.grad).abs().max()), TOLERANCE * scale, n)
        self.assertEqual([name for name, _ in report["skipped"]], list(skipped))
        return report

    def test_gpt2_tensor_parallel_optimum(self):
        report = self.check_step("gpt2_tensor")
        # Every fc splits its reduction dimension K (Conv1D holds [K, N]); the
        # token table, tied to lm_head, its vocabulary.
        self.assertEqual(report["placements"]["transformer.h.0.attn.c_attn.weight"], ["Shard(dim=0)"])
        self.assertEqual(report["placements"]["lm_head.weight"], ["Shard(dim=0)"])
        # The exporter folded the position table's gather into a constant: not in the plan.
        self.assertEqual(report["replicated"], ["transformer.wpe.weight"])

    def test_gpt2_mixed_optimum(self):
        self.assertTrue(any(layout.spec[0] or layout.spec[1] for layout in self.plans["gpt2_mixed"].weights().values()
                            if len(layout.spec) == 2))
        self.check_step("gpt2_mixed")

    def test_llama_data_and_tensor_parallel_optimum(self):
        report = self.check_step("llama_mixed")
        self.assertEqual(report["placements"]["lm_head.weight"], ["Shard(dim=0)"])  # the vocabulary split
        # The q projection was renamed val_N by the exporter's optimizer; the
        # plan names it as the module holds it, [out, in].
        self.assertIn("model.layers.0.self_attn.q_proj.weight", report["placements"])
        self.assertEqual(report["replicated"], [])

    def test_llama_data_parallel(self):
        self.assertEqual(self.plans["llama_data"].graph_inputs()["input_ids"].spec, (("dp",), ()))
        self.check_step("llama_data")

    def test_llama_tensor_parallel_as_parallelize_module_styles(self):
        # At batch 4 LLaMA's optimum is tensor 4: every projection splits K
        # (RowwiseParallel) but gate and up, which split N (ColwiseParallel).
        report = self.check_step("llama_tensor_styles")
        self.assertEqual(report["styles"]["model.layers.0.self_attn.q_proj"], "RowwiseParallel")
        self.assertEqual(report["styles"]["model.layers.1.mlp.up_proj"], "ColwiseParallel")
        self.assertEqual(report["styles"]["model.embed_tokens"], "RowwiseParallel")
        self.assertEqual(report["styles"]["lm_head"], "ColwiseParallel")
        # The plan splits the input norms along their width, which no style does.
        self.assertEqual(report["replicated"], ["model.layers.0.input_layernorm", "model.layers.1.input_layernorm"])

    def test_llama_from_pase_own_graph_on_the_checkpoint_shapes(self):
        # The plan lays q_proj.weight out on the graph's [2, 2, 64, 256] and on
        # the checkpoint's [256, 256]; apply_dtensor distributes the module's
        # tensor with the second.
        plan = self.plans["llama_builder"]
        q = plan.layer("model/layers.0/self_attn/q_proj").weights[0]
        self.assertEqual((q.layout.shape, q.checkpoint.shape, q.checkpoint.merges), ((2, 2, 64, 256), (256, 256),
                                                                                     ((0, 1, 2), (3,))))
        # The optimum splits o_proj along the head dimension, the minor one of
        # the checkpoint's merged [heads · head dim]: no DTensor placement holds
        # that piece of the [256, 256] tensor, so it is held replicated, and said;
        # nor does its input's split carry onto the module's [4, 32, 256].
        o = plan.layer("model/layers.0/self_attn/o_proj").weights[0]
        self.assertIsNone(o.checkpoint.layout)
        report = self.check_step("llama_builder", skipped=[
            "model.layers.0.self_attn.o_proj.weight", "model.layers.1.self_attn.o_proj.weight",
            "model/layers.0/self_attn/o_proj", "model/layers.1/self_attn/o_proj"])
        self.assertEqual(report["skipped"][2][1], "its input [4, 32, 256] is no view of the plan's "
                                                  "[4, 2, 2, 32, 64] that keeps its split")
        self.assertEqual(report["placements"]["model.layers.0.self_attn.q_proj.weight"], ["Shard(dim=1)"])
        self.assertEqual(report["placements"]["model.layers.0.self_attn.k_proj.weight"], ["Shard(dim=1)"])
        self.assertEqual(report["skipped"][0][1], o.checkpoint.note)

    def test_resnet_data_parallel(self):
        # DTensor runs no convolution on a batch-split input and no batchnorm
        # or max pooling at all: apply_dtensor runs them on each rank's
        # piece (torch_local.py), the batchnorms' statistics summed over the
        # ranks, so the step is the single-process one.
        report = self.check_step("resnet_data")
        self.assertEqual(len(report["local"]), 20 + 20 + 2)  # convolutions, batchnorms, max and average pool
        self.assertEqual(report["placements"]["layer1.0.conv1.weight"], ["Replicate()"])
        self.assertEqual(report["replicated"], [])

    def test_resnet_mixed_optimum(self):
        # At 200 GB/s the optimum runs the first stages data parallel and
        # the later ones split over their input channels: those
        # convolutions leave partial sums, reduced at the layer's boundary.
        plan = self.plans["resnet_mixed"]
        configs = {layer.config for layer in plan.layers if layer.op == "conv2d"}
        self.assertIn((4, 1, 1, 1, 1, 1, 1), configs)
        self.assertIn((1, 4, 1, 1, 1, 1, 1), configs)
        report = self.check_step("resnet_mixed")
        self.assertEqual(report["placements"]["layer3.1.conv2.weight"], ["Shard(dim=1)"])

    def test_a_data_parallel_plan_is_no_parallelize_module_plan(self):
        with self.assertRaisesRegex(pase.PlanError, "layer 'node_embedding' splits its batch: parallelize_module "
                                                    "expresses tensor parallelism only"):
            pase.parallelize_plan(self.plans["llama_data"], torch_models.build("llama"))


if __name__ == "__main__":
    unittest.main()
