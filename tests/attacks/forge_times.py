# attack: a relay process forked at import sits between the worker and kbv on the reply
# descriptor (fd 4) and divides every time the worker reports by 20, while forward does
# eight times the reference's work: an honest answer, slower than the reference, reported
# as several times faster (8.5x "verified" before kbv checked times with its own clock).
# kbv's batches of calls, timed by kbv around the commands, see the candidate as slow:
# timing_inconsistent.
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import timesrelay  # noqa: E402

timesrelay.install(lambda rng: 20)


class ModelNew(timesrelay.EightTimes):
    pass
