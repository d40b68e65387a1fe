"""The exported package's README: the commands name kernelpro's interpreter, and a kernel not
shown faster than the reference says so."""

from kernelpro_worker.export_readme import readme, shown_faster


def meta(speedup=None, python="/opt/venv/bin/python3"):
    evaluation = {"status": "correct", "criterion": "strict"}
    if speedup:
        evaluation["speedup"] = dict(zip(("estimate", "low", "high"), speedup))
    return {"package": "kernelpro_swish", "op_name": "swish", "device": "cpu",
            "candidate_file": "cpu_swish.py", "problem_file": "problem.py", "extensions": [],
            "init_seed": 42, "evaluation": evaluation, "python": python}


def test_the_install_and_check_commands_name_the_interpreter_kernelpro_used():
    text = readme(meta((2.0, 1.9, 2.1)), ["the benchmark's inputs"])
    assert "/opt/venv/bin/python3 -m pip install --no-build-isolation DIR" in text
    assert "/opt/venv/bin/python3 -m kernelpro_swish.selftest" in text
    assert "\npip install" not in text and "\npython -m" not in text
    assert "Warning" not in text


def test_a_kernel_not_shown_faster_is_exported_with_a_warning():
    for speedup in ((0.13, 0.12, 0.14), (1.01, 0.97, 1.05), None):
        text = readme(meta(speedup), [])
        assert "**Warning: this kernel was not shown faster than the reference**" in text, speedup
    assert shown_faster({"speedup": {"estimate": 1.2, "low": 1.1, "high": 1.3}})
    assert not shown_faster({})
