# forge.py -- shared by the reply-forging attacks (tests/attacks/cases.txt): what a candidate's
# native code can do to kbv's control channel. The worker answers kbv on fd 4; code in the
# worker's process can write a reply of its own there first, and then keep the real one from
# ever coming (it sleeps: kbv's step timeout, or kbv's refusal, ends it).
import json
import os
import time


def own_output_path(index=0):
    """The file kbv will read for output `index` of the first forward of case 0."""
    return os.path.join(os.getcwd(), "case0_run0_%d.kbt" % index)


def tensor_header(shape, dtype_code=9):
    """A .kbt header (docs/formats.md) declaring a float32 tensor of `shape`."""
    import struct
    n = 4
    for s in shape:
        n *= s
    h = b"KBVTNSR1" + struct.pack("<IIQ", dtype_code, len(shape), n)
    h += b"".join(struct.pack("<q", s) for s in shape)
    strides, acc = [], 1
    for s in reversed(shape):
        strides.insert(0, acc)
        acc *= s
    h += b"".join(struct.pack("<q", s) for s in strides)
    return h + b"\0" * (-len(h) % 64)


def right_answer_elsewhere(x):
    """A .kbt file holding relu(x), the right answer, outside kbv's names: its path."""
    target = os.path.join(os.getcwd(), "elsewhere.kbt")
    with open(target, "wb") as f:
        f.write(tensor_header(list(x.shape)) + x.detach().cpu().clamp_min(0).numpy().tobytes())
    return target


def send_and_hang(reply):
    os.write(4, (json.dumps(reply) + "\n").encode())
    time.sleep(3600)


def tensor_reply(path):
    return {"ok": True, "values": [{"kind": "tensor", "path": path, "dtype": "float32", "shape": [128, 8192]}], "aliases": []}
