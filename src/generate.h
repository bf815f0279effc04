/* generate.h -- `kbv generate` (ask LLMs for kernels) and `kbv bench` (generate, run, report).
 *
 * generate: for each problem, each model of a models config and each sample, one single-turn
 * request with the prompt made from a template file (docs/generate.md); every answer is
 * stored in the results database (table generations) as soon as it arrives, so a re-run with
 * the same options asks only for what has no answer. The code block of each answer is
 * written as a KernelBench run folder (OUT/<model>/level_L_problem_P_sample_S_kernel.py) with
 * a kbv manifest (OUT/manifest.jsonl) that `kbv run` evaluates.
 * bench: generate, then `kbv run --resume` over that manifest, then `kbv report`, each step
 * the kbv binary itself (a child process), so a re-run resumes the whole experiment.
 * Multi-turn generation is not here.
 */
#ifndef KBV_GENERATE_H
#define KBV_GENERATE_H

/* Exit statuses of both commands (docs/generate.md, "Exit status"); 0 means every
 * (problem, model, sample) has an answer (ok or no_code) and, for bench, was evaluated. */
enum {
    GEN_EXIT_OK = 0,
    GEN_EXIT_USAGE = 2,        /* bad option, unreadable models config, manifest or template, a missing API key */
    GEN_EXIT_INTERNAL = 4,     /* kbv could not run: libcurl, threads, the run folder cannot be written */
    GEN_EXIT_DATABASE = 5,     /* the results database cannot be used */
    GEN_EXIT_INCOMPLETE = 6,   /* some requests got no answer (errors after retries): re-run to ask again */
    GEN_EXIT_CAPPED = 7,       /* the spending cap (--max-cost, --max-tokens-total) stopped new requests */
    GEN_EXIT_INTERRUPTED = 128 /* + the signal: SIGINT 130, SIGTERM 143; what finished is stored */
};

/* The two commands; argv holds the options after the command name. They return an exit
 * status and never exit. */
int generate_main(int argc, char **argv);
int bench_main(int argc, char **argv);

/* The code of the last complete fenced Python block (```python, ```py, ```python3 or a bare
 * ```) that defines class ModelNew, as a new string (caller frees); NULL when there is none. */
char *generate_extract(const char *text);
/* A problem's source cut after its Model class, for the input-blind prompt: the lines up to
 * the end of `class Model`'s body (get_inputs, get_init_inputs and the size constants after
 * the class are dropped). A new string, or NULL when the source has no class Model. */
char *generate_cut_after_model(const char *src);

#endif
