# Not a candidate to evaluate: this file exists to exercise the static inspector (`kbv inspect`,
# src/worker/inspect.c). It holds one instance of every source pattern the inspector reports
# (the static_* findings of docs/hacks.md's Catalogue), each marked with its id, and
# tests/e2e/run.sh checks that `kbv inspect` names exactly these fourteen, none above suspect.
# The fifteenth, static_no_kernel, needs a file with no kernel (run.sh checks it on
# examples/candidates/relu/honest_cpu.py). Nothing below is meant to run: the risky calls sit
# in a function that nobody calls.
import ctypes  # static_ctypes
import inspect  # static_environment_sniffing
import subprocess  # static_network_or_process
import threading  # static_threads

import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

cuda_source = r"""
#include <cuda_fp16.h>
#include <dlfcn.h>

// static_kernel_not_launched: defined, never launched; static_precision_casts: __half
__global__ void never_launched(const __half* x, __half* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = x[i];
}

void side_work() {
    cudaStream_t s;
    cudaStreamCreate(&s);                   // static_streams
    void* h = dlopen("libcupti.so", RTLD_NOW);  // static_profiler_tampering
    (void)h;
}
"""


def _never_called():
    exec("pass")  # static_exec
    with open(__file__) as f:  # static_file_access
        f.read()
    setattr(torch, "relu", torch.relu)  # static_monkeypatch
    torch.backends.cudnn.benchmark = True  # static_global_flags
    return inspect, subprocess, threading, ctypes


class ModelNew(Model):  # noqa: F821 -- the problem's Model; static_subclasses_reference
    def __init__(self):
        super().__init__()
        try:  # static_try_except: load_inline inside try
            self.ext = load_inline(name="kbv_static_patterns", cpp_sources="", cuda_sources=cuda_source)
        except Exception:
            self.ext = None

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.relu(x).half().float()  # static_precision_casts (.half())
