/* bench.c -- kbv-worker's timing, graph replay and CUPTI audit commands (docs/timing.md).
 *
 * The worker times only its own calls; kbv decides the order of the two workers' samples,
 * when to stop, and every statistic. Each sample runs the call on the timing input set the
 * sample counter picks: one of the sets of addresses ("slots") and one of two sets of values,
 * rotated so that the call sees new values at the same addresses and at new ones.
 *
 * Where a small call's tensors sit in memory changes its time by a few percent, and the
 * same allocation is as fast or as slow in every process (BENCHMARKS.md, "placement"): two
 * workers that each timed one fixed copy of the inputs would differ by that much whatever
 * the interleaving. So the inputs are copied into as many slots as PLACE_BYTES holds (2 to
 * BENCH_SLOTS) and each sample draws its slot at random: every arm's samples average over
 * the same number of placements, and a placement's luck becomes noise the CI sees. The
 * outputs the same way: for a short call (under 2 ms) the worker keeps the outputs of its
 * last few calls ("held", as many as PLACE_BYTES holds) and each sample frees one drawn at
 * random, so the call's new output lands where that one was; and graph replay rotates over
 * graphs captured on several slots.
 *
 * The timing inputs are made by inputs.c (make_inputs), the timer and the call it makes are
 * device.c's, and KernelBench's own timing (--protocol standard) is standard.c's.
 */
#include "bench.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../gpu/audit.h"
#include "../gpu/gpu.h"
#include "../gpu/timer.h"
#include "../proto.h"
#include "device.h"
#include "fail.h"
#include "inputs.h"
#include "values.h"

/* Make kbv's stream (or the default one, on == 0) torch's current stream. */
static int use_stream(worker *w, int on) {
    if (!w->cuda) return 0;
    PyObject *cu = torch_cuda(w);
    PyObject *s = NULL;
    if (cu && on) s = (Py_INCREF(w->stream), w->stream);
    else if (cu) s = PyObject_CallMethod(cu, "default_stream", NULL);
    PyObject *r = s ? PyObject_CallMethod(cu, "set_stream", "O", s) : NULL;
    Py_XDECREF(r), Py_XDECREF(s), Py_XDECREF(cu);
    return r ? 0 : -1;
}

static int is_tensor(worker *w, PyObject *v) { return PyObject_IsInstance(v, w->dl.tensor_type) == 1; }

/* The timing inputs' copies may take this much memory (on the CPU, less). */
#define PLACE_BYTES     (256LL << 20)
#define PLACE_BYTES_CPU (32LL << 20)

/* Bytes of the tensors in v: a tensor, or a tuple or list of values (others count 0); -1
 * with the Python error pending. */
static long long tensor_bytes(worker *w, PyObject *v) {
    if (PyTuple_Check(v) || PyList_Check(v)) {
        long long total = 0;
        for (Py_ssize_t j = 0; j < PySequence_Fast_GET_SIZE(v); j++) {
            long long b = tensor_bytes(w, PySequence_Fast_GET_ITEM(v, j));
            if (b < 0) return -1;
            total += b;
        }
        return total;
    }
    if (!is_tensor(w, v)) return 0;
    PyObject *n = PyObject_CallMethod(v, "numel", NULL), *e = n ? PyObject_CallMethod(v, "element_size", NULL) : NULL;
    long long b = n && e ? PyLong_AsLongLong(n) * PyLong_AsLongLong(e) : -1;
    Py_XDECREF(n), Py_XDECREF(e);
    return b < 0 || PyErr_Occurred() ? -1 : b;
}

static void drop_held(worker *w) {
    for (int k = 0; k < BENCH_SLOTS; k++) Py_CLEAR(w->held[k]);
}

static void drop_batch(worker *w) {
    for (int k = 0; k < w->nbatch; k++) Py_CLEAR(w->batch_out[k]);
    w->nbatch = 0;
}

static void drop_graphs(worker *w) {
    for (int k = 0; k < BENCH_GRAPHS; k++) Py_CLEAR(w->graphs[k]);
    w->ngraphs = 0;
}

/* Spacers: raw device allocations made between the segments that hold the timing inputs'
 * copies (and the held outputs, and the graphs' pools), freed once those exist. Each new
 * segment then sits further along in device memory than the last, so the placements a
 * worker draws from are not all one region: the time of a small call moves with the
 * region of device memory its tensors are in, by up to 5.4% on the H200 (BENCHMARKS.md,
 * "placement"), and the two workers' memory is necessarily in different regions. */
#define SPREAD_BYTES (256LL << 20)

typedef struct spacers {
    void *p[BENCH_SLOTS];
    int n;
    size_t bytes; /* each; 0: not spreading */
} spacers;

/* Spacers for `count` segments: SPREAD_BYTES each, or less so that all of them together take
 * at most a quarter of the free memory; none on the CPU or when that is under 2 MiB. */
static void spacers_init(worker *w, spacers *sp, int count) {
    size_t free_b = 0;
    kbv_err err;
    memset(sp, 0, sizeof *sp);
    if (!w->cuda || count < 1 || gpu_mem_free(&free_b, &err) < 0) return;
    size_t b = free_b / 4 / (size_t)count;
    if (b > (size_t)SPREAD_BYTES) b = (size_t)SPREAD_BYTES;
    sp->bytes = b & ~(((size_t)2 << 20) - 1);
}

static void spacers_add(spacers *sp) {
    if (!sp->bytes || sp->n >= BENCH_SLOTS) return;
    if (gpu_try_malloc(&sp->p[sp->n], sp->bytes) < 0) sp->bytes = 0; /* no room: stop spreading */
    else sp->n++;
}

static void spacers_free(spacers *sp) {
    for (int k = 0; k < sp->n; k++) gpu_free(sp->p[k]);
    sp->n = 0;
}

/* How many copies of `bytes` (input copies, held outputs) the placement budget holds, at most
 * BENCH_SLOTS; BENCH_SLOTS when bytes is 0 (nothing to copy costs nothing). */
static int budget_copies(const worker *w, long long bytes) {
    long long k = bytes > 0 ? (w->cuda ? PLACE_BYTES : PLACE_BYTES_CPU) / bytes : BENCH_SLOTS;
    return k > BENCH_SLOTS ? BENCH_SLOTS : (int)k;
}

/* Draw number `count` of a sequence `salt` among n: at random, the same in every worker. */
static int pick(unsigned long long count, unsigned long long salt, int n) { return (int)(kbv_mix64(count ^ salt) % (uint64_t)n); }

/* A tuple with a clone of every tensor (new addresses, same values). */
static PyObject *clone_args(worker *w, PyObject *vals) {
    Py_ssize_t n = PyTuple_GET_SIZE(vals);
    PyObject *t = PyTuple_New(n);
    for (Py_ssize_t j = 0; t && j < n; j++) {
        PyObject *v = PyTuple_GET_ITEM(vals, j);
        PyObject *c = is_tensor(w, v) ? PyObject_CallMethod(v, "clone", NULL) : (Py_INCREF(v), v);
        if (!c) {
            Py_DECREF(t);
            return NULL;
        }
        PyTuple_SET_ITEM(t, j, c);
    }
    return t;
}

json_t *cmd_bench_setup(worker *w, const json_t *cmd) {
    const json_t *sets = json_object_get(cmd, "sets");
    kbv_err err = {{0}};
    if (!json_is_array(sets) || json_array_size(sets) < 1 || json_array_size(sets) > BENCH_SETS)
        return proto_fail("protocol", "bench_setup needs 1 or 2 input sets", NULL);
    if (!w->model) return proto_fail("protocol", "bench_setup before build", NULL);
    if (make_timer(w, &err) < 0) return proto_fail("cuda", err.msg, NULL);
    for (int k = 0; k < BENCH_SETS; k++) Py_CLEAR(w->vals[k]);
    for (int k = 0; k < BENCH_SLOTS; k++) Py_CLEAR(w->slots[k]);
    w->nslots = 0;
    drop_held(w);
    drop_batch(w);
    w->nheld = -1;
    drop_graphs(w);
    /* Fresh allocator segments for the timing inputs in both workers: the candidate's cache
     * still holds the poison blocks of its checked runs, and inputs carved from them would sit
     * at other offsets than the reference's. */
    if (w->cuda && empty_cache(w) < 0) return fail_python("python", "torch.cuda.empty_cache()");
    w->nvals = (int)json_array_size(sets);
    json_decref(w->fresh_spec);
    const json_t *fr = json_object_get(cmd, "fresh");
    w->fresh_spec = json_is_array(json_object_get(fr, "inputs")) ? json_deep_copy(json_object_get(fr, "inputs")) : NULL;
    w->fresh_seed = json_integer_value(json_object_get(fr, "seed"));
    w->fresh_gen = 0;
    for (size_t j = 0; j < json_array_size(w->fresh_spec); j++)
        w->fresh_gen |= strcmp(json_string_value(json_object_get(json_array_get(w->fresh_spec, j), "kind")) ?: "", "gen") == 0;
    for (int k = 0; k < w->nvals; k++) {
        const json_t *s = json_array_get(sets, (size_t)k);
        json_t *fail = make_inputs(w, json_object_get(s, "inputs"), json_integer_value(json_object_get(s, "seed")), &w->vals[k]);
        if (fail) return fail;
    }
    /* Hidden check sets: values kbv can put into a sample's slot instead of the rotation's
     * (bench's "check"), the same way (copied into the slot's tensors). */
    for (int k = 0; k < BENCH_CHECKS; k++) Py_CLEAR(w->checks[k]);
    w->nchecks = 0;
    const json_t *checks = json_object_get(cmd, "checks");
    if (checks && (!json_is_array(checks) || json_array_size(checks) > BENCH_CHECKS))
        return proto_fail("protocol", "bench_setup: checks must be an array of at most 8 input sets", NULL);
    for (size_t k = 0; k < json_array_size(checks); k++) {
        const json_t *s = json_array_get(checks, k);
        json_t *fail = make_inputs(w, json_object_get(s, "inputs"), json_integer_value(json_object_get(s, "seed")), &w->checks[k]);
        if (fail) return fail;
        w->nchecks = (int)k + 1;
    }
    long long bytes = tensor_bytes(w, w->vals[0]);
    if (bytes < 0) return fail_python("python", "measuring the timing inputs");
    int want = budget_copies(w, bytes);
    if (want < 2) want = 2;
    spacers sp;
    spacers_init(w, &sp, want);
    for (int k = 0; k < want; k++) {
        w->slots[k] = clone_args(w, w->vals[k % w->nvals]);
        w->slot_vals[k] = k % w->nvals;
        if (!w->slots[k]) {
            /* Short of memory for another copy: time on those made (at least two). */
            if (k < 2) {
                spacers_free(&sp);
                return fail_python("python", "copying the timing inputs");
            }
            PyErr_Clear();
            break;
        }
        w->nslots = k + 1;
        spacers_add(&sp);
    }
    spacers_free(&sp);
    w->count = 0;
    if (w->cuda && gpu_sync(&err) < 0) return proto_fail("cuda", err.msg, NULL);
    json_t *r = proto_ok();
    json_object_set_new(r, "fresh", json_boolean(w->fresh_gen));
    json_object_set_new(r, "slots", json_integer(w->nslots));
    if (w->timer) {
        json_object_set_new(r, "l2_bytes", json_integer(gpu_timer_l2_bytes(w->timer)));
        json_object_set_new(r, "peak_mhz", json_real(gpu_timer_peak_mhz(w->timer)));
        json_object_set_new(r, "peak_gbs", json_real(gpu_timer_peak_gbs(w->timer)));
    }
    return r;
}

/* Copy the tensors of tuple src into slot s's (same addresses, new values); -1 with the
 * Python error pending. */
static int copy_into_slot(worker *w, int s, PyObject *src) {
    PyObject *dst = w->slots[s];
    for (Py_ssize_t j = 0; j < PyTuple_GET_SIZE(dst) && j < PyTuple_GET_SIZE(src); j++) {
        PyObject *d = PyTuple_GET_ITEM(dst, j);
        if (!is_tensor(w, d)) continue;
        PyObject *r = PyObject_CallMethod(d, "copy_", "O", PyTuple_GET_ITEM(src, j));
        if (!r) return -1;
        Py_DECREF(r);
    }
    return 0;
}

/* Put values v into slot s. */
static int fill_slot(worker *w, int s, int v) {
    if (w->slot_vals[s] == v) return 0;
    if (copy_into_slot(w, s, w->vals[v]) < 0) return -1;
    w->slot_vals[s] = v;
    return 0;
}

/* Put values no call has seen into slot s: the generated inputs of bench_setup's "fresh" specs
 * (a hidden case's) drawn under tag 0x40000000 + tag (case tags are small), the same in both
 * workers for the same tag. Returns the failure reply, or NULL. */
static json_t *fill_fresh(worker *w, int s, long long tag) {
    json_t *spec = json_deep_copy(w->fresh_spec);
    if (!spec) return proto_fail("io", "out of memory", NULL);
    for (size_t j = 0; j < json_array_size(spec); j++) {
        json_t *e = json_array_get(spec, j);
        if (json_object_get(e, "tag")) json_object_set_new(e, "tag", json_integer(0x40000000LL + (tag & 0x3fffffffLL)));
    }
    PyObject *vals = NULL;
    json_t *fail = make_inputs(w, spec, w->fresh_seed, &vals);
    json_decref(spec);
    if (fail) return fail;
    int rc = copy_into_slot(w, s, vals);
    Py_DECREF(vals);
    w->slot_vals[s] = -1;
    return rc < 0 ? fail_python("python", "writing new values into the timing inputs") : NULL;
}

/* CPU mode: wall clock around the call, after overwriting more than the last-level cache. */
static int cpu_sample(worker *w, call_ctx *c, double *ms) {
    if (!w->cpu_flush) {
        long llc = sysconf(_SC_LEVEL3_CACHE_SIZE);
        w->cpu_flush_bytes = 2 * (size_t)(llc > 0 ? llc : (32L << 20));
        if (w->cpu_flush_bytes > (64u << 20)) w->cpu_flush_bytes = 64u << 20; /* a whole socket's L3 is not ours */
        w->cpu_flush = malloc(w->cpu_flush_bytes);
        if (!w->cpu_flush) w->cpu_flush_bytes = 0;
    }
    if (w->cpu_flush) memset(w->cpu_flush, (int)(w->count & 0xff), w->cpu_flush_bytes);
    struct timespec a, b;
    clock_gettime(CLOCK_MONOTONIC, &a);
    int rc = do_call(c);
    clock_gettime(CLOCK_MONOTONIC, &b);
    *ms = (double)(b.tv_sec - a.tv_sec) * 1e3 + (double)(b.tv_nsec - a.tv_nsec) / 1e6;
    return rc;
}

/* The first replay uploads the graph: done here, so that no timed replay is a graph's first. */
static const char kCapture[] = "import torch\n"
                               "def capture(model, args, stream):\n"
                               "    g = torch.cuda.CUDAGraph()\n"
                               "    with torch.cuda.graph(g, stream=stream):\n"
                               "        out = model(*args)\n"
                               "    g.replay()\n"
                               "    torch.cuda.synchronize()\n"
                               "    return g, out\n";

/* Capture the call into CUDA graphs over slots 0, 1, ... (values set 0): one, or for a short
 * call (outputs held) up to BENCH_GRAPHS. 0, or -1 with the error pending when not even the
 * first could be captured. */
static int capture_graphs(worker *w) {
    PyObject *code = Py_CompileString(kCapture, "<kbv capture>", Py_file_input);
    PyObject *mod = code ? PyImport_ExecCodeModule("_kbv_capture", code) : NULL;
    Py_XDECREF(code);
    int want = w->nheld > 0 ? (w->nslots < BENCH_GRAPHS ? w->nslots : BENCH_GRAPHS) : 1;
    drop_held(w); /* the graphs' pools take their memory */
    spacers sp;
    spacers_init(w, &sp, want);
    for (int k = 0; mod && k < want; k++) {
        PyObject *g = fill_slot(w, k, 0) == 0 ? PyObject_CallMethod(mod, "capture", "OOO", w->model, w->slots[k], w->stream) : NULL;
        if (!g) break;
        w->graphs[k] = g;
        w->ngraphs = k + 1;
        spacers_add(&sp);
    }
    spacers_free(&sp);
    Py_XDECREF(mod);
    if (w->ngraphs == 0) return -1;
    PyErr_Clear(); /* a later capture that failed (no memory for it): replay the ones made */
    return 0;
}

/* bench {arm, n, warmup_s, tf32, prime, fresh}: n valid samples of one arm; the last sample's
 * outputs are kept until the next bench, for kbv to ask for them (bench_save) or not after the
 * call has returned: nothing in the call says whether its outputs will be checked. With
 * fresh (a tag), the samples run on a hidden case's inputs drawn under that tag (fill_fresh):
 * tag 0 gives the same values every time, any other tag new ones; kbv compares the two
 * (value_cache_check). With prime,
 * each sample is preceded by one untimed call on the same input tensors holding the other
 * value set (then refilled with the sample's), so that the
 * timed call never runs first after the other worker's work: its code and page mappings are
 * as warm as in a loop of calls, whichever process ran before. */
json_t *cmd_bench(worker *w, const json_t *cmd) {
    const char *arm = json_string_value(json_object_get(cmd, "arm"));
    long long n = json_integer_value(json_object_get(cmd, "n"));
    double warmup = json_number_value(json_object_get(cmd, "warmup_s"));
    int prime = json_is_true(json_object_get(cmd, "prime"));
    const json_t *fj = json_object_get(cmd, "fresh"), *cj = json_object_get(cmd, "check");
    long long fresh = json_is_integer(fj) ? json_integer_value(fj) : -1;
    long long check = json_is_integer(cj) ? json_integer_value(cj) : -1;
    kbv_err err = {{0}};
    if (!arm) return proto_fail("protocol", "bench needs an arm", NULL);
    if (cj && (check < 0 || check >= w->nchecks || n != 1 || warmup > 0 || fresh >= 0))
        return proto_fail("protocol", "bench: check names no check set (or comes with more than one plain sample)", NULL);
    if (!w->slots[0]) return proto_fail("protocol", "bench before bench_setup", NULL);
    if (n < 0 || n > 100000) return proto_fail("protocol", "bench: n out of range", NULL);
    json_t *tf = json_object_get(cmd, "tf32");
    if (w->cuda && json_is_boolean(tf) && set_tf32(w, json_is_true(tf)) < 0) PyErr_Clear();
    call_ctx c = {0};
    int graph = strcmp(arm, "graph") == 0, empty = strcmp(arm, "empty") == 0;
    Py_CLEAR(w->last_out); /* the last call's outputs go before this call's samples */
    drop_batch(w);
    if (use_stream(w, 1) < 0) return fail_python("python", "setting kbv's stream");
    json_t *fail = NULL;
    if (strcmp(arm, "model") == 0) c.callable = w->model;
    else if (strcmp(arm, "compile") == 0) {
        if (!w->compiled) {
            PyObject *fn = PyObject_GetAttrString(w->dl.torch, "compile");
            w->compiled = fn ? PyObject_CallOneArg(fn, w->model) : NULL;
            Py_XDECREF(fn);
            if (!w->compiled) fail = fail_python("compile", "torch.compile(model)");
        }
        c.callable = w->compiled;
    } else if (graph) {
        if (!w->cuda) fail = proto_fail("graph", "graph replay needs a GPU", NULL);
        else if (!w->ngraphs && capture_graphs(w) < 0) fail = fail_python("graph", "capturing the call in a CUDA graph");
    } else if (!empty || !w->cuda) fail = proto_fail("protocol", "bench: unknown arm (or empty without a GPU)", NULL);
    if (fail) {
        use_stream(w, 0);
        PyErr_Clear();
        return fail;
    }
    json_t *ms = json_array(), *mhz = json_array();
    int throttled = 0, expired = 0, last_v = 0, fresh_done = 0, fresh_failed = 0;
    double t0 = kbv_now();
    long long done = 0, tries = 0, warm = 0, warm_until = 2;
    double warm_ms = 0;
    int gk = 0; /* the graph replayed */
    spacers sp = {0};
    while (warmup > 0 ? (kbv_now() - t0 < warmup || warm < warm_until) : done < n) {
        if (warmup <= 0 && tries > 3 * n + 10) break; /* throttled too often: report what there is */
        tries++;
        if (graph) gk = pick(w->count, 0x6A9E, w->ngraphs);
        /* value_cache_check's rounds (fresh) always use slot 0: on seen and on new values alike,
         * at an address the call has seen, so that only the values' novelty differs (a cache
         * keyed on address and content must hit on the seen ones). */
        int s = graph ? gk : fresh >= 0 ? 0 : pick(w->count, 0x51075107ULL, w->nslots), v = w->nvals > 1 ? (int)(w->count & 1) : 0;
        /* One held output drawn at random makes room for this call's; while the warm-up fills
         * them, the first empty one, after a spacer (each may take a new segment). */
        int h = !graph && !empty && w->nheld > 0 ? pick(w->count, 0x4E1D, w->nheld) : -1;
        for (int k = 0; h >= 0 && warmup > 0 && k < w->nheld; k++)
            if (!w->held[k]) {
                h = k;
                spacers_add(&sp);
                break;
            }
        w->count++;
        Py_CLEAR(c.out);
        if (h >= 0) Py_CLEAR(w->held[h]);
        if (graph) {
            Py_XDECREF(c.callable);
            c.callable = PyObject_GetAttrString(PyTuple_GET_ITEM(w->graphs[gk], 0), "replay");
            if (!c.callable) {
                fail = fail_python("graph", "graph.replay");
                break;
            }
        }
        /* The untimed call runs on the other value set: a candidate that answers a call with
         * the previous call's result must not be handed the right one by it. */
        int primed = prime && w->cuda && !empty && warmup <= 0;
        int fresh_now = fresh >= 0 && w->fresh_gen && !graph && !empty && warmup <= 0;
        if (!empty && (primed || !fresh_now) && fill_slot(w, s, primed && w->nvals > 1 ? 1 - v : v) < 0) {
            fail = fail_python("python", "rotating the timing inputs");
            break;
        }
        if (!graph && !empty) c.args = w->slots[s];
        last_v = check >= 0 ? (int)(BENCH_SETS + check) : fresh_now ? -1 : v;
        if (primed) {
            if (do_call(&c) < 0) {
                fail = fail_python(strcmp(arm, "compile") == 0 ? "compile" : graph ? "graph" : "python", "untimed call before a sample");
                break;
            }
            Py_CLEAR(c.out);
            w->slot_vals[s] = -1; /* the call may write its inputs: put the values back */
            if (!fresh_now && fill_slot(w, s, v) < 0) {
                fail = fail_python("python", "rotating the timing inputs");
                break;
            }
        }
        /* after the untimed call: the sample itself */
        if (check >= 0 && !graph && !empty) { /* a hidden check: its values, by the same copy */
            if (copy_into_slot(w, s, w->checks[check]) < 0) {
                fail = fail_python("python", "rotating the timing inputs");
                break;
            }
            w->slot_vals[s] = -1;
        }
        if (fresh_now) {
            /* New values that cannot be made (no memory for them) are kbv's problem, not the
             * candidate's: this worker stops drawing them and the sample runs on a known set. */
            json_t *why = fill_fresh(w, s, fresh + done);
            if (why) {
                json_decref(why);
                PyErr_Clear();
                w->fresh_gen = 0, fresh_now = 0, fresh_failed = 1, last_v = v;
                w->slot_vals[s] = -1;
                if (fill_slot(w, s, v) < 0) {
                    fail = fail_python("python", "rotating the timing inputs");
                    break;
                }
            }
        }
        fresh_done = fresh_now;
        gpu_sample gs = {0};
        int call_failed = 0;
        if (!w->cuda) {
            call_failed = cpu_sample(w, &c, &gs.ms) < 0;
        } else if (gpu_timer_sample(w->timer, empty ? gpu_timer_launch_empty : do_call, empty ? (void *)w->timer : (void *)&c, &gs, &call_failed,
                                    &err) < 0) {
            fail = proto_fail("cuda", err.msg, NULL);
            break;
        }
        if (call_failed) {
            fail = fail_python(strcmp(arm, "compile") == 0 ? "compile" : graph ? "graph" : "python", "timed call");
            break;
        }
        if (h >= 0) w->held[h] = (Py_INCREF(c.out), c.out);
        if (warmup > 0) {
            warm_ms = gs.ms;
            warm++;
            if (warm > 100000) break;
            /* The first warm-up of a worker decides how many outputs to hold, and then fills
             * them, so that no timed call is the one that grows the allocator's pool. */
            if (w->nheld < 0 && !graph && !empty && warm >= warm_until && kbv_now() - t0 >= warmup) {
                long long b = tensor_bytes(w, c.out);
                PyErr_Clear();
                int k = b > 0 && warm_ms < 2.0 ? budget_copies(w, b) : 0;
                w->nheld = k < 2 ? 0 : k;
                warm_until = warm + 2 * w->nheld;
                spacers_init(w, &sp, w->nheld);
            }
            continue;
        }
        expired += gs.cushion_expired;
        if (gs.throttled) {
            throttled++;
            usleep(50000); /* nvbench's throttle recovery */
            continue;
        }
        json_array_append_new(ms, json_real(gs.ms));
        json_array_append_new(mhz, json_real(gs.sm_mhz));
        done++;
    }
    if (!fail && c.out && !empty) { /* kept for bench_save */
        PyObject *out = c.out;
        c.out = NULL;
        if (graph) { /* replay() returns None: the outputs are the captured ones */
            Py_DECREF(out);
            out = PyTuple_GET_ITEM(w->graphs[gk], 1);
            Py_INCREF(out);
        }
        w->last_out = out, w->last_set = last_v;
    }
    spacers_free(&sp);
    Py_CLEAR(c.out);
    if (graph) Py_XDECREF(c.callable);
    use_stream(w, 0);
    PyErr_Clear();
    if (fail) {
        json_decref(ms), json_decref(mhz);
        return fail;
    }
    json_t *r = proto_ok();
    json_object_set_new(r, "ms", ms);
    json_object_set_new(r, "sm_mhz", mhz);
    json_object_set_new(r, "throttled", json_integer(throttled));
    json_object_set_new(r, "cushion_expired", json_integer(expired));
    json_object_set_new(r, "warmup_samples", json_integer(warm));
    json_object_set_new(r, "held", json_integer(w->nheld > 0 ? w->nheld : 0));
    if (graph) json_object_set_new(r, "graphs", json_integer(w->ngraphs));
    json_object_set_new(r, "fresh", json_boolean(fresh_done));
    if (fresh_failed) json_object_set_new(r, "fresh_failed", json_true());
    if (warm) json_object_set_new(r, "warmup_last_ms", json_real(warm_ms));
    return r;
}

/* bench_save {prefix, index}: the outputs of the last timed call (bench), or with index those
 * of that call of the last bench_launch, saved through the worker's C path (values.c, dl.c),
 * with the value set they were computed from. */
json_t *cmd_bench_save(worker *w, const json_t *cmd) {
    const char *prefix;
    kbv_err err;
    if (proto_get_str(cmd, "prefix", &prefix, &err) < 0) return proto_fail("protocol", err.msg, NULL);
    const json_t *ij = json_object_get(cmd, "index");
    PyObject *out = w->last_out;
    int set = w->last_set;
    if (ij) {
        long long i = json_is_integer(ij) ? json_integer_value(ij) : -1;
        if (i < 0 || i >= w->nbatch) return proto_fail("protocol", "bench_save: no such call of the last bench_launch", NULL);
        out = w->batch_out[i], set = w->batch_set[i];
    }
    if (!out) return proto_fail("protocol", "bench_save before a timed call", NULL);
    char why[300];
    Py_INCREF(out);
    PyObject *seq = output_seq(w, out, why, sizeof why); /* steals the reference */
    json_t *saved = seq ? save_values(w, seq, prefix, "output", "timed output") : proto_fail("output", why, NULL);
    Py_XDECREF(seq);
    if (!json_is_true(json_object_get(saved, "ok"))) return saved;
    json_t *r = proto_ok();
    json_object_set(r, "values", json_object_get(saved, "values"));
    json_object_set_new(r, "set", json_integer(set));
    json_decref(saved);
    return r;
}

/* bench_launch {arm, calls, tf32}: `calls` calls of the model (arm "model") on the timing inputs,
 * each on a slot drawn at random with the values it holds, one after another without waiting
 * for the device; or as many launches of kbv's empty kernel (arm "empty", a GPU only; on the
 * CPU nothing). Each call's outputs are kept until the next bench or bench_launch, for kbv to
 * ask for one of them (bench_save with index) or not, after the command has returned. kbv
 * times a run of these and a bench_sync with its own clock (timing.md, "kbv's own clock"): the
 * worker measures nothing here. */
json_t *cmd_bench_launch(worker *w, const json_t *cmd) {
    const char *arm = json_string_value(json_object_get(cmd, "arm"));
    const json_t *cj = json_object_get(cmd, "calls");
    long long calls = json_is_integer(cj) ? json_integer_value(cj) : -1;
    if (!arm) return proto_fail("protocol", "bench_launch needs an arm", NULL);
    if (!w->slots[0]) return proto_fail("protocol", "bench_launch before bench_setup", NULL);
    if (calls < 1 || calls > BENCH_BATCH) return proto_fail("protocol", "bench_launch: calls out of range", NULL);
    int empty = strcmp(arm, "empty") == 0;
    if (!empty && strcmp(arm, "model") != 0) return proto_fail("protocol", "bench_launch: unknown arm", NULL);
    json_t *tf = json_object_get(cmd, "tf32");
    if (w->cuda && json_is_boolean(tf) && set_tf32(w, json_is_true(tf)) < 0) PyErr_Clear();
    Py_CLEAR(w->last_out);
    drop_batch(w);
    if (empty) {
        for (long long i = 0; w->cuda && i < calls; i++)
            if (gpu_timer_launch_empty(w->timer) < 0) return proto_fail("cuda", "launching kbv's empty kernel", NULL);
        return proto_ok();
    }
    if (use_stream(w, 1) < 0) return fail_python("python", "setting kbv's stream");
    call_ctx c = {w->model, NULL, NULL};
    json_t *fail = NULL;
    for (long long i = 0; i < calls; i++) {
        int s = pick(w->count, 0xBA7C4ULL, w->nslots), v = w->slot_vals[s];
        w->count++;
        if (v < 0) { /* a fresh round left other values here: put a known set back */
            v = w->nvals > 1 ? (int)(w->count & 1) : 0;
            if (fill_slot(w, s, v) < 0) {
                fail = fail_python("python", "rotating the timing inputs");
                break;
            }
        }
        c.args = w->slots[s];
        if (do_call(&c) < 0) {
            fail = fail_python("python", "a batched call");
            break;
        }
        w->batch_out[i] = c.out, w->batch_set[i] = v, w->nbatch = (int)i + 1;
        c.out = NULL;
    }
    use_stream(w, 0);
    if (fail) {
        PyErr_Clear();
        return fail;
    }
    return proto_ok();
}

/* bench_sync: wait for the device (kbv's clock stops at this reply). */
json_t *cmd_bench_sync(worker *w, const json_t *cmd) {
    (void)cmd;
    kbv_err err = {{0}};
    if (w->cuda && gpu_sync(&err) < 0) return proto_fail("cuda", err.msg, NULL);
    return proto_ok();
}

/* Whether a (demangled) kernel name contains one of the candidate's own kernel names as a
 * whole identifier. */
static int authored(const char *name, const json_t *names) {
    for (size_t i = 0; i < json_array_size(names); i++) {
        const char *id = json_string_value(json_array_get(names, i));
        size_t n = id ? strlen(id) : 0;
        for (const char *p = n ? strstr(name, id) : NULL; p; p = strstr(p + 1, id)) {
            int before =
                p == name || !(p[-1] == '_' || (p[-1] >= 'a' && p[-1] <= 'z') || (p[-1] >= 'A' && p[-1] <= 'Z') || (p[-1] >= '0' && p[-1] <= '9'));
            char a = p[n];
            int after = !(a == '_' || (a >= 'a' && a <= 'z') || (a >= 'A' && a <= 'Z') || (a >= '0' && a <= '9'));
            if (before && after) return 1;
        }
    }
    return 0;
}

/* audit {authored: [names]}: one call traced by CUPTI, after one untraced call. */
json_t *cmd_audit(worker *w, const json_t *cmd) {
    kbv_err err = {{0}};
    if (!w->cuda || !w->audit) return proto_fail("audit", w->cuda ? "kbv-worker was built without CUPTI" : "no audit on the CPU", NULL);
    if (!w->slots[0]) return proto_fail("protocol", "audit before bench_setup", NULL);
    const json_t *names = json_object_get(cmd, "authored");
    drop_held(w);
    if (use_stream(w, 1) < 0 || fill_slot(w, 0, 0) < 0) return fail_python("python", "preparing the audited call");
    call_ctx c = {w->model, w->slots[0], NULL};
    if (do_call(&c) < 0) {
        use_stream(w, 0);
        return fail_python("python", "call before the audit");
    }
    Py_CLEAR(c.out);
    PyObject *cu = torch_cuda(w);
    PyObject *r1 = cu ? PyObject_CallMethod(cu, "synchronize", NULL) : NULL;
    PyObject *r2 = r1 ? PyObject_CallMethod(cu, "empty_cache", NULL) : NULL;
    PyObject *r3 = r2 ? PyObject_CallMethod(cu, "reset_peak_memory_stats", NULL) : NULL;
    Py_XDECREF(r1), Py_XDECREF(r2), Py_XDECREF(cu);
    if (!r3) {
        use_stream(w, 0);
        return fail_python("python", "resetting torch's memory statistics");
    }
    Py_DECREF(r3);
    long long torch_before = torch_mem(w, "memory_allocated");
    audit_report ar;
    if (gpu_timer_flush(w->timer, &err) < 0 || audit_begin(gpu_timer_stream(w->timer), &err) < 0) {
        use_stream(w, 0);
        return proto_fail("audit", err.msg, NULL);
    }
    int failed = do_call(&c) < 0;
    int rc = audit_end(gpu_timer_stream(w->timer), &ar, &err);
    json_t *fail = failed ? fail_python("python", "audited call") : NULL;
    Py_CLEAR(c.out);
    use_stream(w, 0);
    if (fail || rc < 0) {
        if (rc == 0) audit_report_free(&ar);
        return fail ? fail : proto_fail(strstr(err.msg, "cupti") ? "audit" : "cuda", err.msg, NULL);
    }
    long long torch_peak = torch_mem(w, "max_memory_allocated");
    /* Aggregate: per kernel name, and what escaped the stop or the stream. */
    json_t *kernels = json_array(), *after = json_array(), *other = json_array();
    long long authored_ns = 0, library_ns = 0, n_auth = 0, n_after = 0, n_other = 0;
    uint64_t first = 0, last = 0;
    for (int i = 0; i < ar.nk; i++) {
        const audit_kernel *k = &ar.k[i];
        long long d = (long long)(k->end - k->start);
        int a = authored(k->name, names);
        if (a) authored_ns += d, n_auth++;
        else library_ns += d;
        if (!first || k->start < first) first = k->start;
        if (k->end > last) last = k->end;
        if (ar.markers && k->end > ar.stop_ns) {
            n_after++;
            if (json_array_size(after) < 8)
                json_array_append_new(after, json_pack("{s:s, s:I}", "name", k->name, "ns_after_stop", (json_int_t)(k->end - ar.stop_ns)));
        }
        if (ar.markers && k->stream != ar.own_stream) {
            n_other++;
            if (json_array_size(other) < 8) json_array_append_new(other, json_pack("{s:s, s:i}", "name", k->name, "stream", (int)k->stream));
        }
        size_t j = 0;
        for (; j < json_array_size(kernels); j++)
            if (strcmp(json_string_value(json_object_get(json_array_get(kernels, j), "name")), k->name) == 0) break;
        if (j == json_array_size(kernels)) {
            if (j >= 64) continue;
            json_array_append_new(kernels, json_pack("{s:s, s:b, s:i, s:I}", "name", k->name, "authored", a, "count", 0, "ns", (json_int_t)0));
        }
        json_t *e = json_array_get(kernels, j);
        json_object_set_new(e, "count", json_integer(json_integer_value(json_object_get(e, "count")) + 1));
        json_object_set_new(e, "ns", json_integer(json_integer_value(json_object_get(e, "ns")) + d));
    }
    json_t *r = proto_ok();
    json_object_set_new(r, "markers", json_boolean(ar.markers));
    json_object_set_new(r, "dropped", json_integer((json_int_t)ar.dropped));
    if (ar.markers) json_object_set_new(r, "empty_kernel_ns", json_integer((json_int_t)ar.empty_ns));
    json_object_set_new(r, "kernels_per_call", json_integer(ar.nk));
    json_object_set_new(r, "authored_kernels", json_integer(n_auth));
    json_object_set_new(r, "authored_ns", json_integer(authored_ns));
    json_object_set_new(r, "library_ns", json_integer(library_ns));
    json_object_set_new(r, "span_ns", json_integer(ar.nk ? (json_int_t)(last - first) : 0));
    json_object_set_new(r, "after_stop", json_integer(n_after));
    json_object_set_new(r, "after_stop_kernels", after);
    json_object_set_new(r, "other_stream", json_integer(n_other));
    json_object_set_new(r, "other_stream_kernels", other);
    json_object_set_new(r, "kernels", kernels);
    json_object_set_new(r, "peak_bytes", json_integer(ar.mem_peak - ar.mem_base));
    json_object_set_new(r, "footprint_bytes", json_integer(ar.mem_base));
    json_object_set_new(r, "allocations", json_integer(ar.allocations));
    json_object_set_new(r, "torch_peak_bytes", json_integer(torch_before >= 0 && torch_peak >= 0 ? torch_peak - torch_before : -1));
    audit_report_free(&ar);
    return r;
}

/* Fingerprints of a call's outputs (a new JSON array), or NULL with *fail set. Steals out. */
static json_t *output_prints(worker *w, PyObject *out, json_t **fail) {
    char why[300];
    kbv_err err = {{0}};
    PyObject *seq = output_seq(w, out, why, sizeof why); /* steals out */
    if (!seq) return *fail = proto_fail("output", why, NULL), NULL;
    json_t *a = seq_prints(w, seq, &err);
    Py_DECREF(seq);
    if (!a) *fail = proto_fail(w->cuda ? "cuda" : "io", err.msg, NULL);
    return a;
}

/* memo_probe: call on value set 0, then write value set 1 into the same tensors without
 * bumping their version counters (through .data) and call again: an honest call's output
 * changes; a cache keyed by pointer, id or version returns the old one (docs/hacks.md). */
json_t *cmd_memo_probe(worker *w, const json_t *cmd) {
    (void)cmd;
    if (!w->slots[0] || w->nvals < 2) return proto_fail("protocol", "memo_probe needs two timing input sets", NULL);
    if (use_stream(w, 1) < 0 || fill_slot(w, 0, 0) < 0) return fail_python("python", "preparing the probe");
    json_t *prints[2] = {NULL, NULL}, *fail = NULL;
    for (int v = 0; v < 2 && !fail; v++) {
        if (v == 1) {
            PyObject *dst = w->slots[0], *src = w->vals[1];
            for (Py_ssize_t j = 0; j < PyTuple_GET_SIZE(dst) && !fail; j++) {
                PyObject *d = PyTuple_GET_ITEM(dst, j);
                if (!is_tensor(w, d)) continue;
                PyObject *data = PyObject_GetAttrString(d, "data");
                PyObject *r = data ? PyObject_CallMethod(data, "copy_", "O", PyTuple_GET_ITEM(src, j)) : NULL;
                if (!r) fail = fail_python("python", "rewriting an input in place");
                Py_XDECREF(r), Py_XDECREF(data);
            }
            w->slot_vals[0] = 1;
            if (fail) break;
        }
        call_ctx c = {w->model, w->slots[0], NULL};
        if (do_call(&c) < 0) {
            fail = fail_python("python", "the probe's call");
            break;
        }
        kbv_err err = {{0}};
        if (w->cuda && gpu_sync(&err) < 0) {
            Py_DECREF(c.out);
            fail = proto_fail("cuda", err.msg, NULL);
            break;
        }
        prints[v] = output_prints(w, c.out, &fail);
    }
    use_stream(w, 0);
    PyErr_Clear();
    if (fail) {
        json_decref(prints[0]), json_decref(prints[1]);
        return fail;
    }
    json_t *r = proto_ok();
    json_object_set_new(r, "before", prints[0]);
    json_object_set_new(r, "after", prints[1]);
    return r;
}

/* The partial rewrite (partial_probe): a small part of one input changed in place, to the
 * other timing set's values at the same places -- one element, 8 scattered ones, or one row of
 * the last dimension -- drawn from seed, the same in both workers. The input is the first
 * contiguous floating one, or the one kbv names (the reference's choice, so that the
 * candidate's process has no say in what is probed). */
static const char kRewrite[] = "import torch\n"
                               "def rewritable(x):\n"
                               "    return isinstance(x, torch.Tensor) and x.is_floating_point() and x.numel() > 1 and x.is_contiguous()\n"
                               "def rewrite(args, src, kind, seed, want):\n"
                               "    if want >= 0:\n"
                               "        j = want\n"
                               "        if j >= len(args) or not rewritable(args[j]):\n"
                               "            return -1\n"
                               "        x = args[j]\n"
                               "    else:\n"
                               "        for j, x in enumerate(args):\n"
                               "            if rewritable(x):\n"
                               "                break\n"
                               "        else:\n"
                               "            return -1\n"
                               "    flat, sflat = x.view(-1), src[j].reshape(-1)\n"
                               "    g = torch.Generator().manual_seed(seed)\n"
                               "    n = flat.numel()\n"
                               "    if kind == 'row' and x.dim() > 1:\n"
                               "        cols = x.shape[-1]\n"
                               "        r = int(torch.randint(n // cols, (1,), generator=g))\n"
                               "        idx = torch.arange(r * cols, (r + 1) * cols)\n"
                               "    else:\n"
                               "        idx = torch.randint(n, (1 if kind == 'one' else 8,), generator=g)\n"
                               "    idx = idx.to(flat.device)\n"
                               "    flat[idx] = sflat[idx]\n"
                               "    return j\n"
                               "def keep(seq):\n"
                               "    return tuple(x.clone() if isinstance(x, torch.Tensor) else x for x in seq)\n";

static void probe_clear(worker *w) {
    Py_CLEAR(w->probe_out[0]);
    Py_CLEAR(w->probe_out[1]);
}

/* partial_probe {kind, seed, input}: slot 0 on value set 0, one call (its outputs cloned, since the
 * second call may write into the same memory), then a small part of one input changed in
 * place (kRewrite) and a second call; both calls' outputs kept for partial_save. The two calls
 * run while kbv holds the GPU alone, their saves (seconds for outputs of a GiB) in partial_save
 * while it shares the GPU (timing.c, stage_partial_probe). */
json_t *cmd_partial_probe(worker *w, const json_t *cmd) {
    const char *kind;
    long long seed;
    kbv_err err = {{0}};
    if (proto_get_str(cmd, "kind", &kind, &err) < 0 || proto_get_int(cmd, "seed", &seed, &err) < 0) return proto_fail("protocol", err.msg, NULL);
    const json_t *wj = json_object_get(cmd, "input");
    long long want = json_is_integer(wj) ? json_integer_value(wj) : -1;
    if (wj && (!json_is_integer(wj) || want < 0 || want > 1 << 16)) return proto_fail("protocol", "partial_probe: input is an input's index", NULL);
    if (!w->slots[0] || w->nvals < 2) return proto_fail("protocol", "partial_probe needs two timing input sets", NULL);
    if (strcmp(kind, "one") != 0 && strcmp(kind, "scattered") != 0 && strcmp(kind, "row") != 0)
        return proto_fail("protocol", "partial_probe: kind is one, scattered or row", NULL);
    if (!w->rewrite) {
        PyObject *code = Py_CompileString(kRewrite, "<kbv rewrite>", Py_file_input);
        PyObject *mod = code ? PyImport_ExecCodeModule("_kbv_rewrite", code) : NULL;
        Py_XDECREF(code);
        w->rewrite = mod ? PyObject_GetAttrString(mod, "rewrite") : NULL;
        w->rewrite_keep = mod && w->rewrite ? PyObject_GetAttrString(mod, "keep") : NULL;
        Py_XDECREF(mod);
        if (!w->rewrite || !w->rewrite_keep) {
            Py_CLEAR(w->rewrite);
            Py_CLEAR(w->rewrite_keep);
            return fail_python("python", "preparing the partial rewrite");
        }
    }
    Py_CLEAR(w->last_out);
    probe_clear(w);
    if (use_stream(w, 1) < 0 || fill_slot(w, 0, 0) < 0) return fail_python("python", "preparing the probe");
    json_t *fail = NULL;
    long long input = -1;
    for (int v = 0; v < 2 && !fail; v++) {
        if (v == 1) {
            PyObject *j = PyObject_CallFunction(w->rewrite, "OOsLL", w->slots[0], w->vals[1], kind, seed, want);
            input = j ? PyLong_AsLongLong(j) : -1;
            Py_XDECREF(j);
            w->slot_vals[0] = -1;
            if (!j) {
                fail = fail_python("python", "rewriting part of an input in place");
                break;
            }
            if (input < 0) break; /* no floating input to rewrite: nothing to probe */
        }
        call_ctx c = {w->model, w->slots[0], NULL};
        if (do_call(&c) < 0) {
            fail = fail_python("python", "the probe's call");
            break;
        }
        char why[300];
        PyObject *seq = output_seq(w, c.out, why, sizeof why); /* steals c.out */
        if (!seq) {
            fail = proto_fail("output", why, NULL);
            break;
        }
        w->probe_out[v] = v == 0 ? PyObject_CallFunctionObjArgs(w->rewrite_keep, seq, NULL) : (Py_INCREF(seq), seq);
        Py_DECREF(seq);
        if (!w->probe_out[v]) fail = fail_python("python", "keeping the probe's outputs");
    }
    use_stream(w, 0);
    PyErr_Clear();
    /* Nothing of the probe left running on the device once kbv lets other evaluations have it. */
    if (!fail && w->cuda && gpu_sync(&err) < 0) fail = proto_fail("cuda", err.msg, NULL);
    if (fail || input < 0) probe_clear(w);
    if (fail) return fail;
    json_t *r = proto_ok();
    json_object_set_new(r, "input", json_integer(input));
    return r;
}

/* partial_save {prefix}: the last partial_probe's outputs saved (PREFIXa<i>.kbt before the
 * rewrite, PREFIXb<i>.kbt after) and let go. */
json_t *cmd_partial_save(worker *w, const json_t *cmd) {
    const char *prefix;
    kbv_err err = {{0}};
    if (proto_get_str(cmd, "prefix", &prefix, &err) < 0) return proto_fail("protocol", err.msg, NULL);
    if (!w->probe_out[0] || !w->probe_out[1]) return proto_fail("protocol", "partial_save before a partial_probe that rewrote an input", NULL);
    json_t *saved[2] = {NULL, NULL}, *fail = NULL;
    for (int v = 0; v < 2 && !fail; v++) {
        char pre[4200];
        snprintf(pre, sizeof pre, "%s%c", prefix, v ? 'b' : 'a');
        saved[v] = save_values(w, w->probe_out[v], pre, "output", "probe output");
        if (!json_is_true(json_object_get(saved[v], "ok"))) fail = saved[v], saved[v] = NULL;
    }
    probe_clear(w);
    PyErr_Clear();
    if (fail) {
        json_decref(saved[0]), json_decref(saved[1]);
        return fail;
    }
    json_t *r = proto_ok();
    json_object_set(r, "before", json_object_get(saved[0], "values"));
    json_object_set(r, "after", json_object_get(saved[1], "values"));
    json_decref(saved[0]), json_decref(saved[1]);
    return r;
}
