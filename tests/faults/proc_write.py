# fault: writes kernel-wide /proc files -- /proc/sysrq-trigger (as root without capabilities a
# write there could reboot the machine), /proc/sys/vm/drop_caches and /proc/sys/kernel/hostname.
# The worker's own /proc has those parts bound read-only and Landlock refuses the writes: every
# attempt fails (a runtime_error naming the refusals), while its own thread's name stays writable.
import threading

import torch.nn as nn


class ModelNew(nn.Module):
    def forward(self, x):
        refused = []
        for path in ("/proc/sysrq-trigger", "/proc/sys/vm/drop_caches", "/proc/sys/kernel/hostname"):
            try:
                with open(path, "w") as f:
                    f.write("x" if "sysrq" not in path else "h")  # 'h' only prints sysrq's help
                raise RuntimeError(f"LEAK: wrote {path}")
            except OSError as e:
                refused.append(f"{path}: {e.__class__.__name__}")
        with open(f"/proc/self/task/{threading.get_native_id()}/comm", "w") as f:
            f.write("kbv-fault")
        raise PermissionError("refused: " + "; ".join(refused))
