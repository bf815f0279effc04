# forge.py -- shared by the reply-forging attacks (tests/attacks/cases.txt): what a candidate's
# native code can do to kbv's control channel. The worker answers kbv on fd 4; code in the
# worker's process can write a reply of its own there first, and then keep the real one from
# ever coming (it sleeps: kbv's step timeout, or kbv's refusal, ends it).
#
# Every command carries a nonce its reply must echo (docs/protocol.md). A writer that does not
# see the commands cannot know it; code in the worker's process can: imported, this module
# puts a relay process on fd 3 (commands) that records each command's nonce before passing
# the command on, so that the forged replies carry the right one and the attacks test what
# kbv does with the rest of the reply (the files it names, its findings).
import json
import os
import time

_NONCE = os.path.join(os.getcwd(), ".kbv_attack_nonce")


def _tap_commands():
    r, w = os.pipe()
    real = os.dup(3)
    if os.fork() == 0:
        os.close(r)
        buf = b""
        while True:
            chunk = os.read(real, 1 << 16)
            if not chunk:
                os._exit(0)
            buf += chunk
            while b"\n" in buf:
                line, buf = buf.split(b"\n", 1)
                try:
                    nonce = json.loads(line).get("nonce", "")
                    with open(_NONCE + ".tmp", "w") as f:
                        f.write(nonce)
                    os.rename(_NONCE + ".tmp", _NONCE)
                except (ValueError, OSError, AttributeError):
                    pass
                os.write(w, line + b"\n")
    os.close(w)
    os.close(real)
    os.dup2(r, 3)
    os.close(r)


_tap_commands()


def current_nonce():
    """The nonce of the command the worker is answering now."""
    try:
        with open(_NONCE) as f:
            return f.read()
    except OSError:
        return ""


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
    reply = dict(reply, nonce=current_nonce())
    os.write(4, (json.dumps(reply) + "\n").encode())
    time.sleep(3600)


def tensor_reply(path):
    return {"ok": True, "values": [{"kind": "tensor", "path": path, "dtype": "float32", "shape": [128, 8192]}], "aliases": []}
