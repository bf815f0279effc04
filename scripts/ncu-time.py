"""ncu-time.py PROBLEM.py CANDIDATE.py -- call a candidate the way a profiler needs it.

For docs/BENCHMARKS.md's agreement check only: run under Nsight Compute, e.g.
  ncu --clock-control none --cache-control all --metrics gpu__time_duration.sum \
      --launch-skip 3 --launch-count 5 -k regex:NAME --csv python3 scripts/ncu-time.py P.py C.py
It builds ModelNew from the problem's get_init_inputs(), makes the nominal inputs (seed 0) on
the GPU, and calls the model 8 times. This runs candidate code in-process: it is a measuring
aid, never part of an evaluation.
"""
import importlib.util
import sys

import torch


def load(path, name):
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    prob = load(sys.argv[1], "kbv_problem")
    cand = load(sys.argv[2], "kbv_candidate")
    torch.backends.cuda.matmul.allow_tf32 = True
    torch.backends.cudnn.allow_tf32 = True
    torch.manual_seed(0)
    model = cand.ModelNew(*prob.get_init_inputs()).cuda().eval()
    torch.manual_seed(0)
    inputs = [x.cuda() if torch.is_tensor(x) else x for x in prob.get_inputs()]
    with torch.no_grad():
        for _ in range(8):
            model(*inputs)
    torch.cuda.synchronize()


if __name__ == "__main__":
    main()
