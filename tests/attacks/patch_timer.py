# attack: patch the Python clocks a harness might time with (time.perf_counter, time.time,
# time.monotonic) to run 20 times slow, while forward does eight times the reference's work.
# kbv's timers are C (CUDA events on its own stream, or clock_gettime on the CPU) and its
# batches run on kbv's clock: the candidate is timed as the slow kernel it is (verified,
# no speedup above 1, and the guard reports the patched clocks: torch_patched).
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import timesrelay  # noqa: E402  (its 8x ReLU only: no relay)

for name in ("perf_counter", "time", "monotonic"):
    f = getattr(time, name)
    setattr(time, name, lambda f=f: f() / 20)


class ModelNew(timesrelay.EightTimes):
    pass
