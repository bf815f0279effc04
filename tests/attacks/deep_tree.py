# attack: a folder chain deeper than PATH_MAX in the worker's scratch folder, which path-based
# cleanup (nftw, rm of a path) cannot remove: it would survive the evaluation. kbv removes
# trees of any depth (openat/unlinkat); the suite checks the scratch base is empty after.
import os
import torch.nn as nn

fd = os.open(".", os.O_RDONLY)
for _ in range(700):  # 700 x 9 bytes: past PATH_MAX
    os.mkdir("dddddddd", dir_fd=fd)
    nfd = os.open("dddddddd", os.O_RDONLY, dir_fd=fd)
    os.close(fd)
    fd = nfd
os.mkdir("closed", 0, dir_fd=fd)
os.close(fd)


class ModelNew(nn.Module):
    def forward(self, x):
        return x.clamp_min(0)
