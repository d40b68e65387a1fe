import os

import kernelbench_eval_one
import kernelbench_side_by_side as sbs


def make_checkout(root, folder, names):
    os.makedirs(os.path.join(root, folder))
    for name in names:
        for prefix in ("model_ex_", "model_new_ex_"):
            with open(os.path.join(root, folder, f"{prefix}{name}.py"), "w") as f:
                f.write("# stand-in\n")


def test_pairs_are_found_in_either_kernelbench_layout(tmp_path):
    new, old = str(tmp_path / "new"), str(tmp_path / "old")
    make_checkout(new, "src/kernelbench/prompts/few_shot", ["add"])
    make_checkout(old, "src/prompts/few_shot", ["add"])
    found = sbs.find_pair(new, "add")[1]
    assert found.endswith("src/kernelbench/prompts/few_shot/model_new_ex_add.py")
    assert sbs.find_pair(old, "add")[0].endswith("src/prompts/few_shot/model_ex_add.py")
    assert sbs.find_pair(new, "fuse_gelu") is None


def test_batch_copies_differ_inside_the_cuda_source():
    source = 'src = """\n#include <torch/extension.h>\n__global__ void k() {}\n"""\n'
    one, two = sbs.distinct_copy(source, 1), sbs.distinct_copy(source, 2)
    assert one != two
    assert "// kernelpro bench: batch copy 2\n#include <torch/extension.h>" in two


def kernelpro_run(wall, status, ref_ms=0.05, cand_ms=0.04):
    return {"wall_s": wall, "results": [{"status": status, "reference_ms": ref_ms,
                                         "candidate_ms": cand_ms}]}


def test_a_side_by_side_row_gives_walls_ratios_times_and_verdicts():
    record = {"name": "add",
              "kernelbench_cold": {"wall_s": 50.0, "status": "correct"},
              "kernelbench_warm": {"wall_s": 5.0, "status": "correct", "ref_runtime_ms": 0.0036,
                                   "runtime_ms": 0.0075},
              "kernelpro_cold": kernelpro_run(40.0, "correct"),
              "kernelpro_warm": kernelpro_run(6.0, "correct", 0.0035, 0.0070)}
    row = sbs.side_by_side_row(record)
    assert row == ["add", "50.0", "5.0", "40.0", "6.0", "0.80x", "1.20x", "3.6 / 7.5",
                   "3.5 / 7.0", "correct / correct", "correct / correct"]


def test_kernelbench_failures_show_as_statuses_not_times():
    assert sbs.kernelbench_status({"compiled": False}) == "compile_error"
    assert sbs.kernelbench_status({"compiled": True, "correctness": False}) == "incorrect"
    assert sbs.kernelbench_status({"error": "ImportError: x"}) == "error"
    record = {"name": "x", "kernelbench_cold": {"wall_s": 9.0, "status": "error",
                                                "runtime_ms": -1.0}}
    row = sbs.side_by_side_row(record)
    assert row[7] == "– / –" and row[9] == "error / –"


def test_batch_row_is_per_candidate():
    record = {"name": "fuse_gelu", "batch_size": 8,
              "cold": {"wall_s": 80.0, "results": [{"status": "correct"}] * 8},
              "warm": {"wall_s": 16.0, "results": [{"status": "correct"}] * 7 + [{"status": "x"}]}}
    assert sbs.batch_row(record) == ["fuse_gelu", "8", "80.0", "10.0", "16.0", "2.0", "7/8"]


def test_missing_kernelbench_dependencies_get_stand_ins_with_defaults():
    class Result(kernelbench_eval_one._BaseModel):
        compiled: bool = False
        metadata: dict = {}

    a, b = Result(compiled=True), Result()
    a.metadata["k"] = 1
    assert a.compiled and not b.compiled and b.metadata == {}  # defaults are not shared
    anything = kernelbench_eval_one._Anything()
    assert isinstance(anything.load_dotenv(), kernelbench_eval_one._Anything)


def test_the_table_names_the_modules_kernelbench_ran_without():
    record = {"name": "add", "kernelbench_cold": {"wall_s": 1.0, "stubbed": ["litellm"]},
              "kernelbench_warm": {"wall_s": 1.0, "stubbed": ["litellm", "openai"]}}
    assert "stand-ins for modules not installed here (never called by an evaluation): " \
        "litellm, openai" in sbs.render([record], [])
