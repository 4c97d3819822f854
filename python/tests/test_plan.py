"""The package reads the plans the binary writes, as `pase export` reads them,
and refuses what `pase export` refuses with the same line. No JAX needed."""
import json
import math
import unittest

import pase
from support import LLAMA, Scratch, run_pase

# A 2-layer GPT of the 1.7B shape: on 64 devices of the calibrated dgx-a100
# in bf16 its tied token table is laid out two ways.
GPT_1_7B_SHAPE = ["gpt", "--layers", "2", "--d-model", "2304", "--heads", "24", "--ff", "9216", "--seq", "2048",
            "--vocab", "51200", "--batch", "512"]
CALIBRATED = ["--cost-model", "calibrated", "--machine", "dgx-a100", "--dtype", "bf16"]


def as_export(layout):
    return [list(e) if isinstance(e, tuple) else e for e in pase.partition_spec_entries(layout)]


class ReadingPlans(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.scratch = Scratch()
        cls.llama = cls.scratch.model("llama.json", LLAMA)

    @classmethod
    def tearDownClass(cls):
        cls.scratch.close()

    def solved(self, name, graph, *options):
        path = self.scratch.path(name)
        run_pase("solve", graph, "--devices", "8", *options, "--out", path)
        return path

    def test_the_plan_as_objects(self):
        path = self.solved("optimum.json", self.llama, "--bandwidth", "200")
        plan = pase.read_plan(path)
        with open(path, encoding="utf-8") as f:
            document = json.load(f)
        self.assertEqual(plan.mesh.shape, (2, 2, 2))
        self.assertEqual(plan.mesh.devices, 8)
        self.assertEqual(len(plan.layers), len(document["layers"]))
        self.assertEqual(plan.total_cost, document["total_cost"])
        self.assertEqual(list(plan.graph_inputs()), ["input_ids"])
        q = plan.layer("model/layers.0/self_attn/q_proj")
        self.assertEqual(q.op, "einsum")
        for layout in plan.weights().values():
            # A dimension's split is the product of the sizes of the mesh axes that cut it.
            for split, axes in zip(layout.split, layout.spec):
                sizes = [plan.mesh.axis_size(a) for a in axes]
                self.assertEqual(split, math.prod(sizes))

    def test_the_shardings_are_the_exports(self):
        # Two readings of one plan: the package's from the layouts' specs, and
        # `pase export --format jax`'s, written by the C++ exporter.
        for name, options in [("optimum.json", ["--bandwidth", "200"]), ("dp-tp.json", ["--mesh", "dp=2,tp=4"])]:
            path = self.solved(name, self.llama, *options)
            export = self.scratch.export(path, "jax")
            plan = pase.read_plan(path)
            self.assertEqual({n: as_export(l) for n, l in plan.weights().items()}, export["weights"])
            self.assertEqual({n: [as_export(l) for l in ls] for n, ls in plan.outputs().items()}, export["outputs"])
            self.assertEqual(plan.mesh.device_ids(), export["mesh"]["device_ids"])
            self.assertEqual(list(plan.mesh.axes), export["mesh"]["axis_names"])

    def test_tied_weights_as_the_exporter_says_them(self):
        tied = self.scratch.model("gpt.json", GPT_1_7B_SHAPE)
        path = self.scratch.path("tied.json")
        run_pase("solve", tied, "--devices", "64", *CALIBRATED, "--out", path)
        export = self.scratch.export(path, "jax")
        plan = pase.read_plan(path)
        self.assertEqual({n: as_export(l) for n, l in plan.weights().items()}, export["weights"])
        said = [{"weight": r.weight, "layer": r.layer, "held_by": r.held_by, "layout": as_export(r.layout)}
                for r in plan.weight_reshards()]
        self.assertEqual(said, [{k: v for k, v in e.items() if k != "realized_words"} for e in export["weight_reshards"]])
        self.assertEqual(len(said), 1)

    def test_refusals_are_the_exporters(self):
        no_plan = self.solved("no-plan.json", self.llama, "--no-plan")
        # lm_head reads q_proj's weight name: another shape, which no reshard maps.
        with open(self.solved("optimum.json", self.llama, "--bandwidth", "200"), encoding="utf-8") as f:
            document = json.load(f)
        lm_head = next(layer for layer in document["layers"] if layer["name"] == "lm_head")
        lm_head["weights"][0]["name"] = "model.layers.0.self_attn.q_proj.weight"
        two_shapes = self.scratch.path("two-shapes.json")
        with open(two_shapes, "w", encoding="utf-8") as f:
            json.dump(document, f)
        for path in [no_plan, two_shapes]:
            refused = run_pase("export", path, "--format", "jax", check=False)
            self.assertEqual(refused.returncode, 1)
            with self.assertRaises(pase.PlanError) as caught:
                pase.read_plan(path).weights()
            self.assertEqual("error: " + str(caught.exception) + "\n", refused.stderr)

    def test_files_that_are_not_plans(self):
        with self.assertRaises(pase.PlanError) as caught:
            pase.read_plan(self.llama)
        self.assertEqual(str(caught.exception), self.llama + ": field 'format': expected \"pase-strategy\"")
        with self.assertRaises(pase.PlanError) as caught:
            pase.read_plan(self.scratch.path("absent.json"))
        self.assertEqual(str(caught.exception), self.scratch.path("absent.json") + ": cannot read it (No such file or directory)")

    def test_a_pipeline_plan_is_refused_by_name(self):
        path = self.solved("pipeline.json", self.llama, "--pipeline-stages", "2", "--micro-batches", "2")
        with self.assertRaises(pase.PlanError) as caught:
            pase.read_plan(path)
        self.assertEqual(str(caught.exception), path + ": has a mesh per pipeline stage; this package reads plans of "
                         "one mesh (`pase export --format jax` writes each stage's layouts)")

    def test_solve_drives_the_binary(self):
        plan = pase.solve(self.llama, 8, ["--mesh", "dp=2,tp=4"])
        self.assertEqual(plan.mesh.axes, ("dp", "tp"))
        with self.assertRaises(pase.SolveError) as caught:
            pase.solve(self.llama, 0)
        self.assertEqual(caught.exception.status, 2)
        self.assertEqual(str(caught.exception), run_pase("solve", self.llama, "--devices", "0", check=False).stderr.strip())


class LayoutsOnViews(unittest.TestCase):
    """spec_for_shape: a layout carried onto a view that merges or splits
    consecutive dimensions, as a module's output is of pase's (an fc's
    [B·S, N] is the Linear's [B, S, N])."""

    SIZES = {"x0": 2, "x1": 4}

    def carried(self, shape, spec, target):
        layout = pase.TensorLayout(tuple(shape), (), (), tuple(tuple(a) for a in spec))
        return pase.spec_for_shape(layout, target, self.SIZES.get)

    def test_a_split_of_a_merged_dimension_goes_to_its_major_part(self):
        self.assertEqual(self.carried([128, 768], [["x0"], []], [4, 32, 768]), [("x0",), (), ()])
        self.assertEqual(self.carried([128, 768], [[], ["x1"]], [4, 32, 768]), [(), (), ("x1",)])

    def test_a_split_dimension_merges_only_as_the_major_part(self):
        self.assertEqual(self.carried([4, 32, 768], [["x0", "x1"], [], []], [128, 768]), [("x0", "x1"), ()])
        self.assertIsNone(self.carried([4, 32, 768], [[], ["x1"], []], [128, 768]))

    def test_a_split_that_the_view_cannot_divide_is_refused(self):
        self.assertIsNone(self.carried([8, 16], [["x0", "x1"], []], [2, 4, 16]))  # 8 ways over a part of 2
        self.assertEqual(self.carried([8, 16], [["x0"], []], [2, 4, 16]), [("x0",), (), ()])

    def test_the_same_shape_keeps_the_spec_and_another_size_is_refused(self):
        self.assertEqual(self.carried([4, 8], [["x1"], ["x0"]], [4, 8]), [("x1",), ("x0",)])
        self.assertIsNone(self.carried([4, 8], [[], []], [4, 4]))


class ReadingHloCollectives(unittest.TestCase):
    """hlo_collectives (scripts/hlo_comparison.py): XLA's collectives, each
    attributed to the layer whose named scope its metadata carries."""

    HLO = "\n".join([
        '%all-reduce.1 = f32[4,32,256]{2,1,0} all-reduce(%b), channel_id=6, replica_groups={{0,1},{2,3}}, '
        'to_apply=%add, metadata={op_name="jit(f)/jvp(model/layers.0/mlp/down_proj)/blf,ef->ble/dot_general"}',
        '%all-reduce.45 = (f32[8,32,256]{2,1,0}, f32[256]{0}) all-reduce(%x, %y), channel_id=4, '
        "replica_groups=mesh['axis_0'=4,'axis_1'=1,'axis_2'=2], device_ids=([2,4]T(1,0)) {'axis_0'}, "
        'to_apply=%add, metadata={op_name="jit(f)/transpose(jvp(transformer/(wte))/gather:wpe))/gather)"}',
        '%all-gather = f32[4,2,32,32]{3,2,0,1} all-gather(%c), channel_id=26, replica_groups=[4,2]<=[8], '
        'dimensions={1}, metadata={op_name="jit(f)/transpose(jvp(model/layers.1/self_attn/context))/transpose"}',
        '%add.3 = f32[4] add(%p, %q)'])
    LAYERS = ["model/layers.0/mlp/down_proj", "transformer/wte", "transformer/wpe", "model/layers.1/self_attn/context"]

    def test_each_collective_its_layer_direction_group_and_size(self):
        import hlo_collectives
        found = [(c.kind, c.elements, c.group, c.layer, c.backward)
                 for c in hlo_collectives.collectives(self.HLO, self.LAYERS)]
        self.assertEqual(found, [
            ("all-reduce", 4 * 32 * 256, 2, "model/layers.0/mlp/down_proj", False),
            ("all-reduce", 8 * 32 * 256, 4, "transformer/wte", True),
            ("all-reduce", 256, 4, "transformer/wpe", True),
            ("all-gather", 4 * 2 * 32 * 32, 2, "model/layers.1/self_attn/context", True)])

    def test_elements_moved_as_a_ring_moves_them(self):
        import hlo_collectives
        ring = hlo_collectives.Collective("all-reduce", 1000, 4, None, False)
        self.assertEqual(ring.moved, 1500.0)  # 2 (q - 1) / q of the buffer
        self.assertEqual(hlo_collectives.Collective("all-gather", 1000, 4, None, False).moved, 750.0)
        self.assertEqual(hlo_collectives.Collective("all-reduce", 1000, 1, None, False).moved, 0.0)


if __name__ == "__main__":
    unittest.main()
