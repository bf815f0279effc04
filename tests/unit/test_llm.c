/* test_llm.c -- llm.c: request bodies and response parsing for the three providers,
 * Retry-After and backoff, the models config (JSON and TOML) and its errors, then the client
 * against tests/gen/stub_server.py on loopback: retries, Retry-After, timeouts, truncated and
 * oversized bodies, auth failures, cancellation and concurrent calls. The stub part is
 * skipped with a message where /usr/bin/python3 or the stub is missing. */
#include <curl/curl.h>
#include <jansson.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"
#include "llm.h"

#define STUB "tests/gen/stub_server.py"
#define STUB_KEY "kbv-test-key-0123456789abcdef"

static llm_model model_of(llm_provider p, const char *id) {
    llm_model m;
    memset(&m, 0, sizeof m);
    snprintf(m.name, sizeof m.name, "m-%s", id);
    m.provider = p;
    snprintf(m.base_url, sizeof m.base_url, "http://127.0.0.1:1");
    snprintf(m.model_id, sizeof m.model_id, "%s", id);
    m.temperature = -1, m.max_tokens = 100, m.concurrency = 4;
    return m;
}

/* The body llm_request_body builds for m, parsed back. */
static json_t *body_of(const llm_model *m, const char *prompt) {
    char *s = llm_request_body(m, prompt);
    json_t *o = s ? json_loads(s, 0, NULL) : NULL;
    free(s);
    return o;
}

static json_t *jget(json_t *o, const char *path) {
    json_t *v = o;
    char buf[256], *save = NULL;
    snprintf(buf, sizeof buf, "%s", path);
    for (char *t = strtok_r(buf, ".", &save); t && v; t = strtok_r(NULL, ".", &save))
        v = (*t >= '0' && *t <= '9') ? json_array_get(v, (size_t)atoi(t)) : json_object_get(v, t);
    return v;
}

static const char *jstr(json_t *o, const char *path) { return json_string_value(jget(o, path)); }

static void test_requests(void) {
    char url[1024];
    llm_model m = model_of(LLM_OPENAI, "gpt-x");
    CHECK(llm_request_url(&m, url, sizeof url) == 0);
    CHECK_STR(url, "http://127.0.0.1:1/chat/completions");
    json_t *o = body_of(&m, "write \"a\" kernel\n");
    CHECK_STR(jstr(o, "model"), "gpt-x");
    CHECK_STR(jstr(o, "messages.0.role"), "user");
    CHECK_STR(jstr(o, "messages.0.content"), "write \"a\" kernel\n");
    CHECK(json_integer_value(jget(o, "max_tokens")) == 100);
    CHECK(!jget(o, "temperature") && !jget(o, "reasoning_effort") && !jget(o, "max_completion_tokens"));
    json_decref(o);
    m.temperature = 0.5;
    snprintf(m.reasoning_effort, sizeof m.reasoning_effort, "high");
    o = body_of(&m, "p");
    CHECK_NEAR(json_number_value(jget(o, "temperature")), 0.5, 0);
    CHECK_STR(jstr(o, "reasoning_effort"), "high");
    CHECK(json_integer_value(jget(o, "max_completion_tokens")) == 100 && !jget(o, "max_tokens"));
    json_decref(o);
    CHECK_STR(llm_auth_header(LLM_OPENAI), "Authorization");

    m = model_of(LLM_ANTHROPIC, "claude-x");
    CHECK(llm_request_url(&m, url, sizeof url) == 0);
    CHECK_STR(url, "http://127.0.0.1:1/v1/messages");
    o = body_of(&m, "p");
    CHECK_STR(jstr(o, "model"), "claude-x");
    CHECK(json_integer_value(jget(o, "max_tokens")) == 100);
    CHECK_STR(jstr(o, "messages.0.content"), "p");
    CHECK(!jget(o, "thinking") && !jget(o, "temperature"));
    json_decref(o);
    m.thinking_budget = 2048, m.temperature = 1;
    o = body_of(&m, "p");
    CHECK_STR(jstr(o, "thinking.type"), "enabled");
    CHECK(json_integer_value(jget(o, "thinking.budget_tokens")) == 2048);
    CHECK_NEAR(json_number_value(jget(o, "temperature")), 1, 0);
    json_decref(o);
    CHECK_STR(llm_auth_header(LLM_ANTHROPIC), "x-api-key");

    m = model_of(LLM_GEMINI, "gemini-x");
    CHECK(llm_request_url(&m, url, sizeof url) == 0);
    CHECK_STR(url, "http://127.0.0.1:1/v1beta/models/gemini-x:generateContent");
    o = body_of(&m, "p\u00e9");
    CHECK_STR(jstr(o, "contents.0.role"), "user");
    CHECK_STR(jstr(o, "contents.0.parts.0.text"), "p\u00e9");
    CHECK(json_integer_value(jget(o, "generationConfig.maxOutputTokens")) == 100);
    CHECK(!jget(o, "generationConfig.thinkingConfig") && !jget(o, "generationConfig.temperature") && !jget(o, "model"));
    json_decref(o);
    m.thinking_budget = 512, m.temperature = 0;
    o = body_of(&m, "p");
    CHECK(json_integer_value(jget(o, "generationConfig.thinkingConfig.thinkingBudget")) == 512);
    CHECK(json_is_number(jget(o, "generationConfig.temperature")));
    json_decref(o);
    CHECK_STR(llm_auth_header(LLM_GEMINI), "x-goog-api-key");
    CHECK(llm_request_url(&m, url, 20) == -1); /* does not fit */
    CHECK(llm_request_body(&m, "bad \xff utf-8") == NULL);
}

static int parse(llm_provider p, const char *body, llm_response *r) {
    memset(r, 0, sizeof *r);
    return llm_parse_response(p, body, strlen(body), r);
}

static void test_responses(void) {
    llm_response r;
    CHECK(parse(LLM_OPENAI,
                "{\"choices\":[{\"message\":{\"role\":\"assistant\",\"content\":\"hi\"},\"finish_reason\":\"stop\"}],"
                "\"usage\":{\"prompt_tokens\":12,\"completion_tokens\":34}}",
                &r) == LLM_PARSE_OK);
    CHECK(r.ok && r.tokens_in == 12 && r.tokens_out == 34);
    CHECK_STR(r.text, "hi");
    CHECK_STR(r.finish_reason, "stop");
    llm_response_free(&r);
    /* null content (the budget spent on reasoning): an empty answer, not an error */
    CHECK(parse(LLM_OPENAI, "{\"choices\":[{\"message\":{\"content\":null},\"finish_reason\":\"length\"}]}", &r) == LLM_PARSE_OK);
    CHECK(r.ok && r.tokens_in == -1 && r.tokens_out == -1);
    CHECK_STR(r.text, "");
    CHECK_STR(r.finish_reason, "length");
    llm_response_free(&r);
    CHECK(parse(LLM_OPENAI, "{\"choices\":[]}", &r) == LLM_PARSE_BAD_SHAPE);
    CHECK(!r.ok && !r.text && strstr(r.error, "choices[0]"));
    CHECK(parse(LLM_OPENAI, "{\"error\":{\"message\":\"quota exceeded\"}}", &r) == LLM_PARSE_BAD_SHAPE);
    CHECK(strstr(r.error, "quota exceeded") != NULL);
    CHECK(parse(LLM_OPENAI, "{\"choices\":[{\"message\":{\"content\":\"hi", &r) == LLM_PARSE_BAD_JSON);
    CHECK(strstr(r.error, "invalid JSON") != NULL);
    CHECK(parse(LLM_OPENAI, "", &r) == LLM_PARSE_BAD_JSON);
    CHECK(parse(LLM_OPENAI, "[1]", &r) == LLM_PARSE_BAD_SHAPE);

    CHECK(parse(LLM_ANTHROPIC,
                "{\"content\":[{\"type\":\"thinking\",\"thinking\":\"hmm\"},{\"type\":\"text\",\"text\":\"a\"},"
                "{\"type\":\"tool_use\",\"text\":\"no\"},{\"type\":\"text\",\"text\":\"b\"}],\"stop_reason\":\"end_turn\","
                "\"usage\":{\"input_tokens\":5,\"output_tokens\":7}}",
                &r) == LLM_PARSE_OK);
    CHECK_STR(r.text, "ab");
    CHECK_STR(r.finish_reason, "end_turn");
    CHECK(r.tokens_in == 5 && r.tokens_out == 7);
    llm_response_free(&r);
    CHECK(parse(LLM_ANTHROPIC, "{\"type\":\"message\"}", &r) == LLM_PARSE_BAD_SHAPE);

    CHECK(parse(LLM_GEMINI,
                "{\"candidates\":[{\"content\":{\"parts\":[{\"text\":\"plan\",\"thought\":true},{\"text\":\"x\"},{\"text\":\"y\"}]},"
                "\"finishReason\":\"STOP\"}],\"usageMetadata\":{\"promptTokenCount\":3,\"candidatesTokenCount\":4,"
                "\"thoughtsTokenCount\":10}}",
                &r) == LLM_PARSE_OK);
    CHECK_STR(r.text, "xy");
    CHECK_STR(r.finish_reason, "STOP");
    CHECK(r.tokens_in == 3 && r.tokens_out == 14); /* thoughts are billed as output */
    llm_response_free(&r);
    CHECK(parse(LLM_GEMINI, "{\"candidates\":[{\"finishReason\":\"SAFETY\"}]}", &r) == LLM_PARSE_OK);
    CHECK_STR(r.text, "");
    CHECK_STR(r.finish_reason, "SAFETY");
    llm_response_free(&r);
    CHECK(parse(LLM_GEMINI, "{\"promptFeedback\":{\"blockReason\":\"OTHER\"}}", &r) == LLM_PARSE_BAD_SHAPE);
    CHECK(strstr(r.error, "blocked (OTHER)") != NULL);
}

static void test_error_detail(void) {
    char d[64];
    const char *b = "{\"type\":\"error\",\"error\":{\"type\":\"authentication_error\",\"message\":\"invalid x-api-key\"}}";
    llm_error_detail(b, strlen(b), d, sizeof d);
    CHECK_STR(d, "invalid x-api-key");
    b = "{\"error\":\"model not loaded\"}";
    llm_error_detail(b, strlen(b), d, sizeof d);
    CHECK_STR(d, "model not loaded");
    b = "{\"detail\":\"Not Found\"}";
    llm_error_detail(b, strlen(b), d, sizeof d);
    CHECK_STR(d, "Not Found");
    b = "<html>\r\n<body>Bad   Gateway</body>\n</html>";
    llm_error_detail(b, strlen(b), d, sizeof d);
    CHECK_STR(d, "<html> <body>Bad Gateway</body> </html>");
    char s[16];
    b = "{\"error\":{\"message\":\"a very long message that goes on\"}}";
    llm_error_detail(b, strlen(b), s, sizeof s);
    CHECK_STR(s, "a very long ...");
    llm_error_detail(NULL, 0, s, sizeof s);
    CHECK_STR(s, "");
}

static void test_retry_after(void) {
    time_t now = 784111777; /* Sun, 06 Nov 1994 08:49:37 GMT */
    CHECK_NEAR(llm_retry_after_s("5", now), 5, 0);
    CHECK_NEAR(llm_retry_after_s("  120", now), 120, 0);
    CHECK_NEAR(llm_retry_after_s("1.5", now), 1.5, 0);
    CHECK_NEAR(llm_retry_after_s("0", now), 0, 0);
    CHECK_NEAR(llm_retry_after_s("Sun, 06 Nov 1994 08:49:47 GMT", now), 10, 0);   /* IMF-fixdate */
    CHECK_NEAR(llm_retry_after_s("Sunday, 06-Nov-94 08:50:37 GMT", now), 60, 0);  /* RFC 850 */
    CHECK_NEAR(llm_retry_after_s("Sun Nov  6 08:49:40 1994", now), 3, 0);         /* asctime */
    CHECK_NEAR(llm_retry_after_s("Sun, 06 Nov 1994 08:00:00 GMT", now), 0, 0);    /* past */
    CHECK(llm_retry_after_s("soon", now) < 0);
    CHECK(llm_retry_after_s("5 s", now) < 0);
    CHECK(llm_retry_after_s("", now) < 0);
    CHECK(llm_retry_after_s(NULL, now) < 0);

    llm_opts o;
    llm_opts_default(&o);
    CHECK(o.timeout_s == 600 && o.max_retries == 6 && o.backoff_base_s == 2 && o.backoff_max_s == 120 && o.max_body == 8u << 20 && !o.cancel);
    CHECK_NEAR(llm_backoff_s(&o, 0, -1, 0.5), 1, 1e-12);   /* half of 2 */
    CHECK_NEAR(llm_backoff_s(&o, 3, -1, 0.5), 8, 1e-12);   /* half of 16 */
    CHECK_NEAR(llm_backoff_s(&o, 10, -1, 0.5), 60, 1e-12); /* half of the 120 s cap */
    CHECK_NEAR(llm_backoff_s(&o, 1000, -1, 0.999), 119.88, 1e-9);
    CHECK_NEAR(llm_backoff_s(&o, 3, -1, 0), 0, 0);
    CHECK_NEAR(llm_backoff_s(&o, 3, 7, 0.1), 7, 0);        /* Retry-After wins */
    CHECK_NEAR(llm_backoff_s(&o, 0, 3600, 0.1), 120, 0);   /* ... capped */

    char s[128] = "key sk-abcdefgh12345 here and sk-abcdefgh12345";
    llm_scrub_key(s, "sk-abcdefgh12345");
    CHECK_STR(s, "key [key] here and [key]");
    char t[] = "abc";
    llm_scrub_key(t, "abc"); /* too short to be a key: left alone */
    CHECK_STR(t, "abc");
    llm_scrub_key(t, NULL);
}

/* Parse a config from text; 0 or -1, with err filled. */
static int cfg(const char *text, int toml, llm_model **ms, int *n, kbv_err *err) {
    err->msg[0] = '\0';
    return llm_parse_models(text, toml, toml ? "m.toml" : "m.json", ms, n, err);
}

/* A one-model JSON config whose model has the fields in `extra` added, must fail with a
 * message that holds `want`. */
static void cfg_fails(const char *model_fields, const char *want) {
    char text[1024];
    llm_model *ms = NULL;
    int n = 0;
    kbv_err err;
    snprintf(text, sizeof text, "{\"models\": [{\"name\": \"a\", \"provider\": \"openai\", \"model\": \"x\"}, {%s}]}", model_fields);
    int rc = cfg(text, 0, &ms, &n, &err);
    CHECK(rc == -1 && ms == NULL && n == 0);
    if (!strstr(err.msg, want)) {
        check_failures++;
        fprintf(stderr, "config {%s}: error \"%s\" lacks \"%s\"\n", model_fields, err.msg, want);
    }
}

static void test_config(void) {
    llm_model *ms;
    int n;
    kbv_err err;
    const char *json = "{\"models\": ["
                       "{\"name\": \"gpt\", \"provider\": \"openai\", \"model\": \"gpt-5\", \"reasoning_effort\": \"high\","
                       " \"max_tokens\": 32000, \"price_in_per_mtok\": 1.25, \"price_out_per_mtok\": 10},"
                       "{\"name\": \"local\", \"provider\": \"openai\", \"base_url\": \"http://localhost:8000/v1/\", \"model\": \"q\","
                       " \"temperature\": 0.7, \"concurrency\": 16},"
                       "{\"name\": \"claude\", \"provider\": \"anthropic\", \"model\": \"claude-x\", \"thinking_budget\": 4096,"
                       " \"max_tokens\": 16000},"
                       "{\"name\": \"gem\", \"provider\": \"gemini\", \"model\": \"models/gemini-2.5-pro\", \"api_key_env\": \"MY_KEY\"}],"
                       " \"comment\": \"other top-level keys are ignored\"}";
    CHECK(cfg(json, 0, &ms, &n, &err) == 0);
    CHECK(n == 4);
    if (n == 4) {
        CHECK(ms[0].provider == LLM_OPENAI && ms[0].temperature < 0 && ms[0].max_tokens == 32000 && ms[0].concurrency == 4);
        CHECK_STR(ms[0].base_url, "https://api.openai.com/v1");
        CHECK_STR(ms[0].api_key_env, "OPENAI_API_KEY");
        CHECK_STR(ms[0].reasoning_effort, "high");
        CHECK_NEAR(llm_cost_usd(&ms[0], 1000000, 500000), 1.25 + 5, 1e-9);
        CHECK_NEAR(llm_cost_usd(&ms[0], -1, -1), 0, 0);
        CHECK_STR(ms[1].base_url, "http://localhost:8000/v1"); /* trailing '/' dropped */
        CHECK_STR(ms[1].api_key_env, "");                      /* a local server: no key */
        CHECK(ms[1].concurrency == 16 && ms[1].temperature == 0.7 && ms[1].max_tokens == 8192);
        CHECK(ms[2].provider == LLM_ANTHROPIC && ms[2].thinking_budget == 4096);
        CHECK_STR(ms[2].base_url, "https://api.anthropic.com");
        CHECK_STR(ms[2].api_key_env, "ANTHROPIC_API_KEY");
        CHECK_STR(ms[3].model_id, "gemini-2.5-pro");
        CHECK_STR(ms[3].api_key_env, "MY_KEY");
        CHECK_STR(ms[3].base_url, "https://generativelanguage.googleapis.com");
        CHECK_STR(llm_provider_name(ms[3].provider), "gemini");
    }
    free(ms);

    const char *toml = "# models for kbv generate\n"
                       "[[models]]\n"
                       "name = \"gpt\"   # trailing comment\n"
                       "provider = 'openai'\n"
                       "model = \"gpt-5\"\n"
                       "reasoning_effort = \"high\"\n"
                       "max_tokens = 32000\n"
                       "price_in_per_mtok = 1.25\n"
                       "\n"
                       "[[models]]\n"
                       "  name = \"local\"\n"
                       "  provider = \"openai\"\n"
                       "  base_url = \"http://localhost:8000/v1\"\n"
                       "  model = \"say \\\"q\\\" # not a comment\"\n"
                       "  temperature = 0\n"
                       "  api_key_env = \"\"\n";
    CHECK(cfg(toml, 1, &ms, &n, &err) == 0);
    if (err.msg[0]) fprintf(stderr, "toml: %s\n", err.msg);
    CHECK(n == 2);
    if (n == 2) {
        CHECK_STR(ms[0].name, "gpt");
        CHECK(ms[0].max_tokens == 32000 && ms[0].price_in_per_mtok == 1.25);
        CHECK_STR(ms[1].model_id, "say \"q\" # not a comment");
        CHECK(ms[1].temperature == 0);
        CHECK_STR(ms[1].api_key_env, "");
    }
    free(ms);

    /* TOML outside the subset, and its errors by line */
    CHECK(cfg("name = \"x\"\n", 1, &ms, &n, &err) == -1 && strstr(err.msg, "m.toml:1:"));
    CHECK(cfg("[[models]]\nname = \"x\"\n[server]\n", 1, &ms, &n, &err) == -1 && strstr(err.msg, "m.toml:3:"));
    CHECK(cfg("[[models]]\nname = \"x\nprovider = \"openai\"\n", 1, &ms, &n, &err) == -1 && strstr(err.msg, "m.toml:2:"));
    CHECK(cfg("[[models]]\nname = \"x\"\nname = \"y\"\n", 1, &ms, &n, &err) == -1 && strstr(err.msg, "m.toml:3: name is set twice"));
    CHECK(cfg("[[models]]\nmax_tokens = 12abc\n", 1, &ms, &n, &err) == -1 && strstr(err.msg, "m.toml:2:"));
    CHECK(cfg("[[models]]\nname = \"x\"\nprovider = \"claude\"\nmodel = \"m\"\n", 1, &ms, &n, &err) == -1 &&
          strstr(err.msg, "m.toml: models[0] (\"x\"): provider must be"));
    CHECK(cfg("# nothing\n", 1, &ms, &n, &err) == -1 && strstr(err.msg, "no models"));

    /* JSON errors */
    CHECK(cfg("{\"models\": [", 0, &ms, &n, &err) == -1 && strstr(err.msg, "m.json:1:"));
    CHECK(cfg("{\"models\": []}", 0, &ms, &n, &err) == -1 && strstr(err.msg, "no models"));
    CHECK(cfg("[]", 0, &ms, &n, &err) == -1 && strstr(err.msg, "no models"));
    CHECK(cfg("{\"models\": [{\"name\": \"a\", \"name\": \"b\"}]}", 0, &ms, &n, &err) == -1 && strstr(err.msg, "duplicate"));
    cfg_fails("\"provider\": \"openai\", \"model\": \"x\"", "m.json: models[1]: name is missing");
    cfg_fails("\"name\": \"b\", \"model\": \"x\"", "models[1] (\"b\"): provider is missing");
    cfg_fails("\"name\": \"b\", \"provider\": \"openai\"", "models[1] (\"b\"): model is missing");
    cfg_fails("\"name\": \"a\", \"provider\": \"openai\", \"model\": \"x\"", "the name \"a\" is also models[0]'s");
    cfg_fails("\"name\": \"../up\", \"provider\": \"openai\", \"model\": \"x\"", "name must not start with '.'");
    cfg_fails("\"name\": \"a/b\", \"provider\": \"openai\", \"model\": \"x\"", "name may hold only");
    cfg_fails("\"name\": 5, \"provider\": \"openai\", \"model\": \"x\"", "name must be a string");
    cfg_fails("\"name\": \"b\", \"provider\": \"openai\", \"model\": \"x\", \"temprature\": 1", "unknown field \"temprature\"");
    cfg_fails("\"name\": \"b\", \"provider\": \"openai\", \"model\": \"x\", \"api_key\": \"sk-secret\"", "api_key_env");
    cfg_fails("\"name\": \"b\", \"provider\": \"openai\", \"model\": \"x\", \"temperature\": 3", "temperature must be from 0 to 2 (is 3)");
    cfg_fails("\"name\": \"b\", \"provider\": \"anthropic\", \"model\": \"x\", \"temperature\": 1.5", "temperature must be from 0 to 1");
    cfg_fails("\"name\": \"b\", \"provider\": \"openai\", \"model\": \"x\", \"temperature\": \"hot\"", "temperature must be a number");
    cfg_fails("\"name\": \"b\", \"provider\": \"openai\", \"model\": \"x\", \"max_tokens\": 0", "max_tokens must be from 1");
    cfg_fails("\"name\": \"b\", \"provider\": \"openai\", \"model\": \"x\", \"max_tokens\": 10.5", "max_tokens must be an integer");
    cfg_fails("\"name\": \"b\", \"provider\": \"openai\", \"model\": \"x\", \"concurrency\": 0", "concurrency must be from 1 to 1024");
    cfg_fails("\"name\": \"b\", \"provider\": \"openai\", \"model\": \"x\", \"price_in_per_mtok\": -1", "price_in_per_mtok must be from 0");
    cfg_fails("\"name\": \"b\", \"provider\": \"openai\", \"model\": \"x\", \"base_url\": \"ftp://h\"", "base_url must start with http");
    cfg_fails("\"name\": \"b\", \"provider\": \"openai\", \"model\": \"x\", \"api_key_env\": \"MY KEY\"", "api_key_env must be a variable");
    cfg_fails("\"name\": \"b\", \"provider\": \"openai\", \"model\": \"x\", \"thinking_budget\": 2000", "thinking_budget is for Anthropic");
    cfg_fails("\"name\": \"b\", \"provider\": \"gemini\", \"model\": \"x\", \"reasoning_effort\": \"low\"", "reasoning_effort is for OpenAI");
    cfg_fails("\"name\": \"b\", \"provider\": \"openai\", \"model\": \"x\", \"reasoning_effort\": \"HIGH\"", "reasoning_effort must be a lowercase");
    cfg_fails("\"name\": \"b\", \"provider\": \"anthropic\", \"model\": \"x\", \"thinking_budget\": 100", "at least 1024 and below max_tokens (8192)");
    cfg_fails("\"name\": \"b\", \"provider\": \"anthropic\", \"model\": \"x\", \"thinking_budget\": 9000", "below max_tokens");
    cfg_fails("\"name\": \"b\", \"provider\": \"anthropic\", \"model\": \"x\", \"thinking_budget\": 2000, \"temperature\": 0.2",
              "takes no temperature but 1");
    cfg_fails("\"name\": \"b\", \"provider\": \"gemini\", \"model\": \"a/b\"", "model may hold only");
    cfg_fails("\"name\": \"b\", \"provider\": \"openai\", \"model\": \"x\\ny\"", "model holds a control character");
    cfg_fails("\"name\": \"b\", \"provider\": \"openai\", \"model\": \"\"", "model is empty");
    char longname[200];
    snprintf(longname, sizeof longname, "\"name\": \"%070d\", \"provider\": \"openai\", \"model\": \"x\"", 7);
    cfg_fails(longname, "name is longer than 63 characters");

    /* From a file: the extension picks the format; a missing file names itself. */
    char path[] = "/tmp/kbv-test-llm-XXXXXX.toml";
    int fd = mkstemps(path, 5);
    CHECK(fd >= 0 && write(fd, toml, strlen(toml)) == (ssize_t)strlen(toml));
    close(fd);
    CHECK(llm_load_models(path, &ms, &n, &err) == 0 && n == 2);
    free(ms);
    unlink(path);
    CHECK(llm_load_models("/nonexistent/models.json", &ms, &n, &err) == -1 && strstr(err.msg, "/nonexistent/models.json"));
}

/* --- against the stub server ------------------------------------------------------------ */

static pid_t stub_pid = -1;
static int stub_port;

static int stub_start(void) {
    if (access("/usr/bin/python3", X_OK) != 0 || access(STUB, R_OK) != 0) return -1;
    int fds[2];
    if (pipe(fds) < 0) return -1;
    setenv("KBV_STUB_KEY", STUB_KEY, 1);
    stub_pid = fork();
    if (stub_pid == 0) {
        dup2(fds[1], 1);
        close(fds[0]), close(fds[1]);
        execl("/usr/bin/python3", "python3", STUB, "--lifetime", "120", (char *)NULL);
        _exit(127);
    }
    close(fds[1]);
    FILE *f = fdopen(fds[0], "r");
    char line[64] = "";
    int ok = f && fgets(line, sizeof line, f) && sscanf(line, "PORT %d", &stub_port) == 1;
    if (f) fclose(f);
    return ok ? 0 : -1;
}

static void stub_stop(void) {
    if (stub_pid <= 0) return;
    kill(stub_pid, SIGTERM);
    waitpid(stub_pid, NULL, 0);
}

static size_t collect(char *d, size_t s, size_t n, void *ud) { return kbv_buf_append(ud, d, s * n) < 0 ? 0 : s * n; }

/* How many requests the stub got for a model id (from GET /stats); -1 on failure. */
static long long stub_count(const char *id) {
    char url[128];
    snprintf(url, sizeof url, "http://127.0.0.1:%d/stats", stub_port);
    kbv_buf b;
    kbv_buf_init(&b);
    CURL *h = curl_easy_init();
    curl_easy_setopt(h, CURLOPT_URL, url);
    curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, collect);
    curl_easy_setopt(h, CURLOPT_WRITEDATA, &b);
    CURLcode rc = curl_easy_perform(h);
    curl_easy_cleanup(h);
    json_t *o = rc == CURLE_OK && b.data ? json_loads(b.data, 0, NULL) : NULL;
    kbv_buf_free(&b);
    if (!o) return -1;
    json_t *v = json_object_get(json_object_get(o, "counts"), id);
    long long c = json_is_integer(v) ? (long long)json_integer_value(v) : 0;
    json_decref(o);
    return c;
}

static llm_model stub_model(llm_provider p, const char *id) {
    llm_model m = model_of(p, id);
    snprintf(m.base_url, sizeof m.base_url, p == LLM_OPENAI ? "http://127.0.0.1:%d/v1" : "http://127.0.0.1:%d", stub_port);
    snprintf(m.api_key_env, sizeof m.api_key_env, "KBV_STUB_KEY");
    return m;
}

static llm_opts fast_opts(void) {
    llm_opts o;
    llm_opts_default(&o);
    o.timeout_s = 10, o.max_retries = 3, o.backoff_base_s = 0.01, o.backoff_max_s = 3;
    return o;
}

/* One call; the response is left in *r (caller frees). */
static void call(llm_provider p, const char *id, const llm_opts *o, llm_response *r) {
    llm_model m = stub_model(p, id);
    CHECK(llm_complete(&m, "Write ModelNew for relu.", o, r) == 0);
    if (r->error[0] && strstr(r->error, STUB_KEY)) {
        check_failures++;
        fprintf(stderr, "the key leaked into an error: %s\n", r->error);
    }
    if (r->raw && strstr(r->raw, STUB_KEY)) check_failures++, fprintf(stderr, "the key leaked into raw\n");
}

static void test_stub_ok(void) {
    llm_opts o = fast_opts();
    llm_provider ps[] = {LLM_OPENAI, LLM_ANTHROPIC, LLM_GEMINI};
    for (int i = 0; i < 3; i++) {
        llm_response r;
        call(ps[i], "ok", &o, &r);
        CHECK(r.ok && r.http_status == 200 && r.attempts == 1 && !r.permanent && r.error[0] == '\0');
        CHECK(r.text && strstr(r.text, "```python") && strstr(r.text, "class ModelNew(nn.Module)") && strstr(r.text, "torch.relu(x)"));
        CHECK(r.tokens_in > 0 && r.tokens_out > 0 && r.finish_reason[0] && r.latency_s > 0 && r.raw);
        if (!r.ok) fprintf(stderr, "%s ok: %s\n", llm_provider_name(ps[i]), r.error);
        llm_response_free(&r);
    }
    CHECK(stub_count("ok") == 3);
    /* Thinking: Anthropic's thinking blocks and Gemini's thought parts are not the answer. */
    llm_model m = stub_model(LLM_GEMINI, "ok-think");
    m.thinking_budget = 1024;
    llm_response r;
    CHECK(llm_complete(&m, "p", &o, &r) == 0 && r.ok && r.text && !strstr(r.text, "Thinking about it"));
    llm_response_free(&r);
    m = stub_model(LLM_ANTHROPIC, "ok-think");
    m.thinking_budget = 1024, m.max_tokens = 2048;
    CHECK(llm_complete(&m, "p", &o, &r) == 0 && r.ok && r.text && !strstr(r.text, "Let me think") && strstr(r.text, "ModelNew"));
    llm_response_free(&r);
    call(LLM_OPENAI, "nocode", &o, &r); /* an answer without code is still an answer */
    CHECK(r.ok && r.text && !strstr(r.text, "```"));
    llm_response_free(&r);
}

static void test_stub_auth(void) {
    llm_opts o = fast_opts();
    llm_response r;
    llm_model m = stub_model(LLM_ANTHROPIC, "ok-nokey");
    snprintf(m.api_key_env, sizeof m.api_key_env, "KBV_TEST_UNSET_VARIABLE");
    unsetenv("KBV_TEST_UNSET_VARIABLE");
    CHECK(llm_complete(&m, "p", &o, &r) == 0);
    CHECK(!r.ok && r.permanent && r.attempts == 0 && strstr(r.error, "KBV_TEST_UNSET_VARIABLE") && strstr(r.error, "not set"));
    llm_response_free(&r);
    CHECK(stub_count("ok-nokey") == 0);
    setenv("KBV_TEST_NL_KEY", "line-one-key\nX-Other: 1", 1); /* would add a header: refused */
    snprintf(m.api_key_env, sizeof m.api_key_env, "KBV_TEST_NL_KEY");
    CHECK(llm_complete(&m, "p", &o, &r) == 0);
    CHECK(!r.ok && r.permanent && r.attempts == 0 && strstr(r.error, "line break") && !strstr(r.error, "line-one-key"));
    llm_response_free(&r);

    setenv("KBV_TEST_WRONG_KEY", "wrong-key-abcdefgh", 1); /* the stub refuses it: 401, no retry */
    llm_provider ps[] = {LLM_OPENAI, LLM_ANTHROPIC, LLM_GEMINI};
    for (int i = 0; i < 3; i++) {
        m = stub_model(ps[i], "ok-wrongkey");
        snprintf(m.api_key_env, sizeof m.api_key_env, "KBV_TEST_WRONG_KEY");
        CHECK(llm_complete(&m, "p", &o, &r) == 0);
        CHECK(!r.ok && r.permanent && r.attempts == 1 && r.http_status == 401);
        CHECK(strstr(r.error, "HTTP 401 from ") && strstr(r.error, "invalid or missing API key") && !strstr(r.error, "wrong-key-abcdefgh"));
        llm_response_free(&r);
    }
    call(LLM_GEMINI, "auth", &o, &r);
    CHECK(!r.ok && r.permanent && r.attempts == 1 && strstr(r.error, "HTTP 401 from gemini: invalid x-api-key"));
    llm_response_free(&r);
}

static void test_stub_retries(void) {
    llm_opts o = fast_opts();
    llm_response r;
    double t0 = kbv_now();
    call(LLM_OPENAI, "429-1", &o, &r); /* Retry-After: 1 is honoured (backoff alone would be ~0.01 s) */
    double dt = kbv_now() - t0;
    CHECK(r.ok && r.attempts == 2 && r.http_status == 200 && dt >= 0.95 && dt < 3);
    llm_response_free(&r);
    CHECK(stub_count("429-1") == 2);
    o.backoff_max_s = 0.2; /* ... and capped by backoff_max_s */
    t0 = kbv_now();
    call(LLM_ANTHROPIC, "429date-2", &o, &r);
    dt = kbv_now() - t0;
    CHECK(r.ok && r.attempts == 3 && dt < 1.5);
    llm_response_free(&r);
    o.backoff_max_s = 3;
    call(LLM_GEMINI, "500-2", &o, &r);
    CHECK(r.ok && r.attempts == 3);
    llm_response_free(&r);
    CHECK(stub_count("500-2") == 3);
    o.max_retries = 2;
    call(LLM_OPENAI, "500", &o, &r); /* always 500: gives up, a retry later may help */
    CHECK(!r.ok && !r.permanent && r.attempts == 3 && r.http_status == 500 && r.raw);
    CHECK(strstr(r.error, "HTTP 500 from openai: internal error (stub)") && strstr(r.error, "gave up after 3 attempts"));
    llm_response_free(&r);
    CHECK(stub_count("500") == 3);
    call(LLM_ANTHROPIC, "truncated-1", &o, &r);
    CHECK(r.ok && r.attempts == 2 && strstr(r.text, "ModelNew"));
    llm_response_free(&r);
    call(LLM_OPENAI, "truncated", &o, &r);
    CHECK(!r.ok && !r.permanent && r.attempts == 3 && strstr(r.error, "invalid JSON") && r.raw);
    llm_response_free(&r);
}

static void test_stub_limits(void) {
    llm_opts o = fast_opts();
    llm_response r;
    call(LLM_GEMINI, "huge", &o, &r); /* > 8 MiB: an error, no retry */
    CHECK(!r.ok && r.permanent && r.attempts == 1 && strstr(r.error, "larger than 8388608 bytes"));
    CHECK(r.raw == NULL); /* refused on its Content-Length: nothing read */
    llm_response_free(&r);
    CHECK(stub_count("huge") == 1);
    call(LLM_OPENAI, "hugestream", &o, &r); /* no Content-Length: cut at max_body */
    CHECK(!r.ok && r.permanent && r.attempts == 1 && strstr(r.error, "larger than 8388608 bytes"));
    CHECK(r.raw && strlen(r.raw) <= o.max_body && strncmp(r.raw, "{\"choices\"", 10) == 0);
    llm_response_free(&r);
    CHECK(stub_count("hugestream") == 1);

    o.timeout_s = 0.5, o.max_retries = 1;
    double t0 = kbv_now();
    call(LLM_OPENAI, "slow-3", &o, &r);
    double dt = kbv_now() - t0;
    CHECK(!r.ok && !r.permanent && r.attempts == 2 && r.http_status == 0 && strstr(r.error, "request timeout") && dt < 2.5);
    llm_response_free(&r);
    o.timeout_s = 10;
    call(LLM_ANTHROPIC, "slow-0.3", &o, &r);
    CHECK(r.ok && r.attempts == 1 && r.latency_s >= 0.3);
    llm_response_free(&r);

    /* Nothing listens: connection refused, retried, then one line naming the URL. */
    llm_model m = stub_model(LLM_OPENAI, "ok");
    snprintf(m.base_url, sizeof m.base_url, "http://127.0.0.1:1/v1");
    CHECK(llm_complete(&m, "p", &o, &r) == 0);
    CHECK(!r.ok && !r.permanent && r.attempts == 2 && r.http_status == 0 && strstr(r.error, "http://127.0.0.1:1/v1/chat/completions"));
    llm_response_free(&r);
    /* Not valid UTF-8: refused before any request. */
    m = stub_model(LLM_OPENAI, "ok-utf8");
    CHECK(llm_complete(&m, "bad \xc3", &o, &r) == 0 && !r.ok && r.permanent && r.attempts == 0 && strstr(r.error, "UTF-8"));
    llm_response_free(&r);
}

typedef struct thread_arg {
    llm_provider p;
    const char *id;
    volatile int *cancel;
    llm_response r;
} thread_arg;

static void *run_call(void *ud) {
    thread_arg *a = ud;
    llm_opts o = fast_opts();
    o.cancel = a->cancel;
    llm_model m = stub_model(a->p, a->id);
    if (llm_complete(&m, "Write ModelNew for relu.", &o, &a->r) < 0) a->r.ok = -1;
    return NULL;
}

static void test_stub_threads(void) {
    enum { N = 8 };
    thread_arg args[N];
    pthread_t th[N];
    for (int i = 0; i < N; i++) {
        args[i] = (thread_arg){.p = (llm_provider)(i % 3), .id = i % 2 ? "ok-conc" : "500-3-conc"};
        CHECK(pthread_create(&th[i], NULL, run_call, &args[i]) == 0);
    }
    for (int i = 0; i < N; i++) {
        pthread_join(th[i], NULL);
        CHECK(args[i].r.ok == 1 && strstr(args[i].r.text, "ModelNew"));
        llm_response_free(&args[i].r);
    }
    CHECK(stub_count("ok-conc") == N / 2);
    CHECK(stub_count("500-3-conc") == N / 2 + 3); /* the first three 500s, shared by the four */

    /* Cancellation: a call waiting on a slow answer stops soon after the flag is set. */
    volatile int cancel = 0;
    thread_arg a = {.p = LLM_OPENAI, .id = "slow-5", .cancel = &cancel};
    pthread_t t;
    double t0 = kbv_now();
    CHECK(pthread_create(&t, NULL, run_call, &a) == 0);
    struct timespec ts = {0, 300 * 1000000L};
    nanosleep(&ts, NULL);
    cancel = 1;
    pthread_join(t, NULL);
    CHECK(!a.r.ok && a.r.cancelled && strstr(a.r.error, "cancelled") && kbv_now() - t0 < 2);
    llm_response_free(&a.r);
    /* ... and so does one waiting out a Retry-After between attempts. */
    cancel = 0;
    a = (thread_arg){.p = LLM_GEMINI, .id = "429-9-cancel", .cancel = &cancel};
    t0 = kbv_now();
    CHECK(pthread_create(&t, NULL, run_call, &a) == 0);
    nanosleep(&ts, NULL);
    cancel = 1;
    pthread_join(t, NULL);
    CHECK(!a.r.ok && a.r.cancelled && !a.r.permanent && a.r.attempts == 1 && a.r.http_status == 429 && kbv_now() - t0 < 0.9);
    llm_response_free(&a.r);
}

int main(void) {
    kbv_err err;
    /* The stub is on loopback: a proxy from the environment must not carry the requests. */
    setenv("no_proxy", "127.0.0.1,localhost", 1);
    setenv("NO_PROXY", "127.0.0.1,localhost", 1);
    CHECK(llm_global_init(&err) == 0);
    CHECK(llm_global_init(&err) == 0); /* twice is harmless */
    test_requests();
    test_responses();
    test_error_detail();
    test_retry_after();
    test_config();
    if (stub_start() == 0) {
        test_stub_ok();
        test_stub_auth();
        test_stub_retries();
        test_stub_limits();
        test_stub_threads();
    } else {
        printf("test_llm: SKIP the client against the stub (needs /usr/bin/python3 and " STUB ", run from the repository root)\n");
    }
    stub_stop();
    curl_global_cleanup();
    CHECK_DONE("test_llm");
}
