# kbv -- KernelBench-Verified. `make` builds ./kbv and ./kbv-worker; `make help` lists targets.
#
# Knobs: PYTHON=/path/to/python3 (the interpreter whose torch the worker embeds; default: the
# first of python3, /usr/bin/python3 that imports torch), NVCC=/path/to/nvcc or KBV_NO_CUDA=1,
# SANITIZE=1 (what `make check` sets), FUZZ_CC=clang and FUZZ_SECONDS=600 (`make fuzz-run`).

CC      ?= cc
CSTD    := -std=c11 -D_GNU_SOURCE
# Messages are truncated on purpose (bounded error buffers), hence -Wno-format-truncation.
WARN    := -Wall -Wextra -Wshadow -Wno-unused-parameter -Wno-format-truncation
OPT     ?= -O2 -g
BUILD   ?= build

ifeq ($(SANITIZE),1)
  BUILD := build-san
  OPT   := -O1 -g -fno-omit-frame-pointer -fsanitize=address,undefined -fno-sanitize-recover=undefined
  WARN  += -Werror
endif

# --- Python with torch -------------------------------------------------------------------
PYTHON ?= $(shell for p in python3 /usr/bin/python3; do \
            if $$p -c 'import torch' >/dev/null 2>&1; then $$p -c 'import sys; print(sys.executable)'; break; fi; done)
ifeq ($(strip $(PYTHON)),)
  $(error no Python interpreter with torch found: install python3-torch (Debian) or pass PYTHON=/path/to/python3)
endif
PY_VAR   = $(shell $(PYTHON) -c 'import sysconfig; print(sysconfig.get_config_var("$(1)") or "")')
PY_INC  := $(call PY_VAR,INCLUDEPY)
PY_LIBDIR := $(call PY_VAR,LIBDIR)
PY_LDVER := $(call PY_VAR,LDVERSION)
PY_VERSION := $(shell $(PYTHON) -c 'import sys; print(sys.version.split()[0])')
TORCH_VERSION := $(shell $(PYTHON) -c 'import torch; print(torch.__version__)' 2>/dev/null)
PY_LIBS := -L$(PY_LIBDIR) -Wl,-rpath,$(PY_LIBDIR) -lpython$(PY_LDVER) -ldl -lm

# --- CUDA (optional: the build works without it) ----------------------------------------
ifneq ($(KBV_NO_CUDA),1)
  NVCC ?= $(shell command -v nvcc 2>/dev/null || ls /usr/local/cuda/bin/nvcc 2>/dev/null)
endif
ifneq ($(strip $(NVCC)),)
  CUDA_HOME := $(patsubst %/bin/nvcc,%,$(NVCC))
  CUDA_LIBDIR := $(firstword $(wildcard $(CUDA_HOME)/lib64 $(CUDA_HOME)/lib))
  CUDA_CFLAGS := -DKBV_HAVE_CUDA -I$(CUDA_HOME)/include
  CUDA_LIBS := -L$(CUDA_LIBDIR) -Wl,-rpath,$(CUDA_LIBDIR) -lcudart -lstdc++
  CUPTI_H := $(firstword $(wildcard $(CUDA_HOME)/include/cupti.h $(CUDA_HOME)/extras/CUPTI/include/cupti.h))
  CUPTI_LIB := $(firstword $(wildcard $(CUDA_LIBDIR)/libcupti.so $(CUDA_HOME)/extras/CUPTI/lib64/libcupti.so))
  ifneq ($(and $(CUPTI_H),$(CUPTI_LIB)),)
    CUDA_CFLAGS += -DKBV_HAVE_CUPTI -I$(dir $(CUPTI_H))
    CUDA_LIBS += -L$(dir $(CUPTI_LIB)) -Wl,-rpath,$(dir $(CUPTI_LIB)) -lcupti
  endif
endif

# No fused multiply-add anywhere: the input generator must round alike on CPU and GPU.
CFLAGS  := $(CSTD) $(WARN) $(OPT) -ffp-contract=off $(EXTRA_CFLAGS)
NVCC_ARCH ?= -gencode arch=compute_90,code=sm_90 -gencode arch=compute_75,code=compute_75
NVCCFLAGS := -O2 -fmad=false -std=c++17 $(NVCC_ARCH)
LDLIBS  := -ljansson -lcrypto -lm
KBV_LIBS := -lsqlite3 -lseccomp -lcurl -pthread
SAN_RT  := $(if $(filter 1,$(SANITIZE)),ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1,)

# The probe scans multi-GiB inputs three times: its float32 scan is integer work the compiler
# vectorises at -O3 (3x on the CPU here; src/probe.c). Exact results, so no flag changes them.
$(BUILD)/src/probe.o $(BUILD)/w/src/probe.o: CFLAGS += -O3

CORE_SRC := src/util.c src/finding.c src/tensor.c src/proto.c src/proc.c src/judge.c src/result.c src/reply.c src/verdict.c src/eval.c src/session.c src/plan.c src/cases.c src/detect.c src/refcache.c src/timing.c src/standard.c src/gen.c src/probe.c src/perf.c \
            src/stats.c src/db.c src/run.c src/gpus.c src/admit.c src/report.c src/sandbox.c src/llm.c src/generate.c src/slurm.c \
            $(wildcard src/paper.c src/tables.c src/charts.c src/exchange.c)
KBV_SRC  := src/main.c $(CORE_SRC)
WORKER_SRC := src/worker/main.c src/worker/standard.c src/worker/model.c src/worker/forward.c src/worker/bench.c \
              src/worker/inspect.c src/worker/inputs.c src/worker/values.c src/worker/loader.c $(wildcard src/worker/loader_*.c) \
              $(wildcard src/worker/paper.c) \
              src/worker/device.c src/worker/fail.c src/worker/guard.c src/worker/py.c src/worker/pycache.c src/worker/dl.c src/gpu/gpu.c src/gpu/timer.c \
              src/gpu/audit.c src/util.c src/tensor.c src/proto.c \
              src/gen.c src/probe.c
CORE_OBJ := $(CORE_SRC:%.c=$(BUILD)/%.o)
KBV_OBJ  := $(KBV_SRC:%.c=$(BUILD)/%.o)
WORKER_OBJ := $(WORKER_SRC:%.c=$(BUILD)/w/%.o) $(if $(NVCC),$(BUILD)/w/src/gpu/gen_cu.o $(BUILD)/w/src/gpu/bench_cu.o)
UNIT_TESTS := $(patsubst tests/unit/%.c,$(BUILD)/tests/%,$(wildcard tests/unit/test_*.c))

ifeq ($(SANITIZE),1)
  BINS := $(BUILD)/kbv $(BUILD)/kbv-worker
else
  BINS := kbv kbv-worker
endif

.PHONY: all help test test-unit test-e2e test-faults test-cluster test-lanes test-lane-timed test-lane-untimed test-gpu check clean config fuzz fuzz-run fuzz-smoke format bench-judge
all: config $(BINS)

help:
	@echo "make            build ./kbv and ./kbv-worker"
	@echo "make test       unit tests, then the CPU suites in two lanes side by side (no GPU needed)"
	@echo "make suite-NAME one suite alone, NAME one of: $(E2E_SUITES) $(FAULT_SUITES) cluster"
	@echo "make test-faults  the fault-injection suite (CPU), the kill-and-resume test and the attack suite"
	@echo "make test-cluster  kbv slurm on a one-node Slurm cluster started here (root; skips without Slurm)"
	@echo "make test-gpu   GPU end-to-end tests (skips with a message where no GPU is present)"
	@echo "make check      the unit and end-to-end tests under ASan/UBSan with -Werror"
	@echo "make fuzz       build the libFuzzer targets build/fuzz/fuzz_proto and fuzz_manifest (needs clang)"
	@echo "make fuzz-run   run each fuzz target for FUZZ_SECONDS (default 600) on build/fuzz/corpus; fails on a crash"
	@echo "make bench-judge  what a case's judging passes cost on one large output, in turn and at once (BENCH_N elements)"
	@echo "make format     apply .clang-format to the C, header and CUDA sources"
	@echo "make clean      remove build outputs"

config:
	@echo "kbv build: python $(PYTHON) ($(PY_VERSION)), torch $(or $(TORCH_VERSION),NOT FOUND)"
	@echo "kbv build: nvcc $(or $(NVCC),not found -- worker built without CUDA, --device cuda unavailable)"
	@echo "kbv build: CUPTI $(if $(and $(CUPTI_H),$(CUPTI_LIB)),$(CUPTI_H) $(CUPTI_LIB),not found -- the audit and GPU memory figures are unavailable)"
	@echo "kbv build: sanitizers $(if $(filter 1,$(SANITIZE)),on (ASan+UBSan),off)"

$(BUILD)/pyconf.h: Makefile
	@mkdir -p $(@D)
	@$(PYTHON) -c 'import sys, json; \
	print("/* generated by the Makefile from", sys.executable, "*/"); \
	print("#define KBV_PY_EXECUTABLE", json.dumps(sys.executable)); \
	print("#define KBV_PY_PATHS", ", ".join(json.dumps(p) for p in sys.path if p))' > $@.tmp && mv $@.tmp $@

# Each object records the headers it included (-MMD -MP: $(BUILD)/**/*.d, read below), so a
# changed header rebuilds exactly the objects that use it.
DEPFLAGS = -MMD -MP

$(BUILD)/%.o: %.c
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $(DEPFLAGS) -c $< -o $@

$(BUILD)/w/%.o: %.c $(BUILD)/pyconf.h
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $(DEPFLAGS) $(CUDA_CFLAGS) -I$(PY_INC) -I$(BUILD) -c $< -o $@

$(BUILD)/w/src/gpu/gen_cu.o: src/gpu/gen.cu
	@mkdir -p $(@D)
	$(NVCC) $(NVCCFLAGS) -MMD -MP -c $< -o $@

$(BUILD)/w/src/gpu/bench_cu.o: src/gpu/bench.cu
	@mkdir -p $(@D)
	$(NVCC) $(NVCCFLAGS) -MMD -MP -c $< -o $@

kbv $(BUILD)/kbv: $(KBV_OBJ)
	$(CC) $(CFLAGS) -o $@ $^ $(KBV_LIBS) $(LDLIBS)

kbv-worker $(BUILD)/kbv-worker: $(WORKER_OBJ)
	$(CC) $(CFLAGS) -o $@ $^ $(PY_LIBS) $(CUDA_LIBS) $(LDLIBS)

$(BUILD)/tests/test_%: tests/unit/test_%.c $(CORE_OBJ)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $(DEPFLAGS) -Isrc -o $@ $< $(CORE_OBJ) $(KBV_LIBS) $(LDLIBS)

$(BUILD)/tests/judge_passes: tests/bench/judge_passes.c $(CORE_OBJ)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $(DEPFLAGS) -Isrc -o $@ $< $(CORE_OBJ) $(KBV_LIBS) $(LDLIBS)

bench-judge: $(BUILD)/tests/judge_passes
	@$(SAN_RT) $(BUILD)/tests/judge_passes $(BENCH_N)

test-unit: $(UNIT_TESTS)
	@fail=0; for t in $(UNIT_TESTS); do $(SAN_RT) $$t || fail=1; done; exit $$fail

# One target per suite (suite-NAME), so that a suite runs alone, in its group (test-e2e,
# test-faults, test-cluster) or in a lane of `make test`. Under sanitizers a candidate's
# deliberate segfault must stay a SIGSEGV (handle_segv=0), and a problem's impossible
# allocation a failed one that torch reports (allocator_may_return_null=1).
KBV_ABS  = $(abspath $(firstword $(BINS)))
SAN_E2E  = $(if $(filter 1,$(SANITIZE)),ASAN_OPTIONS=handle_segv=0:detect_leaks=1,)
SAN_KBV  = $(if $(filter 1,$(SANITIZE)),KBV_SANITIZED=1 ASAN_OPTIONS=handle_segv=0:detect_leaks=1,)
SAN_ZOO  = $(if $(filter 1,$(SANITIZE)),KBV_SANITIZED=1 ASAN_OPTIONS=handle_segv=0:detect_leaks=1:max_malloc_fill_size=1073741824,)
SAN_NULL = $(if $(filter 1,$(SANITIZE)),ASAN_OPTIONS=handle_segv=0:detect_leaks=1:allocator_may_return_null=1,)

suite-run: $(BINS)
	@$(SAN_E2E) KBV=$(KBV_ABS) tests/e2e/run.sh
suite-zoo: $(BINS)
	@$(SAN_ZOO) KBV=$(KBV_ABS) tests/zoo.sh cpu
suite-run-db: $(BINS)
	@$(SAN_E2E) KBV=$(KBV_ABS) tests/e2e/run_db.sh
suite-bad-input: $(BINS)
	@$(SAN_NULL) KBV=$(KBV_ABS) tests/e2e/bad_input.sh
suite-admission: $(BINS)
	@$(SAN_E2E) KBV=$(KBV_ABS) tests/e2e/admission.sh
suite-exchange: $(BINS)
	@$(SAN_E2E) KBV=$(KBV_ABS) tests/e2e/exchange.sh
suite-report-figures: $(BINS)
	@$(SAN_E2E) KBV=$(KBV_ABS) tests/e2e/report_figures.sh
suite-generate: $(BINS)
	@$(SAN_E2E) KBV=$(KBV_ABS) tests/e2e/generate.sh
suite-native: $(BINS)
	@$(SAN_E2E) KBV=$(KBV_ABS) tests/e2e/native.sh
suite-pipeline: $(BINS)
	@$(SAN_E2E) KBV=$(KBV_ABS) tests/e2e/pipeline.sh
suite-fastbuild: $(BINS)
	@$(SAN_E2E) KBV=$(KBV_ABS) tests/e2e/fastbuild.sh
# The fault-injection suite, the kill-and-resume test and the attack suite (docs/RELIABILITY.md,
# docs/security.md).
suite-faults: $(BINS)
	@$(SAN_KBV) KBV=$(KBV_ABS) tests/faults/run.sh cpu
suite-kill-resume: $(BINS)
	@$(SAN_E2E) KBV=$(KBV_ABS) tests/faults/kill_resume.sh
suite-attacks: $(BINS)
	@$(SAN_KBV) KBV=$(KBV_ABS) tests/attacks/run.sh cpu
# kbv slurm on a one-node Slurm cluster started on this machine (docs/cluster.md); needs root and
# Debian's slurm-wlm and munge (scripts/install-deps.sh), skips with a message without them.
suite-cluster: $(BINS)
	@$(SAN_E2E) KBV=$(KBV_ABS) tests/cluster/slurm.sh

E2E_SUITES    := run zoo run-db bad-input admission exchange report-figures generate native pipeline fastbuild
FAULT_SUITES  := faults kill-resume attacks
test-e2e: all
	@for s in $(E2E_SUITES); do $(MAKE) --no-print-directory suite-$$s || exit 1; done
test-faults: all
	@for s in $(FAULT_SUITES); do $(MAKE) --no-print-directory suite-$$s || exit 1; done
test-cluster: suite-cluster

# `make test` runs the suites in two lanes side by side (tests/lane.sh; one suite at a time left
# one of CI's two cores idle half the time). The suites whose expected verdicts rest on kbv's
# timing detectors (e2e/run.sh, the zoo, the faults and the attacks) share the timed lane, with
# bad_input.sh (its candidates' timeouts are short); the others, which run with --no-timing or
# time nothing, run 10 nicer in the other lane, so that the timed suites keep the CPU they had
# when each ran alone. Each lane runs all its suites and names the ones that failed.
TIMED_LANE    := $(addprefix suite-,run zoo faults attacks bad-input)
UNTIMED_LANE  := $(addprefix suite-,run-db admission exchange report-figures generate native pipeline \
                   fastbuild kill-resume cluster) fuzz-smoke
test-lanes: test-lane-timed test-lane-untimed
test-lane-timed: $(BINS)
	@tests/lane.sh timed "$(MAKE)" $(TIMED_LANE)
test-lane-untimed: $(BINS)
	@nice -n 10 tests/lane.sh untimed "$(MAKE)" $(UNTIMED_LANE)

test: all test-unit
	@$(MAKE) --no-print-directory -j2 test-lanes

$(BUILD)/tests/gen_check: tests/gpu/gen_check.c $(BUILD)/w/src/gen.o $(BUILD)/w/src/gpu/gen_cu.o $(BUILD)/w/src/util.o $(BUILD)/w/src/tensor.o
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $(CUDA_CFLAGS) -Isrc -o $@ $^ $(CUDA_LIBS) $(LDLIBS)

# A diagnosis tool: can CUDA come up under the sandbox (docs/security.md "On a GPU")?
# -rdynamic lets libcuda bind to the probe's own open() & co., which log what is refused.
$(BUILD)/tests/sb_probe: tests/gpu/sb_probe.c $(CORE_OBJ)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -Isrc -rdynamic -o $@ $< $(CORE_OBJ) $(KBV_LIBS) $(LDLIBS) -ldl

test-gpu: all $(if $(NVCC),$(BUILD)/tests/gen_check) $(BUILD)/tests/sb_probe
	@if [ -e /dev/nvidiactl ] && [ -x $(BUILD)/tests/gen_check ]; then $(BUILD)/tests/gen_check; \
	 else echo "SKIP: gen_check needs an NVIDIA GPU and nvcc"; fi
	@KBV=$(abspath $(firstword $(BINS))) GPU_JOBS=$(or $(GPU_JOBS),1) tests/gpu/run.sh '$(GPU_CASES)'
	@if [ -e /dev/nvidiactl ]; then ZOO_JOBS=$${ZOO_JOBS:-6} KBV=$(abspath $(firstword $(BINS))) tests/zoo.sh cuda '$(ZOO_CASES)'; \
	 else echo "SKIP: the zoo on the GPU needs an NVIDIA GPU"; fi
	@KBV=$(abspath $(firstword $(BINS))) tests/faults/run.sh cuda '$(FAULT_CASES)'
	@KBV=$(abspath $(firstword $(BINS))) tests/attacks/run.sh cuda '$(ATTACK_CASES)'

check:
	$(MAKE) SANITIZE=1 test

# --- Fuzzing (docs/RELIABILITY.md): libFuzzer targets built with clang, not part of `make` ----
# The control-message reader/parser (proto.c) and the manifest parser (manifest_parse in
# run.c). The library is built again with coverage and ASan/UBSan into build/fuzz/; new
# corpus entries go to build/fuzz/corpus/T, the committed seeds stay in tests/fuzz/corpus/T.
FUZZ_CC      ?= clang
FUZZ_SECONDS ?= 600
FUZZ_SMOKE_SECONDS ?= 10
FUZZ_DIR     := build/fuzz
FUZZ_SAN     := -fsanitize=address,undefined -fno-sanitize-recover=undefined
FUZZ_CFLAGS  := $(CSTD) -Wall -Wextra -Wshadow -Wno-unused-parameter -O1 -g -fno-omit-frame-pointer -ffp-contract=off \
                -fsanitize=fuzzer-no-link $(FUZZ_SAN)
FUZZ_TARGETS := proto manifest
FUZZ_BINS    := $(FUZZ_TARGETS:%=$(FUZZ_DIR)/fuzz_%)
# Whether $(FUZZ_CC) can link a libFuzzer program (clang plus libclang-rt-14-dev on Debian 12).
FUZZ_PROBE   = printf 'int LLVMFuzzerTestOneInput(const unsigned char *d, unsigned long n) { (void)d; (void)n; return 0; }\n' | \
               $(FUZZ_CC) -x c -fsanitize=fuzzer $(FUZZ_SAN) -o /dev/null - >/dev/null 2>&1

$(FUZZ_DIR)/.probe:
	@mkdir -p $(@D)
	@if $(FUZZ_PROBE); then touch $@; else \
	   echo "make fuzz: '$(FUZZ_CC)' cannot build a libFuzzer program -- install clang and libclang-rt-14-dev" \
	        "(scripts/install-deps.sh) or pass FUZZ_CC=/path/to/clang" >&2; exit 1; fi

$(FUZZ_DIR)/obj/%.o: %.c | $(FUZZ_DIR)/.probe
	@mkdir -p $(@D)
	$(FUZZ_CC) $(FUZZ_CFLAGS) $(DEPFLAGS) -Isrc -c $< -o $@

$(FUZZ_DIR)/libkbv.a: $(CORE_SRC:%.c=$(FUZZ_DIR)/obj/%.o)
	rm -f $@ && ar rcs $@ $^

$(FUZZ_DIR)/fuzz_%: $(FUZZ_DIR)/obj/tests/fuzz/fuzz_%.o $(FUZZ_DIR)/libkbv.a
	$(FUZZ_CC) -fsanitize=fuzzer $(FUZZ_SAN) -o $@ $^ $(KBV_LIBS) $(LDLIBS)

fuzz: $(FUZZ_BINS)
.SECONDARY: $(FUZZ_TARGETS:%=$(FUZZ_DIR)/obj/tests/fuzz/fuzz_%.o)

# One process each (-jobs is not used), one after the other; a crash, leak, UBSan report or
# a >10 s input stops the run, leaves the input in build/fuzz/artifacts/T/ and fails.
fuzz-run: $(FUZZ_BINS)
	@for t in $(FUZZ_TARGETS); do \
	   mkdir -p $(FUZZ_DIR)/corpus/$$t $(FUZZ_DIR)/artifacts/$$t; \
	   echo "fuzz-run: fuzz_$$t for $(FUZZ_SECONDS) s"; \
	   $(FUZZ_DIR)/fuzz_$$t -max_total_time=$(FUZZ_SECONDS) -timeout=10 -max_len=8192 -print_final_stats=1 \
	     -dict=tests/fuzz/$$t.dict -artifact_prefix=$(FUZZ_DIR)/artifacts/$$t/ \
	     $(FUZZ_DIR)/corpus/$$t tests/fuzz/corpus/$$t || { echo "fuzz-run: fuzz_$$t FAILED (input in $(FUZZ_DIR)/artifacts/$$t/)"; exit 1; }; \
	 done

# Part of `make test` where clang can build libFuzzer programs; a message otherwise.
fuzz-smoke:
	@if $(FUZZ_PROBE); then $(MAKE) --no-print-directory fuzz-run FUZZ_SECONDS=$(FUZZ_SMOKE_SECONDS); \
	 else echo "SKIP: the fuzz smoke needs clang with libFuzzer (Debian: clang libclang-rt-14-dev)"; fi

FORMAT_SRC := $(wildcard src/*.[ch] src/worker/*.[ch] src/gpu/*.[ch] src/gpu/*.cu tests/unit/*.[ch] tests/gpu/*.c tests/fuzz/*.c scripts/*.cu)
format:
	clang-format -i $(FORMAT_SRC)

clean:
	rm -rf build build-san kbv kbv-worker

-include $(shell find $(BUILD) -name '*.d' 2>/dev/null)
