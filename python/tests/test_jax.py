"""JAX applies pase's plans: a small LLaMA and a small GPT (its token table
tied to lm_head), and the zoo's AlexNet and ResNet-101 at small images,
written as JAX programs from their pase-graphs, jit-compiled with the plans'
shardings on 8 host devices, compute the loss and gradients of the unsharded
programs (docs/python.md, "Checked against JAX")."""
import json
import os
import unittest

os.environ.setdefault("XLA_FLAGS", "--xla_force_host_platform_device_count=8")
try:
    import jax
    import jax.numpy as jnp
except ImportError:  # pragma: no cover - the ctest run with the package's Python sets PASE_REQUIRE_JAX
    if os.environ.get("PASE_REQUIRE_JAX"):
        raise
    raise unittest.SkipTest("JAX is not installed (scripts/python-env.sh makes a Python with it)")

import pase
import graph_jax
from support import ALEXNET, GPT_TIED, LLAMA, RESNET, Scratch, run_pase

# float32 sums in another order: the gradients agree to this share of the largest.
TOLERANCE = 1e-4


class PlansRunInJax(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.scratch = Scratch()
        if len(jax.devices()) < 8:
            raise AssertionError(f"8 host devices expected (XLA_FLAGS), JAX has {len(jax.devices())}")
        cls.graphs, cls.unsharded = {}, {}

    @classmethod
    def tearDownClass(cls):
        cls.scratch.close()

    def graph(self, name, args):
        if name not in self.graphs:
            path = self.scratch.model(name + ".json", args)
            with open(path, encoding="utf-8") as f:
                self.graphs[name] = (path, json.load(f))
        return self.graphs[name]

    def reference(self, name, plan):
        """The unsharded step of graph `name`: its inputs, parameters, loss and gradients."""
        if name not in self.unsharded:
            _, graph = self.graphs[name]
            params = graph_jax.random_params(plan)
            inputs = graph_jax.random_inputs(graph)
            step = jax.jit(jax.value_and_grad(lambda p, i: graph_jax.run(graph, p, i)))
            self.unsharded[name] = (inputs, params, *step(params, inputs))
        return self.unsharded[name]

    def baseline_plan(self, graph_path, name, *options):
        path = self.scratch.path(name)
        run_pase("evaluate", graph_path, "--devices", "8", *options, "--mesh", "auto", "--out", path)
        return pase.read_plan(path)

    def check_step(self, name, plan):
        _, graph = self.graphs[name]
        inputs0, params0, loss0, grads0 = self.reference(name, plan)
        shardings = pase.jax_shardings(plan)
        params = {n: jax.device_put(value, shardings.params[n]) for n, value in params0.items()}
        inputs = {n: jax.device_put(value, shardings.inputs[n]) for n, value in inputs0.items()}
        # Gradients leave laid out as their weights, where the optimizer needs them.
        replicated = jax.sharding.NamedSharding(shardings.mesh, jax.sharding.PartitionSpec())
        step = jax.jit(jax.value_and_grad(lambda p, i: graph_jax.run(graph, p, i, shardings)),
                       out_shardings=(replicated, shardings.params))
        compiled = step.lower(params, inputs).compile()
        # JAX took the plan's layouts as the step's own: no input is moved on entry.
        taken = compiled.input_shardings[0][0]
        for n, sharding in shardings.params.items():
            self.assertTrue(taken[n].is_equivalent_to(sharding, params[n].ndim), n)
        loss, grads = compiled(params, inputs)
        self.assertAlmostEqual(float(loss), float(loss0), delta=TOLERANCE * abs(float(loss0)))
        for n, grad in grads.items():
            scale = float(jnp.max(jnp.abs(grads0[n])))
            self.assertLessEqual(float(jnp.max(jnp.abs(grad - grads0[n]))), TOLERANCE * scale, n)
        return compiled

    def test_llama_the_optimum_of_the_pase_model(self):
        path, _ = self.graph("llama", LLAMA)
        plan = pase.solve(path, 8, ["--bandwidth", "200"])
        split = [n for n, layout in plan.weights().items() if any(layout.spec)]
        self.assertGreater(len(split), 10)  # a plan that splits weights, not one that replicates all
        # The attention weights are held as the checkpoint holds them ([heads · head dim, model]),
        # and the program reads them in the graph's shape.
        self.assertEqual(plan.weights()["model.layers.0.self_attn.q_proj.weight"].shape, (256, 256))
        self.assertEqual(plan.weights()["model.layers.0.self_attn.k_proj.weight"].shape, (64, 256))
        self.check_step("llama", plan)

    def test_llama_megatron(self):
        path, _ = self.graph("llama", LLAMA)
        self.check_step("llama", self.baseline_plan(path, "megatron.json", "--baseline", "megatron"))

    def test_llama_megatron_with_sequence_parallelism(self):
        path, _ = self.graph("llama", LLAMA)
        plan = self.baseline_plan(path, "megatron-sp.json", "--baseline", "megatron", "--sequence-parallel")
        norm = plan.layer("model/layers.0/input_layernorm").outputs[0]
        self.assertNotEqual(norm.spec[1], (), "the norm's output is split over the sequence")
        self.check_step("llama", plan)

    def test_gpt_with_its_token_table_read_in_two_layouts(self):
        path, _ = self.graph("gpt", GPT_TIED)
        plan = pase.solve(path, 8, ["--bandwidth", "200"])
        reshards = plan.weight_reshards()
        self.assertEqual([(r.weight, r.layer, r.held_by) for r in reshards],
                         [("transformer.wte.weight", "lm_head", "transformer/wte")])
        self.check_step("gpt", plan)

    def test_gpt_megatron(self):
        path, _ = self.graph("gpt", GPT_TIED)
        self.check_step("gpt", self.baseline_plan(path, "gpt-megatron.json", "--baseline", "megatron"))

    def test_alexnet_the_optimum_of_the_pase_model(self):
        path, _ = self.graph("alexnet", ALEXNET)
        plan = pase.solve(path, 8)
        # A mixed plan: the convolutions split their batch or their channels,
        # the fcs their units or their inputs, not all alike.
        configs = {layer.config for layer in plan.layers if layer.op in ("conv2d", "fc")}
        self.assertGreater(len(configs), 2)
        self.assertTrue(any(layout.spec[0] for layout in [plan.layer("conv1").outputs[0]]))
        self.check_step("alexnet", plan)

    def test_resnet_data_parallel(self):
        # Every batchnorm's statistics are over the batch split 8 ways: XLA
        # all-reduces them, and the step still equals the unsharded one.
        path, _ = self.graph("resnet", RESNET)
        plan = self.baseline_plan(path, "resnet-data.json", "--baseline", "data-parallel")
        self.assertEqual(plan.graph_inputs()["image"].spec[0], ("x0", "x1", "x2"))
        self.check_step("resnet", plan)


if __name__ == "__main__":
    unittest.main()
