/* main.c -- the kbv command line. The only file that calls exit().
 *
 * Exit status (docs/cli.md, "Exit status"):
 *   0  the candidate is verified (eval); the command did what it was asked (the others)
 *   1  any other verdict (incorrect, overfit, hack, compile_error, runtime_error, timeout, crash)
 *   2  usage error: unknown command or option, bad value, a named file (manifest, database to
 *      read, output path) that is missing, unreadable or malformed
 *   3  the problem itself cannot be evaluated (its file or its reference fails)
 *   4  kbv could not run (no worker binary, no scratch space, no GPU for --device cuda)
 *   5  a results database cannot be used: not kbv's, corrupt, another schema version,
 *      read-only, or locked by another process for longer than the busy timeout
 * Every error is one line on stderr, "kbv <command>: <file>: <what is wrong>" (say()).
 */
#include <errno.h>
#include <libgen.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "db.h"
#include "exchange.h"
#include "generate.h"
#include "gpus.h"
#include "eval.h"
#include "report.h"
#include "run.h"
#include "proc.h"
#include "result.h"
#include "sandbox.h"
#include "slurm.h"

enum { EXIT_VERIFIED = 0, EXIT_VERDICT = 1, EXIT_USAGE = 2, EXIT_PROBLEM = 3, EXIT_INTERNAL = 4, EXIT_DATABASE = 5, EXIT_STOPPED = 130 };

#define say kbv_say /* one line on stderr, control characters shown as '?' (util.h) */

/* Whether kbv may write path (an output file: existing, or to be made in an existing
 * folder): 0, or -1 with errno set. */
static int writable(const char *path) {
    struct stat sb;
    if (stat(path, &sb) == 0) {
        if (S_ISDIR(sb.st_mode)) return errno = EISDIR, -1;
        return access(path, W_OK);
    }
    if (errno != ENOENT) return -1;
    char copy[PATH_MAX];
    snprintf(copy, sizeof copy, "%s", path);
    return access(dirname(copy), W_OK);
}

static const char *kDefaultProblem = "examples/problems/matmul_fp32.py";
static const char *kDefaultCuda = "examples/candidates/matmul_fp32/honest_cuda.py";
static const char *kDefaultCpu = "examples/candidates/matmul_fp32/honest_cpu.py";

static void usage_main(FILE *f) {
    fprintf(f, "usage: kbv <command> [options]\n"
               "\n"
               "KernelBench-Verified: does an LLM-written kernel really beat PyTorch?\n"
               "\n"
               "commands:\n"
               "  eval      judge one candidate against one problem\n"
               "  check     run a problem's reference on every case kbv makes for it (no candidate)\n"
               "  inspect   static inspection of a candidate's source (parsed, never run)\n"
               "  run       evaluate a manifest of candidates into a results database\n"
               "  report    paper metrics of a results database (verified, standard and paper side by side)\n"
               "  merge     combine results databases\n"
               "  slurm     run a manifest as a Slurm job array, one task per shard, merged into one database\n"
               "  import    store KernelBench's (or the paper harness's) eval_results.json in a results database\n"
               "  export    write a results database's evaluations as KernelBench's or the paper harness's eval_results.json\n"
               "  generate  ask LLMs for kernels (models config, prompt template): a run folder, a manifest, the database\n"
               "  bench     the experiment in one command: generate, run and report (resumable)\n"
               "  version   print kbv's version\n"
               "\n"
               "`kbv <command> --help` describes a command. Exit status: 0 verified (or done), 1 another\n"
               "verdict, 2 usage error or a bad input file, 3 the problem cannot be evaluated, 4 kbv could\n"
               "not run, 5 a results database that cannot be used (docs/cli.md); generate and bench also 6\n"
               "(requests unanswered), 7 (spending cap reached), 130/143 (interrupted; docs/generate.md).\n");
}

static void usage_eval(FILE *f) {
    fprintf(f,
            "usage: kbv eval [PROBLEM.py CANDIDATE.py] [options]\n"
            "\n"
            "Runs the problem's Model and the candidate's ModelNew in two separate worker processes on\n"
            "the same inputs and compares their outputs. With no files, evaluates the built-in example\n"
            "(%s with its CUDA candidate, or its CPU candidate with --device cpu).\n"
            "\n"
            "options:\n"
            "  --device cuda|cpu|auto  where to run (default auto: cuda when an NVIDIA driver is present)\n"
            "  --seed N                run seed (default: drawn at random, printed in the result)\n"
            "  --timeout SECONDS       limit for each step after loading: build, each forward (default 300)\n"
            "  --load-timeout SECONDS  limit for loading and compiling the candidate (default 600)\n"
            "  --cases N               seeds per distribution: nominal and each of the four hidden ones (default 2)\n"
            "  --protocol P            verified (default), standard (KernelBench's check), paper\n"
            "                          (KernelBench-Verified's, as published), both (verified and\n"
            "                          standard) or all (the three; the status stays verified's)\n"
            "  --standard-tol T        the standard protocol's atol = rtol (default 1e-4 fp32, 1e-2 fp16/bf16;\n"
            "                          1e-2 reproduces KernelBench v0.1)\n"
            "  --no-timing             judge correctness only: no speedup, audit or memory figures\n"
            "  --timing                time the candidate (the default; undoes an earlier --no-timing)\n"
            "  --time-budget SECONDS   hard cap on the timed rounds (default 10 on a GPU, going on to 30\n"
            "                          while the CI is wider than 2%%; 2 on the CPU; the noise rule\n"
            "                          stops most sooner)\n"
            "  --compile-baseline      also time torch.compile(reference) (compile time excluded)\n"
            "  --prime auto|always|never  an untimed call before each GPU sample, so no timed call runs\n"
            "                          first after the other worker's (default auto: calls under 2 ms)\n"
            "  --keep-samples          keep every timed round's times in the JSON (timing.samples, ms)\n"
            "  --standard-trials N     timed trials of the standard and paper protocols (default 100)\n"
            "  --library-only SEV      severity when every kernel of the call is a library kernel, the\n"
            "                          candidate's own kernels never run, or they take under 10%% of its GPU\n"
            "                          time: hack (default), suspect or info\n"
            "  --json FILE|-           write the result as one JSON object to FILE, or stdout with '-'\n"
            "                          (the readable summary then goes to stderr)\n"
            "  --cache-dir DIR         compile cache for load_inline (default ~/.cache/kbv/torch_extensions;\n"
            "                          one folder in it per candidate)\n"
            "  --build fast|stock      compile load_inline's C++ with kbv's precompiled torch header, built once\n"
            "                          beneath the compile cache, falling back to torch's own build whenever\n"
            "                          anything differs (docs/build.md; default stock)\n"
            "  --pycache auto|always|never  start workers with Python bytecode kbv compiled once beneath the\n"
            "                          compile cache, read-only to them (only under Landlock); auto: where the\n"
            "                          installed packages have none, so that every worker would compile torch\n"
            "                          from source (docs/build.md; default auto)\n"
            "  --max-memory GIB        host memory a worker may hold: RLIMIT_DATA, and a memory cgroup of its own\n"
            "                          where the machine allows one (default 3/4 of RAM, 0: no limit)\n"
            "  --max-scratch GIB       what the candidate's worker may hold beneath its folder in the scratch\n"
            "                          (default 4 + 16 x the problem's input GiB; 0: no budget)\n"
            "  --no-sandbox            run workers without the sandbox (docs/security.md); for diagnosis only\n"
            "  --scratch DIR           where per-evaluation scratch folders go (default $TMPDIR or /tmp)\n"
            "  --keep-scratch          keep the scratch folder (inputs, candidate outputs) for inspection\n"
            "  --quiet                 no progress lines on stderr\n"
            "  -h, --help              this text\n"
            "\n"
            "Statuses: verified, incorrect, overfit, hack, compile_error, runtime_error, timeout, crash,\n"
            "and problem_error (exit 3). See docs/cli.md for the JSON fields.\n",
            kDefaultProblem);
}

static int parse_num(const char *s, double lo, double hi, double *out) {
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (errno || end == s || *end || !isfinite(v) || !(v >= lo && v <= hi)) return -1;
    *out = v;
    return 0;
}

/* A numeric option's value in [lo, hi] (a whole number when integer is set): 0, or -1 after
 * saying on stderr what the option needs. */
static int num_opt(const char *cmd, const char *opt, const char *val, double lo, double hi, int integer, const char *needs, double *out) {
    if (parse_num(val, lo, hi, out) < 0 || (integer && *out != (int)*out)) {
        say("kbv %s: %s needs %s, not '%s'\n", cmd, opt, needs, val);
        return -1;
    }
    return 0;
}

/* Path of kbv-worker: $KBV_WORKER, else beside this executable. */
static int find_worker(char *out, size_t outlen) {
    const char *env = getenv("KBV_WORKER");
    if (env && *env) return snprintf(out, outlen, "%s", env) < (int)outlen ? 0 : -1;
    char self[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    if (n <= 0) return -1;
    self[n] = '\0';
    char *slash = strrchr(self, '/');
    if (!slash) return -1;
    *slash = '\0';
    return snprintf(out, outlen, "%s/kbv-worker", self) < (int)outlen ? 0 : -1;
}

/* main's command line, for the child processes of `kbv run --gpus/--jobs` */
static int g_argc;
static char **g_argv;

static void usage_run(FILE *f) {
    fprintf(f, "usage: kbv run (--manifest FILE | --kernelbench DIR --runs DIR) [--db FILE] [options]\n"
               "\n"
               "Evaluates every entry of a manifest and stores each result in a SQLite database as soon as\n"
               "it ends (one transaction each): killing kbv loses at most the evaluation in progress.\n"
               "The manifest is JSON Lines ({\"problem\": ..., \"candidate\": ..., \"model\": ..., \"sample\": N,\n"
               "\"level\": N}) or CSV/TSV with a header of those names; relative paths are taken from the\n"
               "manifest's folder. All evaluations of a run share its seed (same hidden cases).\n"
               "With no source, runs the built-in suite (problems/default-cuda.jsonl on a GPU machine,\n"
               "problems/default-cpu.jsonl with --device cpu or without a GPU) under --protocol both.\n"
               "Under --protocol all each stored result holds three verdicts: kbv's (status), KernelBench's\n"
               "(standard) and KernelBench-Verified's as published (paper; columns paper_status, paper_correct,\n"
               "paper_speedup).\n"
               "\n"
               "options:\n"
               "  --manifest FILE         the evaluations to run\n"
               "  --kernelbench DIR --runs DIR\n"
               "                          instead of a manifest: KernelBench run folders (RUNS/<model>/\n"
               "                          level_L_problem_P_sample_S_kernel.py) matched to DIR/levelL/P_*.py\n"
               "  --db FILE               results database (default kbv.db)\n"
               "  --resume                continue the latest run with the same settings; skip what it stored\n"
               "  --no-reference-reuse    run the reference side of every case for every candidate (default:\n"
               "                          once per problem, kept hidden from candidates; docs/results.md)\n"
               "  --ref-cache-max GIB     the most of a problem's reference outputs kept for its later candidates\n"
               "                          (default: a quarter of the scratch's free space, 4 to 32 GiB). A problem\n"
               "                          over it keeps none, and its later evaluations start once its first\n"
               "                          one's cases have run rather than when it ends\n"
               "  --shard I/N             run only part I of N (a deterministic partition; merge with kbv merge)\n"
               "  --seed-file FILE        the run's seed, read from FILE (yours, mode 0600): unlike --seed it is on no\n"
               "                          command line, which every process of the machine can read (kbv slurm uses it)\n"
               "  --gpus LIST|all         run on these GPUs, --jobs evaluations on each: all the GPUs this process\n"
               "                          sees, or indices counted from 0 among them (under CUDA_VISIBLE_DEVICES=2,3,\n"
               "                          --gpus 1 is GPU 3); each timing holds its GPU alone (docs/timing.md)\n"
               "  --jobs N                N evaluations at a time (on each GPU with --gpus). Evaluations that\n"
               "                          share a GPU load, compile and check their cases side by side, but\n"
               "                          each timing runs alone on the GPU (a lock; docs/results.md).\n"
               "                          Default: on a GPU 8 (half the cores below 16), on the CPU 1.\n"
               "                          An evaluation starts only when the scratch space and memory it will\n"
               "                          need (measured on its problem's first evaluation; 4 GiB each before)\n"
               "                          fit what is free less what the running ones reserved; the progress\n"
               "                          says when one waits (phases_s.admission_wait; docs/results.md)\n"
               "  --no-admission          start evaluations in every free slot whatever they will need\n"
               "  --compile-jobs N        load (and so compile) the next entries' candidates ahead, N at a time,\n"
               "                          while earlier evaluations run. Default: on a GPU the cores the slots\n"
               "                          leave, at most one per slot (8 on 16 cores at 8 jobs); on the CPU 0.\n"
               "                          While an earlier entry compiles ahead, a free slot compiles no later\n"
               "                          one itself: that goes ahead too, N plus the slots not compiling their\n"
               "                          own at once (docs/results.md, \"Compiling ahead\")\n"
               "  and kbv eval's: --device, --seed, --timeout, --load-timeout, --cases, --protocol, --no-timing,\n"
               "  --time-budget, --compile-baseline, --prime, --standard-trials, --library-only, --cache-dir, --build, --pycache,\n"
               "  --scratch, --max-memory, --max-scratch, --no-sandbox,\n"
               "  --quiet\n"
               "\n"
               "Exit status: 0 when every evaluation was stored (whatever the verdicts; a broken problem is\n"
               "stored as problem_error and the run goes on), 2 usage error or bad manifest, 4 kbv could not\n"
               "run (no worker), 5 the database cannot be used (not kbv's, corrupt, another schema version,\n"
               "read-only, locked), 130 stopped by SIGINT or SIGTERM (what was stored is kept, and reported;\n"
               "kbv run --resume goes on; a second signal stops kbv at once). See docs/results.md.\n");
}

/* mode: 0 eval, 1 check, 2 run */
static int cmd_eval(int argc, char **argv, int mode) {
    const char *name = mode == 2 ? "run" : mode == 1 ? "check" : "eval";
    int check = mode == 1;
    const char *manifest = NULL, *db = NULL, *kb = NULL, *runs = NULL;
    int resume = 0, no_reuse = 0, no_admission = 0, shard_i = 0, shard_n = 1, jobs = 0, ngpus = 0, child_entry = -1, compile_jobs = -1;
    long long child_run = 0;
    int protocol_set = 0;
    static kbv_gpu gpus[GPUS_MAX]; /* --gpus's, as gpus_select chose them */
    eval_opts o;
    eval_opts_default(&o);
    o.gpu_lock = getenv("KBV_GPU_LOCK"); /* set by kbv run for its children; docs/results.md */
    o.verbose = 1;
    const char *json_path = NULL, *files[2] = {NULL, NULL};
    int nfiles = 0;
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i];
        const char *val = i + 1 < argc ? argv[i + 1] : NULL;
        double v;
#define NEED_VALUE()                                                              \
    do {                                                                          \
        if (!val) {                                                               \
            say("kbv %s: %s needs a value (see kbv %s --help)\n", name, a, name); \
            return EXIT_USAGE;                                                    \
        }                                                                         \
        i++;                                                                      \
    } while (0)
        if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
            if (check)
                printf("usage: kbv check PROBLEM.py [options]\n\n"
                       "Loads the problem, probes get_inputs(), and runs the reference (float64 oracle, TF32 and\n"
                       "strict fp32) on every case kbv would judge a candidate on, reporting each case's domain\n"
                       "and any case it had to skip. Exit 0 when the problem can be evaluated, 3 when not.\n"
                       "Options: --device, --seed, --timeout, --cases, --json, --scratch, --keep-scratch, --quiet\n"
                       "(as for kbv eval).\n");
            else if (mode == 2) usage_run(stdout);
            else usage_eval(stdout);
            return 0;
        } else if (mode == 2 && strcmp(a, "--manifest") == 0) {
            NEED_VALUE();
            manifest = val;
        } else if (mode == 2 && strcmp(a, "--kernelbench") == 0) {
            NEED_VALUE();
            kb = val;
        } else if (mode == 2 && strcmp(a, "--runs") == 0) {
            NEED_VALUE();
            runs = val;
        } else if (mode == 2 && strcmp(a, "--db") == 0) {
            NEED_VALUE();
            db = val;
        } else if (mode == 2 && strcmp(a, "--gpus") == 0) {
            NEED_VALUE();
            /* "all" or indices into the GPUs this process sees (CUDA_VISIBLE_DEVICES, as CUDA
             * counts them); each child gets its GPU's own CUDA_VISIBLE_DEVICES (gpus.h). */
            kbv_err gerr = {{0}};
            ngpus = gpus_select(GPUS_ROOT, getenv("CUDA_VISIBLE_DEVICES"), val, gpus, GPUS_MAX, &gerr);
            if (ngpus < 0) {
                say("kbv run: %s\n", gerr.msg);
                return ngpus == GPUS_NONE ? EXIT_INTERNAL : EXIT_USAGE;
            }
        } else if (mode == 2 && strcmp(a, "--jobs") == 0) {
            NEED_VALUE();
            if (num_opt("run", a, val, 1, 64, 1, "an integer from 1 to 64", &v) < 0) return EXIT_USAGE;
            jobs = (int)v;
        } else if (mode == 2 && strcmp(a, "--compile-jobs") == 0) {
            NEED_VALUE();
            if (num_opt("run", a, val, 0, 64, 1, "an integer from 0 to 64", &v) < 0) return EXIT_USAGE;
            compile_jobs = (int)v;
        } else if (mode == 2 && strcmp(a, "--child") == 0) { /* internal: one entry, started by a parent kbv run */
            NEED_VALUE();
            if (sscanf(val, "%d:%lld", &child_entry, &child_run) != 2 || child_entry < 0) {
                say("kbv run: bad --child '%s'\n", val);
                return EXIT_USAGE;
            }
        } else if (mode == 2 && strcmp(a, "--resume") == 0) {
            resume = 1;
        } else if (mode == 2 && strcmp(a, "--no-reference-reuse") == 0) {
            no_reuse = 1;
        } else if (mode == 2 && strcmp(a, "--ref-cache-max") == 0) {
            NEED_VALUE();
            if (num_opt(name, a, val, 0, 1 << 20, 0, "GiB from 0 (keep none) to 1048576", &v) < 0) return EXIT_USAGE;
            o.ref_cache_max_bytes = (long long)(v * (double)(1LL << 30));
        } else if (mode == 2 && strcmp(a, "--no-admission") == 0) {
            no_admission = 1;
        } else if (mode == 2 && strcmp(a, "--shard") == 0) {
            NEED_VALUE();
            char *end;
            long si = strtol(val, &end, 10), sn = *end == '/' ? strtol(end + 1, &end, 10) : 0;
            if (*end || sn < 1 || si < 0 || si >= sn || sn > 100000) {
                say("kbv run: --shard needs I/N with 0 <= I < N, not '%s'\n", val);
                return EXIT_USAGE;
            }
            shard_i = (int)si, shard_n = (int)sn;
        } else if (strcmp(a, "--device") == 0) {
            NEED_VALUE();
            if (strcmp(val, "cuda") && strcmp(val, "cpu") && strcmp(val, "auto")) {
                say("kbv %s: --device must be cuda, cpu or auto, not '%s'\n", name, val);
                return EXIT_USAGE;
            }
            o.device = val;
        } else if (strcmp(a, "--seed") == 0) {
            NEED_VALUE();
            char *end;
            errno = 0;
            unsigned long long s = strtoull(val, &end, 0);
            if (errno || end == val || *end || val[0] == '-') {
                say("kbv %s: --seed needs a non-negative integer, not '%s'\n", name, val);
                return EXIT_USAGE;
            }
            o.have_seed = 1, o.seed = s;
            /* The secret leaves the command line, which every process of the user can read
             * (/proc/PID/cmdline): a candidate's worker without a PID namespace included. */
            for (char *p = (char *)val; *p; p++) *p = '*';
        } else if (mode == 2 && strcmp(a, "--seed-file") == 0) {
            NEED_VALUE();
            kbv_err serr = {{0}};
            if (slurm_read_seed_file(val, &o.seed, &serr) < 0) {
                say("kbv run: --seed-file %s\n", serr.msg);
                return EXIT_USAGE;
            }
            o.have_seed = 2;
        } else if (strcmp(a, "--timeout") == 0) {
            NEED_VALUE();
            if (num_opt(name, a, val, 0.1, 86400, 0, "seconds between 0.1 and 86400", &v) < 0) return EXIT_USAGE;
            o.timeout_s = v;
        } else if (strcmp(a, "--load-timeout") == 0) {
            NEED_VALUE();
            if (num_opt(name, a, val, 0.1, 86400, 0, "seconds between 0.1 and 86400", &v) < 0) return EXIT_USAGE;
            o.load_timeout_s = v;
        } else if (strcmp(a, "--cases") == 0) {
            NEED_VALUE();
            if (num_opt(name, a, val, 1, 100, 1, "an integer from 1 to 100", &v) < 0) return EXIT_USAGE;
            o.ncases = (int)v;
        } else if (strcmp(a, "--protocol") == 0) {
            NEED_VALUE();
            protocol_set = 1;
            if (strcmp(val, "verified") == 0) o.protocol = EVAL_VERIFIED;
            else if (strcmp(val, "standard") == 0) o.protocol = EVAL_STANDARD;
            else if (strcmp(val, "paper") == 0) o.protocol = EVAL_PAPER;
            else if (strcmp(val, "both") == 0) o.protocol = EVAL_BOTH;
            else if (strcmp(val, "all") == 0) o.protocol = EVAL_ALL;
            else {
                say("kbv %s: --protocol must be verified, standard, paper, both or all, not '%s'\n", name, val);
                return EXIT_USAGE;
            }
        } else if (strcmp(a, "--standard-tol") == 0) {
            NEED_VALUE();
            if (num_opt(name, a, val, 1e-12, 1, 0, "a number in (0, 1]", &v) < 0) return EXIT_USAGE;
            o.standard_tol = v;
        } else if (strcmp(a, "--no-timing") == 0) {
            o.timing = 0;
        } else if (strcmp(a, "--timing") == 0) {
            o.timing = 1;
        } else if (strcmp(a, "--compile-baseline") == 0) {
            o.compile_baseline = 1;
        } else if (strcmp(a, "--keep-samples") == 0) {
            o.keep_samples = 1;
        } else if (strcmp(a, "--prime") == 0) {
            NEED_VALUE();
            if (strcmp(val, "auto") == 0) o.prime = -1;
            else if (strcmp(val, "always") == 0) o.prime = 1;
            else if (strcmp(val, "never") == 0) o.prime = 0;
            else {
                say("kbv %s: --prime must be auto, always or never, not '%s'\n", name, val);
                return EXIT_USAGE;
            }
        } else if (strcmp(a, "--time-budget") == 0) {
            NEED_VALUE();
            if (num_opt(name, a, val, 0.01, 3600, 0, "seconds between 0.01 and 3600", &v) < 0) return EXIT_USAGE;
            o.time_budget_s = v;
        } else if (strcmp(a, "--standard-trials") == 0) {
            NEED_VALUE();
            if (num_opt(name, a, val, 0, 100000, 1, "an integer from 0 to 100000", &v) < 0) return EXIT_USAGE;
            o.standard_trials = (int)v;
        } else if (strcmp(a, "--library-only") == 0) {
            NEED_VALUE();
            if (strcmp(val, "hack") && strcmp(val, "suspect") && strcmp(val, "info")) {
                say("kbv %s: --library-only must be hack, suspect or info, not '%s'\n", name, val);
                return EXIT_USAGE;
            }
            o.library_only = val;
        } else if (strcmp(a, "--json") == 0) {
            NEED_VALUE();
            if (strcmp(val, "-") != 0 && writable(val) < 0) {
                say("kbv %s: %s: cannot write the JSON result there: %s", name, val, strerror(errno));
                return EXIT_USAGE;
            }
            json_path = val;
        } else if (strcmp(a, "--no-sandbox") == 0) {
            o.sandbox = 0;
        } else if (strcmp(a, "--max-memory") == 0) {
            NEED_VALUE();
            if (num_opt(name, a, val, 0, 1 << 20, 0, "GiB from 0 (unlimited) to 1048576", &v) < 0) return EXIT_USAGE;
            o.max_memory_bytes = (long long)(v * (double)(1LL << 30));
        } else if (strcmp(a, "--max-scratch") == 0) {
            NEED_VALUE();
            if (num_opt(name, a, val, 0, 1 << 20, 0, "GiB from 0 (no budget) to 1048576", &v) < 0) return EXIT_USAGE;
            o.max_scratch_bytes = (long long)(v * (double)(1LL << 30));
        } else if (strcmp(a, "--cache-dir") == 0) {
            NEED_VALUE();
            o.cache_dir = val;
        } else if (strcmp(a, "--build") == 0) {
            NEED_VALUE();
            if (strcmp(val, "fast") != 0 && strcmp(val, "stock") != 0) {
                say("kbv %s: --build must be fast or stock, not '%s'\n", name, val);
                return EXIT_USAGE;
            }
            o.build_fast = strcmp(val, "fast") == 0;
        } else if (strcmp(a, "--pycache") == 0) {
            NEED_VALUE();
            if (strcmp(val, "auto") != 0 && strcmp(val, "always") != 0 && strcmp(val, "never") != 0) {
                say("kbv %s: --pycache must be auto, always or never, not '%s'\n", name, val);
                return EXIT_USAGE;
            }
            o.pycache_mode = strcmp(val, "always") == 0 ? 1 : strcmp(val, "never") == 0 ? -1 : 0;
        } else if (strcmp(a, "--scratch") == 0) {
            NEED_VALUE();
            o.scratch_base = val;
        } else if (strcmp(a, "--keep-scratch") == 0) {
            o.keep_scratch = 1;
        } else if (strcmp(a, "--quiet") == 0) {
            o.verbose = 0;
        } else if (a[0] == '-' && a[1]) {
            say("kbv %s: unknown option '%s' (see kbv %s --help)\n", name, a, name);
            return EXIT_USAGE;
        } else if (nfiles < 2) {
            files[nfiles++] = a;
        } else {
            say("kbv %s: too many arguments: '%s' (expected PROBLEM.py CANDIDATE.py)\n", name, a);
            return EXIT_USAGE;
        }
#undef NEED_VALUE
    }
    if (mode == 2) {
        char dflt[64];
        if (!manifest && !kb && !runs && !nfiles) { /* the built-in suite for this device */
            run_default_suite(o.device, dflt, sizeof dflt);
            if (access(dflt, R_OK) < 0) {
                say("kbv run: the built-in suite %s is not here: run kbv from the repository root, or give "
                    "--manifest FILE\n",
                    dflt);
                return EXIT_USAGE;
            }
            manifest = dflt;
            if (!protocol_set) o.protocol = EVAL_BOTH;
            if (o.verbose && child_entry < 0) say("kbv run: no source given; running the built-in suite %s\n", dflt);
        }
        if (nfiles || (!manifest == !(kb && runs)) || (!!kb != !!runs)) {
            say("kbv run: give --manifest FILE, or --kernelbench DIR --runs DIR (and no other files)\n");
            return EXIT_USAGE;
        }
        char worker[PATH_MAX];
        if (find_worker(worker, sizeof worker) < 0) {
            say("kbv run: cannot locate kbv-worker (set KBV_WORKER)\n");
            return EXIT_INTERNAL;
        }
        o.worker = worker;
        kbv_err err = {{0}};
        if (proc_init_reaper(&err) < 0) {
            say("kbv run: %s\n", err.msg);
            return EXIT_INTERNAL;
        }
        run_opts ro = {.manifest = manifest,
                       .kernelbench = kb,
                       .runs = runs,
                       .db = db,
                       .eval = o,
                       .resume = resume,
                       .no_reuse = no_reuse,
                       .no_admission = no_admission,
                       .compile_jobs = child_entry >= 0 ? 0 : compile_jobs,
                       .shard_i = shard_i,
                       .shard_n = shard_n,
                       .quiet = !o.verbose,
                       .gpus = gpus,
                       .ngpus = child_entry >= 0 ? 0 : ngpus,
                       .jobs = child_entry >= 0 ? 0 : jobs,
                       .argc = g_argc,
                       .argv = g_argv,
                       .child_entry = child_entry,
                       .child_run = child_run};
        int rc = run_main(&ro, &err);
        if (rc < 0) {
            say("kbv run: %s\n", err.msg);
            return rc == RUN_BAD_SOURCE ? EXIT_USAGE : rc == RUN_BAD_DB ? EXIT_DATABASE : rc == RUN_INTERRUPTED ? EXIT_STOPPED : EXIT_INTERNAL;
        }
        return 0;
    }
    if (check && nfiles != 1) {
        say("kbv check: give one PROBLEM.py\n");
        return EXIT_USAGE;
    }
    if (!check && nfiles == 1) {
        say("kbv %s: give both PROBLEM.py and CANDIDATE.py, or neither for the built-in example\n", name);
        return EXIT_USAGE;
    }
    int to_stdout = json_path && strcmp(json_path, "-") == 0;
    char worker[PATH_MAX];
    if (find_worker(worker, sizeof worker) < 0) {
        say("kbv %s: cannot locate kbv-worker (set KBV_WORKER)\n", name);
        return EXIT_INTERNAL;
    }
    o.worker = worker;
    session_prepare_pycache(&o);
    if (o.build_fast) {
        kbv_err perr = {{0}};
        if (session_prepare_pch(&o, &perr) < 0) say("kbv %s: --build fast is off: %s\n", name, perr.msg), o.build_fast = 0;
    }
    if (check) {
        o.problem = files[0], o.candidate = NULL;
    } else if (nfiles == 0) {
        o.problem = kDefaultProblem;
        o.candidate = strcmp(eval_device(o.device), "cpu") == 0 ? kDefaultCpu : kDefaultCuda;
        if (access(o.problem, R_OK) < 0) {
            say("kbv eval: the built-in example %s is not here: run kbv from the repository root, "
                "or give PROBLEM.py CANDIDATE.py\n",
                o.problem);
            return EXIT_USAGE;
        }
        if (o.verbose) say("kbv eval: no files given; evaluating the built-in example %s\n", o.candidate);
    } else {
        o.problem = files[0], o.candidate = files[1];
    }
    kbv_err err = {{0}};
    if (proc_init_reaper(&err) < 0) {
        say("kbv %s: %s\n", name, err.msg);
        return EXIT_INTERNAL;
    }
    kbv_result r;
    result_init(&r);
    if (eval_run(&o, &r, &err) < 0) {
        say("kbv %s: %s\n", name, err.msg);
        result_free(&r);
        return EXIT_INTERNAL;
    }
    result_print(&r, to_stdout ? stderr : stdout);
    int code = r.status == KBV_VERIFIED || r.status == KBV_PROBLEM_OK ? EXIT_VERIFIED : r.status == KBV_PROBLEM_ERROR ? EXIT_PROBLEM : EXIT_VERDICT;
    if (json_path) {
        json_t *j = result_to_json(&r);
        int bad = !j;
        if (j && to_stdout) {
            bad = json_dumpf(j, stdout, JSON_INDENT(2) | JSON_ENSURE_ASCII) < 0 || fputc('\n', stdout) == EOF || fflush(stdout) == EOF;
        } else if (j) {
            bad = json_dump_file(j, json_path, JSON_INDENT(2) | JSON_ENSURE_ASCII) < 0;
        }
        json_decref(j);
        if (bad) {
            say("kbv %s: %s: cannot write the JSON result: %s\n", name, json_path, strerror(errno));
            code = EXIT_INTERNAL;
        }
    }
    result_free(&r);
    return code;
}

static int cmd_inspect(int argc, char **argv) {
    const char *file = NULL, *json_path = NULL;
    for (int i = 0; i < argc; i++) {
        if (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0) {
            printf("usage: kbv inspect CANDIDATE.py [--json FILE|-]\n\n"
                   "Parses the candidate with Python's ast (nothing in it runs) and scans its CUDA sources:\n"
                   "load_inline, __global__ and @triton.jit kernels and which of them are launched, streams,\n"
                   "threads, monkeypatching, try/except around the authored path, file, network and process\n"
                   "use, precision casts, global flag changes. Findings are at most 'suspect': kbv eval's\n"
                   "dynamic detectors decide (docs/hacks.md). Exit status 0, 2 on a usage error or an\n"
                   "unreadable file, 4 when kbv cannot run.\n");
            return 0;
        } else if (strcmp(argv[i], "--json") == 0) {
            if (i + 1 >= argc) {
                say("kbv inspect: --json needs a value\n");
                return EXIT_USAGE;
            }
            json_path = argv[++i];
            if (strcmp(json_path, "-") != 0 && writable(json_path) < 0) {
                say("kbv inspect: %s: cannot write the JSON result there: %s", json_path, strerror(errno));
                return EXIT_USAGE;
            }
        } else if (argv[i][0] == '-' && argv[i][1]) {
            say("kbv inspect: unknown option '%s' (see kbv inspect --help)\n", argv[i]);
            return EXIT_USAGE;
        } else if (!file) {
            file = argv[i];
        } else {
            say("kbv inspect: give one CANDIDATE.py\n");
            return EXIT_USAGE;
        }
    }
    if (!file) {
        say("kbv inspect: give one CANDIDATE.py\n");
        return EXIT_USAGE;
    }
    struct stat sb;
    if (access(file, R_OK) < 0 || stat(file, &sb) < 0) {
        say("kbv inspect: %s: %s\n", file, strerror(errno));
        return EXIT_USAGE;
    }
    if (!S_ISREG(sb.st_mode) || sb.st_size > KBV_SOURCE_MAX) { /* the worker would read /dev/zero without end */
        say("kbv inspect: %s: %s\n", file,
            S_ISDIR(sb.st_mode)    ? "is a folder, not a Python file"
            : !S_ISREG(sb.st_mode) ? "not a regular file"
                                   : "larger than 64 MiB: not a source file");
        return EXIT_USAGE;
    }
    eval_opts o;
    eval_opts_default(&o);
    char worker[PATH_MAX];
    if (find_worker(worker, sizeof worker) < 0) {
        say("kbv inspect: cannot locate kbv-worker (set KBV_WORKER)\n");
        return EXIT_INTERNAL;
    }
    o.worker = worker;
    kbv_err err = {{0}};
    json_t *j = NULL;
    if (proc_init_reaper(&err) < 0 || eval_inspect(&o, file, &j, &err) < 0) {
        say("kbv inspect: %s\n", err.msg);
        return EXIT_INTERNAL;
    }
    int to_stdout = json_path && strcmp(json_path, "-") == 0;
    FILE *out = to_stdout ? stderr : stdout;
    char *text = NULL;
    size_t tlen = 0;
    FILE *f = open_memstream(&text, &tlen); /* printed through kbv_fputs_safe: the details are a worker's text */
    if (!f) {
        json_decref(j);
        say("kbv inspect: out of memory\n");
        return EXIT_INTERNAL;
    }
    fprintf(f, "kbv inspect: %s\n", file);
    if (json_object_get(j, "syntax_error")) fprintf(f, "  syntax error: %s\n", json_string_value(json_object_get(j, "syntax_error")));
    fprintf(f, "  load_inline  %s\n", json_is_true(json_object_get(j, "load_inline")) ? "yes" : "no");
    const char *lists[3] = {"kernels", "triton_kernels", "launched"};
    for (int k = 0; k < 3; k++) {
        const json_t *a = json_object_get(j, lists[k]);
        fprintf(f, "  %-15s", lists[k]);
        for (size_t i = 0; i < json_array_size(a); i++) fprintf(f, "%s%s", i ? ", " : "", json_string_value(json_array_get(a, i)));
        fprintf(f, "%s\n", json_array_size(a) ? "" : "-");
    }
    const json_t *fs = json_object_get(j, "findings");
    for (size_t i = 0; i < json_array_size(fs); i++) {
        const json_t *x = json_array_get(fs, i);
        fprintf(f, "  [%s] %s (line %lld): %s\n", json_string_value(json_object_get(x, "severity")), json_string_value(json_object_get(x, "id")),
                (long long)json_integer_value(json_object_get(x, "line")), json_string_value(json_object_get(x, "detail")));
    }
    if (fclose(f) == 0) kbv_fputs_safe(text, out);
    free(text);
    int code = 0;
    if (json_path) {
        int bad =
            to_stdout ? json_dumpf(j, stdout, JSON_INDENT(2)) < 0 || fputc('\n', stdout) == EOF : json_dump_file(j, json_path, JSON_INDENT(2)) < 0;
        if (bad) {
            say("kbv inspect: %s: cannot write the JSON result: %s\n", json_path, strerror(errno));
            code = EXIT_INTERNAL;
        }
    }
    json_decref(j);
    return code;
}

static int cmd_report(int argc, char **argv) {
    const char *db = "kbv.db", *format = "table", *out = NULL;
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i], *val = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
            printf("usage: kbv report [--db FILE] [--format table|md|json|csv|html] [-o FILE]\n\n"
                   "The paper metrics of a results database, overall, per model and per level, the verified\n"
                   "protocol beside the standard one: counts of verified, overfit, incorrect, hack and errors;\n"
                   "fast_p for p in 0, 0.5, 0.8, 1, 1.5, 2; geometric-mean speedup over correct candidates and\n"
                   "over all with failures as 1.0, with bootstrap 95%% CIs; the share of correct candidates that\n"
                   "raise peak memory; hacks by detector (json). The latest evaluation of each key counts.\n"
                   "html adds charts drawn by gnuplot (speedup distributions, verified vs standard; memory\n"
                   "ratio against speedup; hacks by detector).\n"
                   "Exit status 0; 2 usage error, or a database that does not exist; 5 one that cannot be used\n"
                   "(not kbv's, corrupt, another schema version, locked). See docs/results.md.\n");
            return 0;
        } else if ((strcmp(a, "--db") == 0 || strcmp(a, "--format") == 0 || strcmp(a, "-o") == 0) && !val) {
            say("kbv report: %s needs a value\n", a);
            return EXIT_USAGE;
        } else if (strcmp(a, "--db") == 0) db = argv[++i];
        else if (strcmp(a, "--format") == 0) format = argv[++i];
        else if (strcmp(a, "-o") == 0) out = argv[++i];
        else {
            say("kbv report: unknown %s '%s' (see kbv report --help)\n", a[0] == '-' ? "option" : "argument", a);
            return EXIT_USAGE;
        }
    }
    if (strcmp(format, "table") && strcmp(format, "md") && strcmp(format, "json") && strcmp(format, "csv") && strcmp(format, "html")) {
        say("kbv report: --format must be table, md, json, csv or html, not '%s'\n", format);
        return EXIT_USAGE;
    }
    if (access(db, R_OK) < 0) {
        say("kbv report: %s: %s\n", db, strerror(errno));
        return EXIT_USAGE;
    }
    if (out && writable(out) < 0) {
        say("kbv report: %s: cannot write the report there: %s\n", out, strerror(errno));
        return EXIT_USAGE;
    }
    kbv_err err = {{0}};
    json_t *rep = NULL;
    if (report_build(db, strcmp(format, "html") == 0 || strcmp(format, "json") == 0, &rep, &err) < 0) { /* per evaluation: JSON and charts */
        say("kbv report: %s\n", err.msg);
        return EXIT_DATABASE;
    }
    FILE *f = out ? fopen(out, "w") : stdout;
    if (!f) {
        say("kbv report: %s: %s\n", out, strerror(errno));
        json_decref(rep);
        return EXIT_USAGE;
    }
    int rc = report_write(rep, format, f, &err);
    if (out && fclose(f) != 0) rc = kbv_seterr(&err, "cannot write %s", out);
    json_decref(rep);
    if (rc < 0) {
        say("kbv report: %s\n", err.msg);
        return EXIT_INTERNAL;
    }
    return 0;
}

static int cmd_merge(int argc, char **argv) {
    enum { MAX_SOURCES = 256 };
    const char *out = NULL, *srcs[MAX_SOURCES];
    int n = 0;
    for (int i = 0; i < argc; i++) {
        if (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0) {
            printf("usage: kbv merge A.db B.db ... -o ALL.db\n\n"
                   "Copies every run and evaluation of the given databases into ALL.db (created if missing).\n"
                   "A run already there (same run id) is not copied again, so merging twice adds nothing.\n"
                   "The sources are read, never written. Exit status 0; 2 usage error or a missing source;\n"
                   "5 a database that cannot be used (not kbv's, corrupt, another schema version, locked).\n");
            return 0;
        } else if (strcmp(argv[i], "-o") == 0) {
            if (i + 1 >= argc) {
                say("kbv merge: -o needs a value\n");
                return EXIT_USAGE;
            }
            out = argv[++i];
        } else if (argv[i][0] == '-' && argv[i][1]) {
            say("kbv merge: unknown option '%s' (see kbv merge --help)\n", argv[i]);
            return EXIT_USAGE;
        } else if (n == MAX_SOURCES) {
            say("kbv merge: at most %d databases at a time (merge the rest into the result next)\n", MAX_SOURCES);
            return EXIT_USAGE;
        } else srcs[n++] = argv[i];
    }
    if (!out || n == 0) {
        say("kbv merge: give the databases to merge and -o OUT.db\n");
        return EXIT_USAGE;
    }
    /* Every source first, so that a bad one leaves no output behind. */
    kbv_err err = {{0}};
    for (int i = 0; i < n; i++) {
        kbv_db s;
        if (access(srcs[i], R_OK) < 0) {
            say("kbv merge: %s: %s\n", srcs[i], strerror(errno));
            return EXIT_USAGE;
        }
        if (db_open_read(&s, srcs[i], &err) < 0) {
            say("kbv merge: %s\n", err.msg);
            return EXIT_DATABASE;
        }
        db_close(&s);
    }
    int existed = access(out, F_OK) == 0;
    kbv_db dst;
    if (db_open(&dst, out, &err) < 0) {
        say("kbv merge: %s\n", err.msg);
        return EXIT_DATABASE;
    }
    for (int i = 0; i < n; i++) {
        int runs, evals;
        if (db_merge(&dst, srcs[i], &runs, &evals, &err) < 0) {
            say("kbv merge: %s\n", err.msg);
            db_close(&dst);
            if (!existed && i == 0) { /* nothing merged: leave nothing behind */
                char side[PATH_MAX + 8];
                unlink(out);
                snprintf(side, sizeof side, "%s-wal", out), unlink(side);
                snprintf(side, sizeof side, "%s-shm", out), unlink(side);
            }
            return EXIT_DATABASE;
        }
        say("kbv merge: %s: %d run(s), %d evaluation(s) added\n", srcs[i], runs, evals);
    }
    db_close(&dst);
    return 0;
}

/* An exchange's failure (exchange.h) as an exit status. */
static int exchange_exit(int rc) { return rc == EXCHANGE_BAD_INPUT ? EXIT_USAGE : rc == EXCHANGE_BAD_DB ? EXIT_DATABASE : EXIT_INTERNAL; }

static int cmd_import(int argc, char **argv) {
    exchange_import_opts o = {.db = "kbv.db", .level = -1};
    int quiet = 0;
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i], *val = i + 1 < argc ? argv[i + 1] : NULL;
        const char **slot = strcmp(a, "--kernelbench-results") == 0 || strcmp(a, "--results") == 0 ? &o.source
                            : strcmp(a, "--hidden") == 0                                           ? &o.hidden
                            : strcmp(a, "--baseline") == 0                                         ? &o.baseline
                            : strcmp(a, "--baseline-fp32") == 0                                    ? &o.baseline_fp32
                            : strcmp(a, "--kernelbench") == 0                                      ? &o.kernelbench
                            : strcmp(a, "--model") == 0                                            ? &o.model
                            : strcmp(a, "--db") == 0                                               ? &o.db
                                                                                                   : NULL;
        double v;
        if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
            printf("usage: kbv import --kernelbench-results RUN_DIR/eval_results.json --model NAME --level L [--db FILE] [options]\n\n"
                   "Stores every sample of an eval_results.json written elsewhere in a results database, so that\n"
                   "kbv report counts it beside kbv's own evaluations without running anything. The format is\n"
                   "detected: KernelBench's ({\"P\": [samples]}, or the older {\"P\": sample}) is stored under the\n"
                   "standard protocol; the KernelBench-Verified paper harness's ({\"P_S\": sample}) under the paper\n"
                   "protocol. An imported sample is no kbv verdict: its status is \"imported\", and the file's own\n"
                   "verdict counts under the protocol it came from. Importing the same files again adds nothing.\n"
                   "\n"
                   "options:\n"
                   "  --kernelbench-results FILE|DIR  the eval_results.json (or the run folder holding it)\n"
                   "  --model NAME            the model the run's kernels came from (required)\n"
                   "  --level L               the KernelBench level of the run (required)\n"
                   "  --db FILE               results database (default kbv.db)\n"
                   "  --kernelbench DIR       a KernelBench checkout's problem folder: names each problem by its file\n"
                   "                          DIR/levelL/P_*.py (default: level{L}/problem_{P})\n"
                   "  --hidden FILE           the paper harness's eval_results_hidden.json: its hidden verdicts decide\n"
                   "                          correctness, as the paper's leaderboard does (--use_hidden_eval)\n"
                   "  --fp32-tolerance T      with --hidden: the leaderboard's re-threshold: a hidden failure with no\n"
                   "                          hidden_failed_configs, hidden_runtime_error or runtime_error (it failed\n"
                   "                          only the standard trials) is correct when its largest max_difference\n"
                   "                          is below T (default: off, the hidden file's verdict stands)\n"
                   "  --baseline FILE         KernelBench's baseline_time JSON ({\"levelL\": {\"P_Name.py\": {\"mean\": ms,\n"
                   "                          \"peak_memory\": bytes}}}): speedups and memory ratios (the paper's: its TF32 file)\n"
                   "  --baseline-fp32 FILE    the paper's fp32 baseline file (its speedup_fp32)\n"
                   "  --quiet                 no summary line on stderr\n"
                   "\n"
                   "Exit status 0; 2 usage error or a bad input file (nothing is stored); 5 the database cannot be\n"
                   "used. See docs/results.md, \"Exchange with KernelBench\".\n");
            return 0;
        } else if (strcmp(a, "--quiet") == 0) {
            quiet = 1;
        } else if ((slot || strcmp(a, "--level") == 0 || strcmp(a, "--fp32-tolerance") == 0) && !val) {
            say("kbv import: %s needs a value (see kbv import --help)\n", a);
            return EXIT_USAGE;
        } else if (slot) {
            *slot = argv[++i];
        } else if (strcmp(a, "--level") == 0) {
            if (num_opt("import", a, argv[++i], 1, 100, 1, "an integer from 1 to 100", &v) < 0) return EXIT_USAGE;
            o.level = (int)v;
        } else if (strcmp(a, "--fp32-tolerance") == 0) {
            if (num_opt("import", a, argv[++i], 0, 1e6, 0, "a number above 0 (the leaderboard's is 1e-3)", &v) < 0) return EXIT_USAGE;
            if (v <= 0) {
                say("kbv import: --fp32-tolerance needs a number above 0 (the leaderboard's is 1e-3), not '%s'\n", argv[i]);
                return EXIT_USAGE;
            }
            o.fp32_tolerance = v;
        } else {
            say("kbv import: unknown %s '%s' (see kbv import --help)\n", a[0] == '-' ? "option" : "argument", a);
            return EXIT_USAGE;
        }
    }
    if (!o.source || !o.model || o.level < 0) {
        say("kbv import: give --kernelbench-results FILE, --model NAME and --level L (see kbv import --help)\n");
        return EXIT_USAGE;
    }
    int bad = !*o.model || strlen(o.model) > 127;
    for (const char *p = o.model; *p; p++) bad |= (unsigned char)*p < 0x20 || *p == 0x7f;
    if (bad) {
        say("kbv import: --model needs a name of 1 to 127 characters without control characters\n");
        return EXIT_USAGE;
    }
    kbv_err err = {{0}};
    const char *format = "";
    int added = 0, kept = 0, rc = exchange_import(&o, &format, &added, &kept, &err);
    if (rc < 0) {
        say("kbv import: %s\n", err.msg);
        return exchange_exit(rc);
    }
    char also[64] = "";
    if (kept) snprintf(also, sizeof also, "; %d already there", kept);
    if (!quiet)
        say("kbv import: %s (%s): %d evaluation(s) of model %s, level %d, stored in %s%s\n", o.source, format, added, o.model, o.level, o.db, also);
    return 0;
}

static int cmd_export(int argc, char **argv) {
    exchange_export_opts o = {.db = "kbv.db", .format = "kernelbench", .protocol = "verified", .level = -1};
    int quiet = 0;
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i], *val = i + 1 < argc ? argv[i + 1] : NULL;
        const char **slot = strcmp(a, "--db") == 0         ? &o.db
                            : strcmp(a, "--format") == 0   ? &o.format
                            : strcmp(a, "-o") == 0         ? &o.out
                            : strcmp(a, "--protocol") == 0 ? &o.protocol
                            : strcmp(a, "--model") == 0    ? &o.model
                            : strcmp(a, "--hidden") == 0   ? &o.hidden
                                                           : NULL;
        double v;
        if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
            printf("usage: kbv export [--db FILE] --format kernelbench|kbv-paper -o OUT [--protocol verified|standard|paper]\n"
                   "       kbv export [--db FILE] --format kbv-paper --protocol paper -o eval_results.json --hidden eval_results_hidden.json\n\n"
                   "Writes the latest evaluation of every key in a results database as KernelBench's eval_results.json\n"
                   "({\"P\": [{sample_id, compiled, correctness, metadata, runtime, runtime_stats}]}) or the paper\n"
                   "harness's ({\"P_S\": {..., peak_memory, memory_stats}}), so KernelBench's tools can read kbv's\n"
                   "results. P is the number of a KernelBench-style problem file P_Name.py (or an imported sample's\n"
                   "own), else problems are numbered in the order of their first evaluation; S is the sample.\n"
                   "\n"
                   "options:\n"
                   "  --db FILE               results database (default kbv.db)\n"
                   "  --format F              kernelbench (default) or kbv-paper\n"
                   "  -o FILE|-               where to write it ('-': stdout)\n"
                   "  --protocol P            whose verdict and time: verified (default: kbv's verdict, the median\n"
                   "                          candidate time), standard (KernelBench's check and mean time) or paper\n"
                   "                          (the paper's hidden-gated verdict and mean time); evaluations without\n"
                   "                          it are left out\n"
                   "  --model NAME            only this model's evaluations\n"
                   "  --level L               only this level's\n"
                   "  --hidden FILE           (--format kbv-paper --protocol paper) also the paper harness's\n"
                   "                          eval_results_hidden.json: each evaluation's hidden-gated verdict, its\n"
                   "                          failed variants as hidden_failed_configs (config_1..config_4: x1, x3,\n"
                   "                          x0.01, x-1), runtime -1.0; -o then gets the standard trials' verdict,\n"
                   "                          as the harness's eval_results.json has it\n"
                   "  --quiet                 no summary line on stderr\n"
                   "\n"
                   "Exit status 0; 2 usage error, a database that does not exist, nothing to export, or two\n"
                   "evaluations of one problem and sample (--model and --level pick one run's); 4 the file could\n"
                   "not be written; 5 the database cannot be used. See docs/results.md, \"Exchange with KernelBench\".\n");
            return 0;
        } else if (strcmp(a, "--quiet") == 0) {
            quiet = 1;
        } else if ((slot || strcmp(a, "--level") == 0) && !val) {
            say("kbv export: %s needs a value (see kbv export --help)\n", a);
            return EXIT_USAGE;
        } else if (slot) {
            *slot = argv[++i];
        } else if (strcmp(a, "--level") == 0) {
            if (num_opt("export", a, argv[++i], 0, 100, 1, "an integer from 0 to 100", &v) < 0) return EXIT_USAGE;
            o.level = (int)v;
        } else {
            say("kbv export: unknown %s '%s' (see kbv export --help)\n", a[0] == '-' ? "option" : "argument", a);
            return EXIT_USAGE;
        }
    }
    if (strcmp(o.format, "kernelbench") && strcmp(o.format, "kbv-paper")) {
        say("kbv export: --format must be kernelbench or kbv-paper, not '%s'\n", o.format);
        return EXIT_USAGE;
    }
    if (strcmp(o.protocol, "verified") && strcmp(o.protocol, "standard") && strcmp(o.protocol, "paper")) {
        say("kbv export: --protocol must be verified, standard or paper, not '%s'\n", o.protocol);
        return EXIT_USAGE;
    }
    if (!o.out) {
        say("kbv export: give -o FILE (or -o - for stdout)\n");
        return EXIT_USAGE;
    }
    if (access(o.db, R_OK) < 0) {
        say("kbv export: %s: %s\n", o.db, strerror(errno));
        return EXIT_USAGE;
    }
    if (strcmp(o.out, "-") != 0 && writable(o.out) < 0) {
        say("kbv export: %s: cannot write the file there: %s\n", o.out, strerror(errno));
        return EXIT_USAGE;
    }
    if (o.hidden && strcmp(o.hidden, "-") != 0 && writable(o.hidden) < 0) {
        say("kbv export: %s: cannot write the file there: %s\n", o.hidden, strerror(errno));
        return EXIT_USAGE;
    }
    kbv_err err = {{0}};
    int written = 0, hidden = 0, skipped = 0, rc = exchange_export(&o, &written, &hidden, &skipped, &err);
    if (rc < 0) {
        say("kbv export: %s\n", err.msg);
        return exchange_exit(rc);
    }
    char also[80] = "", hid[PATH_MAX + 48] = "";
    if (skipped) snprintf(also, sizeof also, "; %d evaluation(s) without that protocol left out", skipped);
    if (o.hidden) snprintf(hid, sizeof hid, ", %d hidden entr%s to %s", hidden, hidden == 1 ? "y" : "ies", o.hidden);
    if (!quiet)
        say("kbv export: %d sample(s) written to %s%s (%s format, %s protocol)%s\n", written, strcmp(o.out, "-") ? o.out : "stdout", hid, o.format,
            o.protocol, also);
    return 0;
}

int main(int argc, char **argv) {
    g_argc = argc, g_argv = argv;
    /* kbv holds the seed and reference outputs: no same-user process may read its memory
     * through /proc/PID/mem or ptrace (docs/security.md). */
    if (!sandbox_skips("dumpable")) prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
    if (argc < 2) {
        usage_main(stderr);
        exit(EXIT_USAGE);
    }
    const char *cmd = argv[1];
    if (strcmp(cmd, "-h") == 0 || strcmp(cmd, "--help") == 0 || strcmp(cmd, "help") == 0) {
        usage_main(stdout);
        exit(0);
    }
    if (strcmp(cmd, "version") == 0 || strcmp(cmd, "--version") == 0) {
        if (argc > 2) {
            say("kbv version: unknown argument '%s'\n", argv[2]);
            exit(EXIT_USAGE);
        }
        printf("kbv %s\n", KBV_VERSION);
        exit(0);
    }
    if (strcmp(cmd, "eval") == 0) exit(cmd_eval(argc - 2, argv + 2, 0));
    if (strcmp(cmd, "check") == 0) exit(cmd_eval(argc - 2, argv + 2, 1));
    if (strcmp(cmd, "inspect") == 0) exit(cmd_inspect(argc - 2, argv + 2));
    if (strcmp(cmd, "run") == 0) exit(cmd_eval(argc - 2, argv + 2, 2));
    if (strcmp(cmd, "report") == 0) exit(cmd_report(argc - 2, argv + 2));
    if (strcmp(cmd, "generate") == 0) exit(generate_main(argc - 2, argv + 2));
    if (strcmp(cmd, "bench") == 0) exit(bench_main(argc - 2, argv + 2));
    if (strcmp(cmd, "merge") == 0) exit(cmd_merge(argc - 2, argv + 2));
    if (strcmp(cmd, "slurm") == 0) exit(slurm_main(argc - 2, argv + 2));
    if (strcmp(cmd, "import") == 0) exit(cmd_import(argc - 2, argv + 2));
    if (strcmp(cmd, "export") == 0) exit(cmd_export(argc - 2, argv + 2));
    say("kbv: unknown command '%s' (see kbv --help)\n", cmd);
    exit(EXIT_USAGE);
}
