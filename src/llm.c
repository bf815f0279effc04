/* llm.c -- single-turn completions over HTTP: three wire formats, retries, the models config.
 *
 * Design notes:
 * - One curl easy handle per call, CURLOPT_NOSIGNAL (timeouts must not use SIGALRM in a
 *   threaded program), no redirects followed (a redirect could carry the key to another
 *   host), http and https only, "Expect:" off (a small server answering HTTP/1.0 would stall
 *   every request by a second).
 * - A response body is read into memory up to max_body bytes; a larger one stops the
 *   transfer and fails the call without a retry (the same prompt would likely do it again).
 * - What is retried: 408, 429, 5xx, curl's transient errors (timeouts, refused or dropped
 *   connections, resolution failures) and a 2xx body that is not valid JSON (a proxy cut
 *   it). The wait is full jitter over an exponential ceiling, or the server's Retry-After
 *   (capped at backoff_max_s). Anything else fails at once, with permanent set.
 * - The key is read with getenv when the call starts, copied into one header line and
 *   nowhere else; error messages are built from the status, curl's message and the
 *   provider's error text, and every kept text passes llm_scrub_key.
 * - The models config is JSON, or a TOML subset read here ([[models]] tables of
 *   key = "string" | 'string' | number | true | false, comments): both become the same JSON
 *   value, checked by one function.
 */
#include "llm.h"

#include <ctype.h>
#include <curl/curl.h>
#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* ---------------------------------------------------------------------------------------
 * Basics
 * ------------------------------------------------------------------------------------- */

void llm_opts_default(llm_opts *o) {
    o->timeout_s = 600;
    o->max_retries = 6;
    o->backoff_base_s = 2;
    o->backoff_max_s = 120;
    o->max_body = (size_t)8 << 20;
    o->cancel = NULL;
}

static pthread_once_t g_once = PTHREAD_ONCE_INIT;
static CURLcode g_init_rc = CURLE_FAILED_INIT;

static void global_init_once(void) {
    json_object_seed(0); /* before threads: jansson seeds its hash function lazily otherwise */
    g_init_rc = curl_global_init(CURL_GLOBAL_DEFAULT);
}

int llm_global_init(kbv_err *err) {
    pthread_once(&g_once, global_init_once);
    if (g_init_rc != CURLE_OK) return kbv_seterr(err, "curl_global_init: %s", curl_easy_strerror(g_init_rc));
    return 0;
}

const char *llm_provider_name(llm_provider p) {
    switch (p) {
    case LLM_OPENAI: return "openai";
    case LLM_ANTHROPIC: return "anthropic";
    case LLM_GEMINI: return "gemini";
    }
    return "?";
}

void llm_response_free(llm_response *r) {
    if (!r) return;
    free(r->text), free(r->raw);
    r->text = r->raw = NULL;
}

double llm_cost_usd(const llm_model *m, long long tokens_in, long long tokens_out) {
    double c = 0;
    if (tokens_in > 0) c += (double)tokens_in * m->price_in_per_mtok / 1e6;
    if (tokens_out > 0) c += (double)tokens_out * m->price_out_per_mtok / 1e6;
    return c;
}

void llm_scrub_key(char *s, const char *key) {
    size_t kl = key ? strlen(key) : 0;
    if (!s || kl < 8) return;
    char *p;
    while ((p = strstr(s, key)) != NULL) {
        memcpy(p, "[key]", 5);
        memmove(p + 5, p + kl, strlen(p + kl) + 1);
    }
}

/* ---------------------------------------------------------------------------------------
 * Requests
 * ------------------------------------------------------------------------------------- */

const char *llm_auth_header(llm_provider p) {
    switch (p) {
    case LLM_OPENAI: return "Authorization";
    case LLM_ANTHROPIC: return "x-api-key";
    case LLM_GEMINI: return "x-goog-api-key";
    }
    return "";
}

int llm_request_url(const llm_model *m, char *out, size_t outlen) {
    int n = 0;
    switch (m->provider) {
    case LLM_OPENAI: n = snprintf(out, outlen, "%s/chat/completions", m->base_url); break;
    case LLM_ANTHROPIC: n = snprintf(out, outlen, "%s/v1/messages", m->base_url); break;
    case LLM_GEMINI: n = snprintf(out, outlen, "%s/v1beta/models/%s:generateContent", m->base_url, m->model_id); break;
    }
    return n < 0 || (size_t)n >= outlen ? -1 : 0;
}

/* Set key to a new value; a NULL value (out of memory upstream) fails. */
static int jset(json_t *o, const char *key, json_t *v) { return v ? json_object_set_new(o, key, v) : -1; }

static json_t *user_message(const char *prompt) {
    json_t *msg = json_object(), *msgs = json_array();
    if (!msg || !msgs || jset(msg, "role", json_string("user")) < 0 || jset(msg, "content", json_string(prompt)) < 0 ||
        json_array_append(msgs, msg) < 0) {
        json_decref(msg), json_decref(msgs);
        return NULL;
    }
    json_decref(msg);
    return msgs;
}

static json_t *body_openai(const llm_model *m, const char *prompt) {
    json_t *o = json_object();
    int bad = !o || jset(o, "model", json_string(m->model_id)) < 0 || jset(o, "messages", user_message(prompt)) < 0;
    /* Reasoning models take max_completion_tokens (max_tokens is refused by OpenAI's). */
    if (!bad) bad = jset(o, m->reasoning_effort[0] ? "max_completion_tokens" : "max_tokens", json_integer(m->max_tokens)) < 0;
    if (!bad && m->temperature >= 0) bad = jset(o, "temperature", json_real(m->temperature)) < 0;
    if (!bad && m->reasoning_effort[0]) bad = jset(o, "reasoning_effort", json_string(m->reasoning_effort)) < 0;
    if (bad) json_decref(o);
    return bad ? NULL : o;
}

static json_t *body_anthropic(const llm_model *m, const char *prompt) {
    json_t *o = json_object();
    int bad = !o || jset(o, "model", json_string(m->model_id)) < 0 || jset(o, "max_tokens", json_integer(m->max_tokens)) < 0 ||
              jset(o, "messages", user_message(prompt)) < 0;
    if (!bad && m->temperature >= 0) bad = jset(o, "temperature", json_real(m->temperature)) < 0;
    if (!bad && m->thinking_budget > 0)
        bad = jset(o, "thinking", json_pack("{s:s, s:i}", "type", "enabled", "budget_tokens", m->thinking_budget)) < 0;
    if (bad) json_decref(o);
    return bad ? NULL : o;
}

static json_t *body_gemini(const llm_model *m, const char *prompt) {
    json_t *o = json_object(), *cfg = json_object();
    json_t *contents = json_pack("[{s:s, s:[{s:s}]}]", "role", "user", "parts", "text", prompt);
    int bad = !o || !cfg || jset(o, "contents", contents) < 0 || jset(cfg, "maxOutputTokens", json_integer(m->max_tokens)) < 0;
    if (!bad && m->temperature >= 0) bad = jset(cfg, "temperature", json_real(m->temperature)) < 0;
    if (!bad && m->thinking_budget > 0) bad = jset(cfg, "thinkingConfig", json_pack("{s:i}", "thinkingBudget", m->thinking_budget)) < 0;
    if (!bad) bad = json_object_set(o, "generationConfig", cfg) < 0;
    json_decref(cfg);
    if (bad) json_decref(o);
    return bad ? NULL : o;
}

char *llm_request_body(const llm_model *m, const char *prompt) {
    json_t *o = NULL;
    switch (m->provider) {
    case LLM_OPENAI: o = body_openai(m, prompt); break;
    case LLM_ANTHROPIC: o = body_anthropic(m, prompt); break;
    case LLM_GEMINI: o = body_gemini(m, prompt); break;
    }
    if (!o) return NULL;
    char *s = json_dumps(o, JSON_COMPACT);
    json_decref(o);
    return s;
}

/* ---------------------------------------------------------------------------------------
 * Responses
 * ------------------------------------------------------------------------------------- */

static long long jint(json_t *v) { return json_is_integer(v) ? (long long)json_integer_value(v) : -1; }

static void set_finish(llm_response *r, json_t *v) {
    if (json_is_string(v)) snprintf(r->finish_reason, sizeof r->finish_reason, "%s", json_string_value(v));
}

/* Append the text of content parts: [{"type": "text", "text": ...}] (Anthropic, and
 * OpenAI-compatible servers that answer with parts), skipping other types. */
static int append_text_parts(kbv_buf *b, json_t *parts) {
    size_t i;
    json_t *p;
    json_array_foreach(parts, i, p) {
        json_t *t = json_object_get(p, "text");
        if (!json_is_string(t) || !json_is_string(json_object_get(p, "type")) ||
            strcmp(json_string_value(json_object_get(p, "type")), "text") != 0)
            continue;
        if (kbv_buf_append(b, json_string_value(t), json_string_length(t)) < 0) return -1;
    }
    return 0;
}

static int shape(llm_response *r, const char *fmt, const char *what) {
    snprintf(r->error, sizeof r->error, fmt, what);
    return LLM_PARSE_BAD_SHAPE;
}

static int parse_openai(json_t *root, llm_response *r, kbv_buf *text) {
    json_t *ch = json_array_get(json_object_get(root, "choices"), 0);
    json_t *msg = json_object_get(ch, "message");
    if (!json_is_object(msg)) return shape(r, "%s", "the response has no choices[0].message");
    json_t *content = json_object_get(msg, "content");
    if (json_is_string(content)) {
        if (kbv_buf_append(text, json_string_value(content), json_string_length(content)) < 0) return -1;
    } else if (json_is_array(content)) {
        if (append_text_parts(text, content) < 0) return -1;
    } else if (content && !json_is_null(content)) {
        return shape(r, "%s", "choices[0].message.content is neither text nor null");
    } /* null: no text (a refusal, or the budget spent on reasoning); finish_reason says */
    set_finish(r, json_object_get(ch, "finish_reason"));
    json_t *u = json_object_get(root, "usage");
    r->tokens_in = jint(json_object_get(u, "prompt_tokens"));
    r->tokens_out = jint(json_object_get(u, "completion_tokens"));
    return LLM_PARSE_OK;
}

static int parse_anthropic(json_t *root, llm_response *r, kbv_buf *text) {
    json_t *content = json_object_get(root, "content");
    if (!json_is_array(content)) return shape(r, "%s", "the response has no content[] array");
    if (append_text_parts(text, content) < 0) return -1; /* thinking blocks are not the answer */
    set_finish(r, json_object_get(root, "stop_reason"));
    json_t *u = json_object_get(root, "usage");
    r->tokens_in = jint(json_object_get(u, "input_tokens"));
    r->tokens_out = jint(json_object_get(u, "output_tokens"));
    return LLM_PARSE_OK;
}

static int parse_gemini(json_t *root, llm_response *r, kbv_buf *text) {
    json_t *cand = json_array_get(json_object_get(root, "candidates"), 0);
    if (!json_is_object(cand)) {
        json_t *block = json_object_get(json_object_get(root, "promptFeedback"), "blockReason");
        if (json_is_string(block)) return shape(r, "the prompt was blocked (%s)", json_string_value(block));
        return shape(r, "%s", "the response has no candidates[0]");
    }
    size_t i;
    json_t *p;
    json_array_foreach(json_object_get(json_object_get(cand, "content"), "parts"), i, p) {
        json_t *t = json_object_get(p, "text");
        if (!json_is_string(t) || json_is_true(json_object_get(p, "thought"))) continue;
        if (kbv_buf_append(text, json_string_value(t), json_string_length(t)) < 0) return -1;
    }
    set_finish(r, json_object_get(cand, "finishReason"));
    json_t *u = json_object_get(root, "usageMetadata");
    r->tokens_in = jint(json_object_get(u, "promptTokenCount"));
    r->tokens_out = jint(json_object_get(u, "candidatesTokenCount"));
    /* Thinking is billed as output but counted apart; OpenAI's and Anthropic's counts
     * include it, so this one does too. */
    long long thoughts = jint(json_object_get(u, "thoughtsTokenCount"));
    if (thoughts > 0) r->tokens_out = (r->tokens_out > 0 ? r->tokens_out : 0) + thoughts;
    return LLM_PARSE_OK;
}

int llm_parse_response(llm_provider p, const char *body, size_t len, llm_response *r) {
    free(r->text);
    r->text = NULL, r->ok = 0, r->tokens_in = r->tokens_out = -1, r->finish_reason[0] = '\0';
    json_error_t je;
    json_t *root = json_loadb(body, len, 0, &je);
    if (!root) {
        snprintf(r->error, sizeof r->error, "invalid JSON in the response (truncated?): %s at byte %d", je.text, je.position);
        return LLM_PARSE_BAD_JSON;
    }
    int rc;
    kbv_buf text;
    kbv_buf_init(&text);
    json_t *e = json_object_get(root, "error");
    if (!json_is_object(root)) {
        rc = shape(r, "%s", "the response is not a JSON object");
    } else if (e && !json_is_null(e)) { /* an error delivered with a 2xx status */
        char detail[200];
        llm_error_detail(body, len, detail, sizeof detail);
        rc = shape(r, "the response is an error: %s", detail);
    } else if (p == LLM_OPENAI) {
        rc = parse_openai(root, r, &text);
    } else if (p == LLM_ANTHROPIC) {
        rc = parse_anthropic(root, r, &text);
    } else {
        rc = parse_gemini(root, r, &text);
    }
    json_decref(root);
    if (rc == LLM_PARSE_OK) {
        r->text = text.data ? text.data : strdup("");
        if (!r->text) return -1;
        r->ok = 1, r->error[0] = '\0';
        return LLM_PARSE_OK;
    }
    kbv_buf_free(&text);
    return rc;
}

/* Copy s (n bytes) into out, dropping control characters and squeezing runs of spaces;
 * "..." marks a cut. */
static void copy_clean(const char *s, size_t n, char *out, size_t outlen) {
    size_t o = 0;
    int cut = 0;
    for (size_t i = 0; i < n && s[i]; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c < 0x20 || c == 0x7f) c = ' ';
        if (c == ' ' && (o == 0 || out[o - 1] == ' ')) continue;
        if (o + 1 >= outlen) {
            cut = 1;
            break;
        }
        out[o++] = (char)c;
    }
    if (cut && outlen > 4) {
        o = outlen - 4;
        while (o > 0 && ((unsigned char)out[o] & 0xC0) == 0x80) o--; /* not inside a UTF-8 sequence */
        memcpy(out + o, "...", 3), o += 3;
    }
    while (o > 0 && out[o - 1] == ' ') o--;
    if (outlen) out[o] = '\0';
}

void llm_error_detail(const char *body, size_t len, char *out, size_t outlen) {
    if (!outlen) return;
    out[0] = '\0';
    if (!body || !len) return;
    json_t *root = json_loadb(body, len, 0, NULL);
    json_t *e = json_object_get(root, "error"), *msg = NULL;
    if (json_is_object(e)) msg = json_object_get(e, "message");
    else if (json_is_string(e)) msg = e;
    if (!msg) msg = json_object_get(root, "message");
    if (!msg) msg = json_object_get(root, "detail"); /* some OpenAI-compatible servers */
    if (json_is_string(msg)) copy_clean(json_string_value(msg), json_string_length(msg), out, outlen);
    else copy_clean(body, len, out, outlen);
    json_decref(root);
}

double llm_retry_after_s(const char *value, time_t now) {
    if (!value) return -1;
    while (*value == ' ' || *value == '\t') value++;
    if (isdigit((unsigned char)*value)) {
        char *end;
        errno = 0;
        double s = strtod(value, &end); /* delay-seconds; a fraction is tolerated */
        while (*end == ' ' || *end == '\t' || *end == '\r' || *end == '\n') end++;
        if (errno == 0 && *end == '\0' && isfinite(s)) return s;
        return -1;
    }
    time_t t = curl_getdate(value, NULL); /* the three HTTP date formats */
    if (t == (time_t)-1) return -1;
    return t > now ? (double)(t - now) : 0;
}

double llm_backoff_s(const llm_opts *o, int retry, double ra, double u) {
    if (ra >= 0) return ra < o->backoff_max_s ? ra : o->backoff_max_s;
    double ceil_s = o->backoff_base_s * ldexp(1.0, retry < 60 ? retry : 60);
    if (ceil_s > o->backoff_max_s) ceil_s = o->backoff_max_s;
    return u * ceil_s;
}

/* ---------------------------------------------------------------------------------------
 * One HTTP attempt
 * ------------------------------------------------------------------------------------- */

typedef struct http_call {
    kbv_buf body;
    size_t max_body;
    int oversized, oom;
    double retry_after_s; /* -1: the response had none */
    volatile int *cancel;
} http_call;

static size_t on_body(char *data, size_t size, size_t nmemb, void *ud) {
    http_call *c = ud;
    size_t n = size * nmemb;
    if (c->body.len + n > c->max_body) {
        c->oversized = 1;
        return 0; /* stops the transfer: CURLE_WRITE_ERROR */
    }
    if (kbv_buf_append(&c->body, data, n) < 0) {
        c->oom = 1;
        return 0;
    }
    return n;
}

static size_t on_header(char *data, size_t size, size_t nmemb, void *ud) {
    http_call *c = ud;
    size_t n = size * nmemb;
    char line[256];
    if (n >= sizeof line) return n; /* no header of interest is that long */
    memcpy(line, data, n), line[n] = '\0';
    line[strcspn(line, "\r\n")] = '\0';
    if (strncmp(line, "HTTP/", 5) == 0) c->retry_after_s = -1; /* a new response (after a 1xx) */
    else if (strncasecmp(line, "retry-after-ms:", 15) == 0) {
        double ms = llm_retry_after_s(line + 15, time(NULL));
        if (ms >= 0) c->retry_after_s = ms / 1000;
    } else if (strncasecmp(line, "retry-after:", 12) == 0 && c->retry_after_s < 0) {
        c->retry_after_s = llm_retry_after_s(line + 12, time(NULL));
    }
    return n;
}

static int on_progress(void *ud, curl_off_t dt, curl_off_t dn, curl_off_t ut, curl_off_t un) {
    http_call *c = ud;
    return c->cancel && *c->cancel ? 1 : 0;
}

/* What an attempt's outcome asks for. */
enum { ATTEMPT_DONE, ATTEMPT_RETRY, ATTEMPT_FAIL, ATTEMPT_OOM };

static int transient_curl(CURLcode rc) {
    switch (rc) {
    case CURLE_OPERATION_TIMEDOUT:
    case CURLE_COULDNT_CONNECT:
    case CURLE_COULDNT_RESOLVE_HOST:
    case CURLE_COULDNT_RESOLVE_PROXY:
    case CURLE_SEND_ERROR:
    case CURLE_RECV_ERROR:
    case CURLE_GOT_NOTHING:
    case CURLE_PARTIAL_FILE:
    case CURLE_SSL_CONNECT_ERROR:
    case CURLE_HTTP2:
    case CURLE_HTTP2_STREAM:
    case CURLE_WEIRD_SERVER_REPLY: return 1;
    default: return 0;
    }
}

static int transient_status(long st) { return st == 408 || st == 429 || (st >= 500 && st <= 599); }

typedef struct attempt_in {
    const llm_model *m;
    const llm_opts *o;
    const char *url, *body;
    struct curl_slist *headers;
} attempt_in;

static void set_common(CURL *h, const attempt_in *in, http_call *c, char *errbuf) {
    long timeout_ms = in->o->timeout_s > 0 ? (long)(in->o->timeout_s * 1000) : 0;
    curl_easy_setopt(h, CURLOPT_URL, in->url);
    curl_easy_setopt(h, CURLOPT_POSTFIELDS, in->body);
    curl_easy_setopt(h, CURLOPT_HTTPHEADER, in->headers);
    curl_easy_setopt(h, CURLOPT_USERAGENT, "kbv/" KBV_VERSION);
    curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(h, CURLOPT_FOLLOWLOCATION, 0L);
#if LIBCURL_VERSION_NUM >= 0x075500
    curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http,https");
#endif
    curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, timeout_ms);
    curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, timeout_ms && timeout_ms < 30000 ? timeout_ms : 30000L);
    curl_easy_setopt(h, CURLOPT_TCP_KEEPALIVE, 1L); /* answers may take minutes */
    curl_easy_setopt(h, CURLOPT_ACCEPT_ENCODING, "");
    curl_easy_setopt(h, CURLOPT_MAXFILESIZE_LARGE, (curl_off_t)in->o->max_body);
    curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_body);
    curl_easy_setopt(h, CURLOPT_WRITEDATA, c);
    curl_easy_setopt(h, CURLOPT_HEADERFUNCTION, on_header);
    curl_easy_setopt(h, CURLOPT_HEADERDATA, c);
    curl_easy_setopt(h, CURLOPT_XFERINFOFUNCTION, on_progress);
    curl_easy_setopt(h, CURLOPT_XFERINFODATA, c);
    curl_easy_setopt(h, CURLOPT_NOPROGRESS, 0L);
    curl_easy_setopt(h, CURLOPT_ERRORBUFFER, errbuf);
}

/* The outcome of a transfer that failed in curl. */
static int curl_failure(CURLcode rc, const http_call *c, const attempt_in *in, const char *errbuf, llm_response *r) {
    if (c->oom) return ATTEMPT_OOM;
    if (c->oversized || rc == CURLE_FILESIZE_EXCEEDED) {
        snprintf(r->error, sizeof r->error, "the response is larger than %zu bytes (max_body)", in->o->max_body);
        r->permanent = 1;
        return ATTEMPT_FAIL;
    }
    if (rc == CURLE_ABORTED_BY_CALLBACK) {
        snprintf(r->error, sizeof r->error, "cancelled");
        r->cancelled = 1;
        return ATTEMPT_FAIL;
    }
    if (rc == CURLE_OPERATION_TIMEDOUT) {
        snprintf(r->error, sizeof r->error, "no complete answer from %s within %g s (request timeout)", in->url, in->o->timeout_s);
        return ATTEMPT_RETRY;
    }
    snprintf(r->error, sizeof r->error, "%s: %s", in->url, errbuf[0] ? errbuf : curl_easy_strerror(rc));
    if (transient_curl(rc)) return ATTEMPT_RETRY;
    r->permanent = 1;
    return ATTEMPT_FAIL;
}

/* The outcome of a transfer that got an HTTP response. */
static int http_outcome(long st, const http_call *c, const attempt_in *in, llm_response *r) {
    const char *prov = llm_provider_name(in->m->provider);
    if (st >= 200 && st < 300) {
        int rc = llm_parse_response(in->m->provider, c->body.data ? c->body.data : "", c->body.len, r);
        if (rc < 0) return ATTEMPT_OOM;
        if (rc == LLM_PARSE_OK) return ATTEMPT_DONE;
        if (rc == LLM_PARSE_BAD_JSON) return ATTEMPT_RETRY;
        r->permanent = 1;
        return ATTEMPT_FAIL;
    }
    char detail[180];
    llm_error_detail(c->body.data, c->body.len, detail, sizeof detail);
    snprintf(r->error, sizeof r->error, "HTTP %ld from %s%s%s", st, prov, detail[0] ? ": " : "", detail);
    if (transient_status(st)) return ATTEMPT_RETRY;
    r->permanent = 1;
    return ATTEMPT_FAIL;
}

/* One request. *retry_after gets the response's Retry-After in seconds (-1: none). */
static int attempt(const attempt_in *in, llm_response *r, double *retry_after) {
    http_call c = {.max_body = in->o->max_body, .retry_after_s = -1, .cancel = in->o->cancel};
    kbv_buf_init(&c.body);
    char errbuf[CURL_ERROR_SIZE] = "";
    CURL *h = curl_easy_init();
    if (!h) return ATTEMPT_OOM;
    set_common(h, in, &c, errbuf);
    double t0 = kbv_now();
    CURLcode rc = curl_easy_perform(h);
    r->latency_s = kbv_now() - t0;
    r->attempts++;
    long st = 0;
    curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &st);
    curl_easy_cleanup(h);
    r->http_status = (int)st;
    *retry_after = c.retry_after_s;
    int out = rc != CURLE_OK ? curl_failure(rc, &c, in, errbuf, r) : http_outcome(st, &c, in, r);
    if (c.body.len || c.oversized) { /* keep the last body, also a cut one */
        free(r->raw);
        r->raw = c.body.data ? c.body.data : strdup("");
        c.body.data = NULL;
        if (!r->raw) out = ATTEMPT_OOM;
    }
    kbv_buf_free(&c.body);
    return out;
}

/* ---------------------------------------------------------------------------------------
 * The call with retries
 * ------------------------------------------------------------------------------------- */

static int cancelled(const llm_opts *o) { return o->cancel && *o->cancel; }

/* Sleep s seconds in short steps, waking early when cancelled. 0, or -1 if cancelled. */
static int wait_s(double s, const llm_opts *o) {
    double end = kbv_now() + s;
    for (;;) {
        if (cancelled(o)) return -1;
        double left = end - kbv_now();
        if (left <= 0) return 0;
        if (left > 0.05) left = 0.05;
        struct timespec ts = {0, (long)(left * 1e9)};
        nanosleep(&ts, NULL);
    }
}

static double unit_random(void) {
    uint64_t x;
    if (kbv_random_u64(&x) < 0) x = kbv_mix64((uint64_t)(kbv_now() * 1e9));
    return (double)(x >> 11) * 0x1.0p-53;
}

static void response_init(llm_response *r) {
    memset(r, 0, sizeof *r);
    r->tokens_in = r->tokens_out = -1;
}

/* Build the headers: JSON, no Expect, and the key's header when there is a key. */
static struct curl_slist *make_headers(const llm_model *m, const char *key) {
    struct curl_slist *h = curl_slist_append(NULL, "Content-Type: application/json"), *t;
    if (!h || !(t = curl_slist_append(h, "Expect:"))) goto oom;
    if (m->provider == LLM_ANTHROPIC && !(t = curl_slist_append(h, "anthropic-version: 2023-06-01"))) goto oom;
    if (key) {
        size_t n = strlen(key) + 40;
        char *line = malloc(n);
        if (!line) goto oom;
        if (m->provider == LLM_OPENAI) snprintf(line, n, "Authorization: Bearer %s", key);
        else snprintf(line, n, "%s: %s", llm_auth_header(m->provider), key);
        t = curl_slist_append(h, line);
        memset(line, 0, n);
        free(line);
        if (!t) goto oom;
    }
    return h;
oom:
    curl_slist_free_all(h);
    return NULL;
}

/* Fail r before any request: a retry cannot help. Returns 0 (r is filled). */
static int refuse(llm_response *r, const char *fmt, ...) KBV_PRINTF(2, 3);
static int refuse(llm_response *r, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(r->error, sizeof r->error, fmt, ap);
    va_end(ap);
    r->permanent = 1;
    return 0;
}

/* The key from m's variable: 0 and *key (NULL when m takes none), or -1 with r refused. */
static int api_key(const llm_model *m, llm_response *r, const char **key) {
    *key = NULL;
    if (!m->api_key_env[0]) return 0;
    const char *k = getenv(m->api_key_env);
    if (!k || !*k) return refuse(r, "the environment variable %s (api_key_env of model %s) is not set", m->api_key_env, m->name), -1;
    if (strpbrk(k, "\r\n")) /* it would split the header: refused, and nothing of it said */
        return refuse(r, "the environment variable %s holds a line break", m->api_key_env), -1;
    *key = k;
    return 0;
}

static void set_cancelled(llm_response *r) {
    snprintf(r->error, sizeof r->error, "cancelled after %d attempt%s", r->attempts, r->attempts == 1 ? "" : "s");
    r->cancelled = 1;
}

/* Attempts until one is done, fails, runs out of retries or is cancelled. */
static int attempts(const attempt_in *in, llm_response *r) {
    const llm_opts *o = in->o;
    for (int retry = 0;; retry++) {
        if (cancelled(o)) return set_cancelled(r), ATTEMPT_FAIL;
        double ra = -1;
        r->permanent = 0;
        int out = attempt(in, r, &ra);
        if (out != ATTEMPT_RETRY) return out;
        if (retry >= o->max_retries) {
            size_t l = strlen(r->error);
            snprintf(r->error + l, sizeof r->error - l, " (gave up after %d attempts)", r->attempts);
            return ATTEMPT_FAIL;
        }
        if (wait_s(llm_backoff_s(o, retry, ra, unit_random()), o) < 0) return set_cancelled(r), ATTEMPT_FAIL;
    }
}

int llm_complete(const llm_model *m, const char *prompt, const llm_opts *o, llm_response *r) {
    response_init(r);
    if (llm_global_init(NULL) < 0) /* once only (pthread_once): safe even if the caller forgot */
        return refuse(r, "libcurl could not be initialised (curl_global_init)");
    const char *key;
    char url[1024];
    if (api_key(m, r, &key) < 0) return 0;
    if (llm_request_url(m, url, sizeof url) < 0) return refuse(r, "the URL for model %s is too long", m->name);
    char *body = llm_request_body(m, prompt);
    if (!body) {
        json_t *probe = json_string(prompt); /* NULL for invalid UTF-8 (or no memory) */
        if (!probe) return refuse(r, "the prompt is not valid UTF-8");
        json_decref(probe);
        return -1;
    }
    struct curl_slist *headers = make_headers(m, key);
    attempt_in in = {.m = m, .o = o, .url = url, .body = body, .headers = headers};
    int out = headers ? attempts(&in, r) : ATTEMPT_OOM;
    curl_slist_free_all(headers);
    free(body);
    if (out == ATTEMPT_OOM) return -1;
    if (out != ATTEMPT_DONE) {
        r->ok = 0;
        free(r->text), r->text = NULL;
    }
    llm_scrub_key(r->error, key);
    llm_scrub_key(r->raw, key);
    llm_scrub_key(r->text, key);
    return 0;
}

/* ---------------------------------------------------------------------------------------
 * The models config
 * ------------------------------------------------------------------------------------- */

/* TOML, the subset above: into {"models": [{...}, ...]}. Errors name path:line. */
static int toml_value(const char *s, json_t **out, const char **end) {
    if (*s == '"' || *s == '\'') {
        char q = *s++;
        kbv_buf b;
        kbv_buf_init(&b);
        for (; *s && *s != q; s++) {
            char c = *s;
            if (q == '"' && c == '\\') {
                c = *++s;
                if (c == 'n') c = '\n';
                else if (c == 't') c = '\t';
                else if (c != '"' && c != '\\') c = 0;
            }
            if (!c || kbv_buf_append(&b, &c, 1) < 0) return kbv_buf_free(&b), -1;
        }
        if (*s != q) return kbv_buf_free(&b), -1;
        *out = json_string(b.data ? b.data : "");
        kbv_buf_free(&b);
        *end = s + 1;
        return *out ? 0 : -1;
    }
    if (strncmp(s, "true", 4) == 0 || strncmp(s, "false", 5) == 0) {
        *out = json_boolean(*s == 't');
        *end = s + (*s == 't' ? 4 : 5);
        return 0;
    }
    char *e;
    errno = 0;
    if (strcspn(s, ".eE") < strcspn(s, " \t#")) {
        double d = strtod(s, &e);
        *out = e == s || errno ? NULL : json_real(d);
    } else {
        long long v = strtoll(s, &e, 10);
        *out = e == s || errno ? NULL : json_integer(v);
    }
    *end = e;
    return *out ? 0 : -1;
}

static json_t *toml_parse(const char *text, const char *path, kbv_err *err) {
    json_t *models = json_array(), *root = json_pack("{s:o}", "models", models), *cur = NULL;
    if (!root) return kbv_seterr(err, "%s: out of memory", path), NULL;
    int line = 0;
    for (const char *p = text; *p;) {
        const char *eol = strchr(p, '\n');
        size_t n = eol ? (size_t)(eol - p) : strlen(p);
        char buf[2048];
        line++;
        if (n >= sizeof buf) goto bad;
        memcpy(buf, p, n), buf[n] = '\0';
        p += n + (eol ? 1 : 0);
        char *s = buf;
        while (isspace((unsigned char)*s)) s++;
        if (!*s || *s == '#') continue;
        if (strncmp(s, "[[models]]", 10) == 0) {
            s += 10;
            if (!(cur = json_object()) || json_array_append_new(models, cur) < 0) goto bad;
        } else {
            char *k = s;
            while (isalnum((unsigned char)*s) || *s == '_' || *s == '-') s++;
            size_t kl = (size_t)(s - k);
            while (*s == ' ' || *s == '\t') s++;
            if (!kl || *s != '=' || !cur) goto bad;
            char key[64];
            if (kl >= sizeof key) goto bad;
            memcpy(key, k, kl), key[kl] = '\0';
            for (s++; *s == ' ' || *s == '\t'; s++) {}
            json_t *v;
            const char *e;
            if (toml_value(s, &v, &e) < 0) goto bad;
            if (json_object_get(cur, key)) {
                json_decref(v);
                json_decref(root);
                return kbv_seterr(err, "%s:%d: %s is set twice", path, line, key), NULL;
            }
            json_object_set_new(cur, key, v);
            s = (char *)e;
        }
        while (isspace((unsigned char)*s)) s++;
        if (*s && *s != '#') goto bad;
    }
    return root;
bad:
    json_decref(root);
    kbv_seterr(err,
               "%s:%d: not in the TOML subset kbv reads ([[models]] tables of key = \"string\" | number | true | false; "
               "use JSON for more)",
               path, line);
    return NULL;
}

/* Each field of a model: its name, and how to read it. */
typedef struct mctx {
    const char *where; /* "path: models[i] (\"name\")" */
    kbv_err *err;
} mctx;

#define MERR(c, ...) (kbv_seterr((c)->err, __VA_ARGS__), kbv_wraperr((c)->err, "%s", (c)->where))

/* A string field into out (outlen bytes, so at most outlen - 1 characters). 1 when set, 0
 * when absent, -1 on error. */
static int mstr(mctx *c, json_t *o, const char *k, char *out, size_t outlen, int required) {
    json_t *v = json_object_get(o, k);
    if (!v) return required ? MERR(c, "%s is missing", k) : 0;
    if (!json_is_string(v)) return MERR(c, "%s must be a string", k);
    const char *s = json_string_value(v);
    if (strlen(s) >= outlen) return MERR(c, "%s is longer than %zu characters", k, outlen - 1);
    for (const char *q = s; *q; q++)
        if ((unsigned char)*q < 0x20 || *q == 0x7f) return MERR(c, "%s holds a control character", k);
    if (required && !*s) return MERR(c, "%s is empty", k);
    snprintf(out, outlen, "%s", s);
    return 1;
}

/* A number field in [lo, hi]; integer-only when integral. */
static int mnum(mctx *c, json_t *o, const char *k, double lo, double hi, int integral, double *out) {
    json_t *v = json_object_get(o, k);
    if (!v) return 0;
    if (integral ? !json_is_integer(v) : !json_is_number(v))
        return MERR(c, "%s must be %s", k, integral ? "an integer" : "a number");
    double d = json_number_value(v);
    if (!(d >= lo && d <= hi)) return MERR(c, "%s must be from %g to %g (is %g)", k, lo, hi, d);
    *out = d;
    return 1;
}

static const char *const kFields[] = {"name",        "provider",        "base_url",          "model",
                                      "temperature", "max_tokens",      "reasoning_effort",  "thinking_budget",
                                      "api_key_env", "concurrency",     "price_in_per_mtok", "price_out_per_mtok"};

static int check_fields(mctx *c, json_t *o) {
    const char *k;
    json_t *v;
    json_object_foreach(o, k, v) {
        if (strcmp(k, "api_key") == 0) return MERR(c, "api_key: keys are never read from the config; name an environment variable in api_key_env");
        size_t i = 0;
        while (i < sizeof kFields / sizeof *kFields && strcmp(k, kFields[i]) != 0) i++;
        if (i == sizeof kFields / sizeof *kFields) return MERR(c, "unknown field \"%s\"", k);
    }
    return 0;
}

static int check_name(mctx *c, const char *s) {
    if (s[0] == '.') return MERR(c, "name must not start with '.'");
    for (const char *q = s; *q; q++)
        if (!isalnum((unsigned char)*q) && !strchr("._+-", *q))
            return MERR(c, "name may hold only letters, digits and . _ + - (it names a folder of candidates)");
    return 0;
}

static int read_provider(mctx *c, json_t *o, llm_model *m) {
    char prov[32];
    if (mstr(c, o, "provider", prov, sizeof prov, 1) < 0) return -1;
    if (strcmp(prov, "openai") == 0) m->provider = LLM_OPENAI;
    else if (strcmp(prov, "anthropic") == 0) m->provider = LLM_ANTHROPIC;
    else if (strcmp(prov, "gemini") == 0) m->provider = LLM_GEMINI;
    else return MERR(c, "provider must be \"openai\", \"anthropic\" or \"gemini\" (is \"%s\")", prov);
    return 0;
}

/* base_url, with the provider's public endpoint by default; api_key_env, by default the
 * provider's usual variable (for an OpenAI-compatible endpoint only when base_url is
 * OpenAI's own, since local servers take no key). */
static int read_endpoint(mctx *c, json_t *o, llm_model *m) {
    static const char *const urls[] = {"https://api.openai.com/v1", "https://api.anthropic.com", "https://generativelanguage.googleapis.com"};
    static const char *const keys[] = {"OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GEMINI_API_KEY"};
    int has_url = mstr(c, o, "base_url", m->base_url, sizeof m->base_url, 0);
    if (has_url < 0) return -1;
    if (!has_url) snprintf(m->base_url, sizeof m->base_url, "%s", urls[m->provider]);
    if (strncmp(m->base_url, "http://", 7) != 0 && strncmp(m->base_url, "https://", 8) != 0)
        return MERR(c, "base_url must start with http:// or https://");
    if (strpbrk(m->base_url, " \"<>\\^`{|}")) return MERR(c, "base_url holds a character a URL cannot");
    size_t l = strlen(m->base_url);
    while (l > 8 && m->base_url[l - 1] == '/') m->base_url[--l] = '\0';
    int has_key = mstr(c, o, "api_key_env", m->api_key_env, sizeof m->api_key_env, 0);
    if (has_key < 0) return -1;
    if (!has_key && (m->provider != LLM_OPENAI || !has_url)) snprintf(m->api_key_env, sizeof m->api_key_env, "%s", keys[m->provider]);
    for (const char *q = m->api_key_env; *q; q++)
        if (!isalnum((unsigned char)*q) && *q != '_') return MERR(c, "api_key_env must be a variable's name (letters, digits, _)");
    return 0;
}

/* The sampling and reasoning settings, and what each provider accepts of them. */
static int read_sampling(mctx *c, json_t *o, llm_model *m) {
    double d;
    int rc;
    m->temperature = -1;
    if ((rc = mnum(c, o, "temperature", 0, m->provider == LLM_ANTHROPIC ? 1 : 2, 0, &d)) < 0) return -1;
    if (rc) m->temperature = d;
    m->max_tokens = 8192;
    if ((rc = mnum(c, o, "max_tokens", 1, 10000000, 1, &d)) < 0) return -1;
    if (rc) m->max_tokens = (int)d;
    if ((rc = mstr(c, o, "reasoning_effort", m->reasoning_effort, sizeof m->reasoning_effort, 0)) < 0) return -1;
    if (rc && m->provider != LLM_OPENAI) return MERR(c, "reasoning_effort is for OpenAI-compatible endpoints (use thinking_budget)");
    for (const char *q = m->reasoning_effort; *q; q++)
        if (!islower((unsigned char)*q)) return MERR(c, "reasoning_effort must be a lowercase word such as \"low\", \"medium\", \"high\"");
    if ((rc = mnum(c, o, "thinking_budget", 0, 10000000, 1, &d)) < 0) return -1;
    m->thinking_budget = rc ? (int)d : 0;
    if (m->thinking_budget > 0 && m->provider == LLM_OPENAI) return MERR(c, "thinking_budget is for Anthropic and Gemini (use reasoning_effort)");
    if (m->thinking_budget > 0 && m->provider == LLM_ANTHROPIC) {
        if (m->thinking_budget < 1024 || m->thinking_budget >= m->max_tokens)
            return MERR(c, "thinking_budget must be at least 1024 and below max_tokens (%d) for Anthropic", m->max_tokens);
        if (m->temperature >= 0 && m->temperature != 1) return MERR(c, "Anthropic's extended thinking takes no temperature but 1 (leave it out)");
    }
    return 0;
}

static int read_model(json_t *o, int i, const char *path, llm_model *m, kbv_err *err) {
    char where[256];
    mctx c = {where, err};
    snprintf(where, sizeof where, "%s: models[%d]", path, i);
    if (!json_is_object(o)) return MERR(&c, "not an object");
    memset(m, 0, sizeof *m);
    if (mstr(&c, o, "name", m->name, sizeof m->name, 1) < 0) return -1;
    snprintf(where, sizeof where, "%s: models[%d] (\"%s\")", path, i, m->name);
    if (check_name(&c, m->name) < 0 || check_fields(&c, o) < 0 || read_provider(&c, o, m) < 0) return -1;
    if (mstr(&c, o, "model", m->model_id, sizeof m->model_id, 1) < 0) return -1;
    if (m->provider == LLM_GEMINI) { /* it goes into the URL's path */
        if (strncmp(m->model_id, "models/", 7) == 0) memmove(m->model_id, m->model_id + 7, strlen(m->model_id + 7) + 1);
        for (const char *q = m->model_id; *q; q++)
            if (!isalnum((unsigned char)*q) && !strchr("._-", *q)) return MERR(&c, "model may hold only letters, digits and . _ - for Gemini");
    }
    if (read_endpoint(&c, o, m) < 0 || read_sampling(&c, o, m) < 0) return -1;
    double d;
    int rc;
    m->concurrency = 4;
    if ((rc = mnum(&c, o, "concurrency", 1, 1024, 1, &d)) < 0) return -1;
    if (rc) m->concurrency = (int)d;
    if (mnum(&c, o, "price_in_per_mtok", 0, 1e6, 0, &m->price_in_per_mtok) < 0) return -1;
    if (mnum(&c, o, "price_out_per_mtok", 0, 1e6, 0, &m->price_out_per_mtok) < 0) return -1;
    return 0;
}

int llm_parse_models(const char *text, int toml, const char *path, llm_model **models, int *n, kbv_err *err) {
    *models = NULL, *n = 0;
    json_t *root;
    if (toml) {
        if (!(root = toml_parse(text, path, err))) return -1;
    } else {
        json_error_t je;
        if (!(root = json_loads(text, JSON_REJECT_DUPLICATES, &je)))
            return kbv_seterr(err, "%s:%d:%d: %s", path, je.line, je.column, je.text);
    }
    json_t *arr = json_object_get(root, "models");
    size_t cnt = json_array_size(arr);
    if (!json_is_array(arr) || cnt == 0) {
        json_decref(root);
        return kbv_seterr(err, "%s: no models (expected %s)", path, toml ? "[[models]] tables" : "{\"models\": [{...}, ...]}");
    }
    llm_model *ms = calloc(cnt, sizeof *ms);
    if (!ms) return json_decref(root), kbv_seterr(err, "%s: out of memory", path);
    for (size_t i = 0; i < cnt; i++) {
        if (read_model(json_array_get(arr, i), (int)i, path, &ms[i], err) < 0) goto fail;
        for (size_t j = 0; j < i; j++)
            if (strcmp(ms[j].name, ms[i].name) == 0) {
                kbv_seterr(err, "%s: models[%zu]: the name \"%s\" is also models[%zu]'s", path, i, ms[i].name, j);
                goto fail;
            }
    }
    json_decref(root);
    *models = ms, *n = (int)cnt;
    return 0;
fail:
    json_decref(root);
    free(ms);
    return -1;
}

int llm_load_models(const char *path, llm_model **models, int *n, kbv_err *err) {
    char *text;
    size_t len;
    *models = NULL, *n = 0;
    if (kbv_read_file(path, &text, &len, err) < 0) return -1;
    if (strlen(text) != len) {
        free(text);
        return kbv_seterr(err, "%s: holds a NUL byte (not a models config)", path);
    }
    size_t pl = strlen(path);
    int toml = pl >= 5 && strcasecmp(path + pl - 5, ".toml") == 0;
    int rc = llm_parse_models(text, toml, path, models, n, err);
    free(text);
    return rc;
}
