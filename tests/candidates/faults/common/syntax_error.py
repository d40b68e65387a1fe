"""Fault (common; any swish problem): a candidate with a Python syntax error.

The return line has an unclosed parenthesis; importing the file raises SyntaxError.
A correct harness must report: compile_error, with Python's SyntaxError message.
"""
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return x.clone(
