"""Shared by the sandbox attack candidates: a correct swish without the reference's operators, and
the targets a test fills in.

A candidate's file replaces its `TARGETS = {}` line with the paths, port and marker of the test
that runs it (the strongest attacker knows exactly where the secrets are). Every attack is tried at
import (the build step imports the candidate too) and again on the first forward call.
"""
import torch


def swish(x):
    # x / (1 + exp(-x)): neither aten.sigmoid nor aten.mul, the reference's operators.
    return x / (1 + torch.exp(-x))


def attempt(action):
    """Runs one attack; returns what it got, or None when the sandbox stopped it."""
    try:
        return action()
    except Exception:  # noqa: BLE001 - a refused attack is the expected outcome
        return None
