/* llm.h -- single-turn completions from LLM endpoints over HTTP (libcurl + jansson).
 *
 * Three wire formats: OpenAI-compatible chat completions (OpenAI, and local servers such as
 * vLLM, SGLang and llama.cpp), Anthropic's messages API and Google's Gemini API. One call is
 * one prompt and one answer, with a request timeout and retries (exponential backoff with
 * full jitter on 429, 5xx, timeouts, connection errors and invalid JSON, honouring
 * Retry-After). Models come from a config file (JSON, or a simple TOML subset; see
 * llm_load_models and docs/generate.md).
 *
 * API keys are read from the environment variable a model names, at request time, and go
 * into one request header only: never into an error message, a log, a stored field or a
 * response body kept here (a provider that echoes the key has it replaced by "[key]").
 *
 * What it does not do: streaming, multi-turn conversations, tools, or rate limiting across
 * calls (the caller runs at most llm_model.concurrency calls per model at once).
 *
 * Threads: call llm_global_init once before any thread starts; llm_complete may then run
 * concurrently from any number of threads (each call has its own curl handle).
 */
#ifndef KBV_LLM_H
#define KBV_LLM_H

#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "util.h"

typedef enum llm_provider { LLM_OPENAI, LLM_ANTHROPIC, LLM_GEMINI } llm_provider;

typedef struct llm_model {
    char name[64];             /* the model's name in results: [A-Za-z0-9._+-], not starting with '.' */
    llm_provider provider;
    char base_url[512];        /* http(s)://host[:port][/prefix], no trailing '/' */
    char model_id[128];        /* the provider's name for the model */
    double temperature;        /* < 0: the provider's default (not sent) */
    int max_tokens;            /* > 0: the answer's budget in tokens (thinking included) */
    char reasoning_effort[16]; /* "" : not sent (OpenAI-compatible only) */
    int thinking_budget;       /* tokens, 0: off (Anthropic, Gemini) */
    char api_key_env[64];      /* the variable holding the key; "" : no key (local servers) */
    int concurrency;           /* requests in flight for this model (default 4) */
    double price_in_per_mtok, price_out_per_mtok; /* USD per million tokens, 0: unknown */
} llm_model;

typedef struct llm_opts {
    double timeout_s;                     /* per request, connection included (default 600) */
    int max_retries;                      /* attempts after the first (default 6) */
    double backoff_base_s, backoff_max_s; /* default 2, 120; backoff_max_s also caps Retry-After */
    size_t max_body;                      /* bytes of a response body at most (default 8 MiB) */
    volatile int *cancel;                 /* nonzero: stop retrying/waiting and fail (may be NULL) */
} llm_opts;

typedef struct llm_response {
    int ok;                          /* 1: text holds the answer */
    int http_status;                 /* the last attempt's (0: no HTTP response) */
    char *text;                      /* owned; the assistant's text ("" possible), NULL unless ok */
    char *raw;                       /* owned; the last response body (capped), NULL if none */
    long long tokens_in, tokens_out; /* -1 unknown */
    char finish_reason[32];          /* the provider's own word ("stop", "end_turn", "STOP", ...) */
    double latency_s;                /* the successful attempt's, or the last one's */
    int attempts;                    /* HTTP requests made (0 when none was, e.g. no key) */
    int permanent;                   /* 1: a retry cannot help (4xx other than 408/429, missing key,
                                        an oversized body, an answer of the wrong shape) */
    int cancelled;                   /* 1: opts.cancel stopped it */
    char error[300];                 /* "" when ok; never contains the key */
} llm_response;

/* Fill o with the defaults above. */
void llm_opts_default(llm_opts *o);
/* curl_global_init and jansson's hash seed; call once before threads start (later calls
 * do nothing). */
int llm_global_init(kbv_err *err);
/* Read a models config: a path ending in ".toml" is TOML, anything else JSON. On success
 * *models (caller frees) holds *n >= 1 checked models. Errors name the file, the model
 * ("models[2] (\"name\")") and what is wrong. Returns 0 or -1. */
int llm_load_models(const char *path, llm_model **models, int *n, kbv_err *err);
/* "openai", "anthropic", "gemini". */
const char *llm_provider_name(llm_provider p);
/* One single-turn completion with retries. Returns 0 when r is filled (check r->ok), -1 only
 * for kbv's own failure (out of memory). r need not be initialised; free it with
 * llm_response_free either way. */
int llm_complete(const llm_model *m, const char *prompt, const llm_opts *o, llm_response *r);
void llm_response_free(llm_response *r);
/* USD for a call's tokens at the model's prices (unknown counts and prices count 0). */
double llm_cost_usd(const llm_model *m, long long tokens_in, long long tokens_out);

/* --- for tests: the pieces of llm_complete that need no network ----------------------- */

/* The endpoint's URL for m (out holds outlen bytes). -1 when it does not fit. */
int llm_request_url(const llm_model *m, char *out, size_t outlen);
/* The request's JSON body (caller frees), NULL when out of memory. */
char *llm_request_body(const llm_model *m, const char *prompt);
/* The header that carries the key ("Authorization", "x-api-key", "x-goog-api-key"). */
const char *llm_auth_header(llm_provider p);
/* Parse a successful (2xx) response body of len bytes into r (whose text is NULL or owned):
 * ok, text, tokens, finish_reason, and error when it fails.
 * Returns LLM_PARSE_OK, LLM_PARSE_BAD_JSON (truncated or invalid: worth a retry),
 * LLM_PARSE_BAD_SHAPE (valid JSON that holds no answer: r->error says why) or -1 (out of
 * memory). */
enum { LLM_PARSE_OK = 0, LLM_PARSE_BAD_JSON = 1, LLM_PARSE_BAD_SHAPE = 2 };
int llm_parse_response(llm_provider p, const char *body, size_t len, llm_response *r);
/* The provider's error message in an error response body ({"error": {"message": ...}} or
 * {"error": "..."}), else the body's start; control characters dropped, truncated to
 * outlen - 1 bytes ("..." marks a cut). */
void llm_error_detail(const char *body, size_t len, char *out, size_t outlen);
/* A Retry-After value (delay-seconds or an HTTP date) as seconds from now; -1 when it is
 * neither. A date in the past is 0. */
double llm_retry_after_s(const char *value, time_t now);
/* The wait before retry number `retry` (0 for the first): full jitter, u * min(max, base *
 * 2^retry) with u in [0, 1); a Retry-After of ra >= 0 seconds replaces it, capped at max. */
double llm_backoff_s(const llm_opts *o, int retry, double ra, double u);
/* Replace every occurrence of key (when at least 8 bytes long) in s by "[key]", in place
 * (s may shrink, never grows). */
void llm_scrub_key(char *s, const char *key);
/* Parse a models config from text (NUL-terminated); toml picks the format; path names the
 * file in messages. As llm_load_models. */
int llm_parse_models(const char *text, int toml, const char *path, llm_model **models, int *n, kbv_err *err);

#endif
