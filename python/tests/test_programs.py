"""Programs as problems (docs/programs.md): the adapter's forms, its errors, and a program with a
REFERENCE on CPU (the program is the baseline, the reference gives the outputs, and the program
must match them before anything is compared)."""

import os
import textwrap

import pytest
import torch

from kernelpro_worker import programs, reference_step
from kernelpro_worker.common import StepError
from kernelpro_worker.loading import load_problem

BASE = {"device": "cpu", "init_seed": 42, "atol": 1e-2, "rtol": 1e-3}

# A program without Triton (CPU tests): its launcher is plain Python on tensors.
PROGRAM = '''
import torch

def scaled_add(x, y, alpha):
    return x + alpha * y

ENTRY = "scaled_add"

def get_inputs():
    return [torch.randn(64, 32), torch.randn(64, 32)]

def get_init_inputs():
    return [0.5]
'''

REFERENCE = '''
import torch
import torch.nn as nn

class Model(nn.Module):
    def __init__(self, alpha):
        super().__init__()
        self.alpha = alpha

    def forward(self, x, y):
        return torch.add(x, y, alpha=self.alpha)

def get_inputs():
    return [torch.randn(64, 32), torch.randn(64, 32)]

def get_init_inputs():
    return [0.5]
'''


def write(tmp_path, name, text):
    path = tmp_path / name
    path.write_text(textwrap.dedent(text))
    return str(path)


def test_a_program_loads_as_a_problem_whose_model_calls_its_entry(tmp_path):
    module = load_problem(write(tmp_path, "program.py", PROGRAM))
    assert module.KERNELPRO_PROGRAM["kind"] == "python"
    assert module.KERNELPRO_PROGRAM["entry"] == "scaled_add"
    assert module.KERNELPRO_PROGRAM["reference"] is None
    assert module.Model is module.BaselineModel  # no REFERENCE: the program is both
    x, y = module.get_inputs()
    out = module.Model(*module.get_init_inputs())(x, y)
    assert torch.equal(out, x + 0.5 * y)


def test_tensor_init_inputs_move_with_the_model(tmp_path):
    text = PROGRAM.replace("return [0.5]", "return [torch.full((32,), 0.5)]")
    module = load_problem(write(tmp_path, "program.py", text))
    model = module.Model(*module.get_init_inputs())
    assert [name for name, _ in model.named_buffers()] == ["_kp_init_0"]
    x, y = module.get_inputs()
    assert torch.equal(model(x, y), x + 0.5 * y)


def test_with_a_reference_the_program_is_the_baseline_and_checked_against_it(tmp_path):
    write(tmp_path, "reference.py", REFERENCE)
    path = write(tmp_path, "program.py", PROGRAM + '\nREFERENCE = "reference.py"\n')
    module = load_problem(path)
    assert module.Model is not module.BaselineModel
    assert module.Model.__name__ == "Model"
    assert module.KERNELPRO_PROGRAM["reference"] == str(tmp_path / "reference.py")
    assert programs.baseline_class(module) is module.BaselineModel

    meta = reference_step.step_reference(dict(BASE, problem=path, cache_dir=str(tmp_path / "cache"),
                                              check_seeds=[1, 2], extra_seeds=[], timing_seeds=[3]))
    assert meta["status"] == "ok"
    assert any("program.py, python) is the timing baseline; reference.py gives the expected outputs,"
               " and the program matched them on 2 check trials" in n for n in meta["notes"])


def test_a_program_that_disagrees_with_its_reference_is_refused(tmp_path):
    write(tmp_path, "reference.py", REFERENCE)
    wrong = PROGRAM.replace("x + alpha * y", "x - alpha * y") + '\nREFERENCE = "reference.py"\n'
    path = write(tmp_path, "program.py", wrong)
    with pytest.raises(StepError) as err:
        reference_step.step_reference(dict(BASE, problem=path, cache_dir=str(tmp_path / "cache"),
                                           check_seeds=[1], extra_seeds=[], timing_seeds=[3]))
    assert err.value.status == "problem_error"
    assert "the program does not match its REFERENCE on trial check_0, output 0" in err.value.message


def test_the_reference_cache_key_covers_the_reference_file(tmp_path):
    ref = write(tmp_path, "reference.py", REFERENCE)
    path = write(tmp_path, "program.py", PROGRAM + '\nREFERENCE = "reference.py"\n')
    request = dict(BASE, problem=path, check_seeds=[1], extra_seeds=[], timing_seeds=[3])
    before = reference_step._reference_key(request, torch)
    with open(ref, "a") as f:
        f.write("\n# edited\n")
    assert reference_step._reference_key(request, torch) != before


@pytest.mark.parametrize("text, message", [
    ("import torch\ndef get_inputs():\n    return []\n",
     "does not define Model, get_init_inputs (a Triton or CUDA program names its launcher in "
     "ENTRY instead"),
    (PROGRAM.replace('ENTRY = "scaled_add"', 'ENTRY = "missing"'),
     "ENTRY = 'missing' names no function of the module"),
    (PROGRAM.replace('ENTRY = "scaled_add"', "ENTRY = scaled_add"),
     "ENTRY must be the launcher's name as a string"),
    (PROGRAM.replace("def get_init_inputs", "def get_init_inputz"),
     "does not define get_init_inputs()"),
    (PROGRAM + '\nREFERENCE = "nowhere.py"\n', "REFERENCE 'nowhere.py' does not exist"),
])
def test_what_a_program_lacks_is_named(tmp_path, text, message):
    with pytest.raises(StepError) as err:
        load_problem(write(tmp_path, "program.py", text))
    assert err.value.status == "problem_error"
    assert message in err.value.message, err.value.message


CUDA = '''/* kernelpro
ENTRY = "row_sum"
def get_inputs():
    return [torch.randn(128, 64)]
def get_init_inputs():
    return []
*/
#include <torch/extension.h>

__global__ void row_sum_kernel(const float* x, float* out, int rows, int cols) {}

torch::Tensor row_sum(torch::Tensor x) {
  return x.sum(1);
}
'''


def test_a_cuda_programs_block_and_entry_are_read_without_building(tmp_path):
    module = load_problem(write(tmp_path, "program.cu", CUDA))
    assert module.KERNELPRO_PROGRAM == {"kind": "cuda", "path": str(tmp_path / "program.cu"),
                                        "entry": "row_sum", "reference": None}
    assert [tuple(t.shape) for t in module.get_inputs()] == [(128, 64)]
    assert programs.entry_declaration(CUDA, "row_sum") == "torch::Tensor row_sum(torch::Tensor x);"
    vector = "std::vector<torch::Tensor> split(torch::Tensor x, int64_t parts) {\n"
    assert programs.entry_declaration(vector, "split") == \
        "std::vector<torch::Tensor> split(torch::Tensor x, int64_t parts);"


@pytest.mark.parametrize("text, message", [
    (CUDA.replace("/* kernelpro", "/* notes"), "has no /* kernelpro ... */ block"),
    (CUDA.replace("def get_inputs():", "def get_inputs(:"), "its kernelpro block has a syntax error at line 3"),
    (CUDA.replace('ENTRY = "row_sum"', 'ENTRY = "col_sum"'), "no definition of ENTRY 'col_sum'"),
    (CUDA.replace('ENTRY = "row_sum"\n', ""), "defines no ENTRY"),
    (CUDA.replace("return []", "return undefined_name"), None),
])
def test_what_a_cuda_program_lacks_is_named(tmp_path, text, message):
    path = write(tmp_path, "program.cu", text)
    if message is None:  # the block runs; get_init_inputs fails only when called
        module = load_problem(path)
        with pytest.raises(NameError):
            module.get_init_inputs()
        return
    with pytest.raises(StepError) as err:
        load_problem(path)
    assert err.value.status == "problem_error"
    assert message in err.value.message, err.value.message
