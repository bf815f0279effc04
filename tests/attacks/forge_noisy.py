# attack: forge_times with its tracks covered. A relay process forked at import sits between
# the worker and kbv on the reply descriptor (fd 4) and divides the times of about 60% of the
# worker's timing replies by 100, leaving the rest as they are, while forward does eight times
# the reference's work. Each round is then either honest (8x slower) or 12x "faster": the
# event speedup's median is the forged one and its 95% CI reaches far below 1.25, too noisy a
# claim for a hack. Until 2026-12-06 such a claim was left as reported ("verified", about 26x
# on the CPU); kbv's clock (batches timed around the commands) now caps it at twice what it
# sees (below 1). The relay draws at random (seeded by its pid), so on a loaded host with few
# timing replies the honest rounds may hold the median: then the claim agrees with kbv's clock,
# below 1, and nothing is capped (cases.txt accepts either).
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import timesrelay  # noqa: E402

timesrelay.install(lambda rng: 100 if rng.random() < 0.6 else 1)


class ModelNew(timesrelay.EightTimes):
    pass
