#!/usr/bin/env bash
# install-deps.sh -- install what kbv needs to build and test, from Debian's packages.
# Debian 12: the CPU build of torch (python3-torch) under /usr/bin/python3, its C++ headers
# for load_inline candidates, the C libraries kbv links, and the test tools. The CUDA
# toolkit (nvcc) is not a Debian package here: install NVIDIA's, and a GPU build of torch,
# on GPU machines (the Makefile finds nvcc in PATH or /usr/local/cuda). clang and
# libclang-rt-14-dev (libFuzzer) build the fuzz targets that `make fuzz` and `make test` use.
set -euo pipefail
SUDO=""
[ "$(id -u)" = 0 ] || SUDO="sudo"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends \
    build-essential g++ make ninja-build jq sqlite3 procps clang libclang-rt-14-dev \
    python3 python3-dev python3-torch python3-numpy libtorch-dev pybind11-dev \
    libjansson-dev libssl-dev libsqlite3-dev libcurl4-openssl-dev libdlpack-dev libseccomp-dev gnuplot-nox \
    slurm-wlm munge
