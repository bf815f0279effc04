#!/usr/bin/python3
"""stub_server.py -- a loopback LLM endpoint for kbv's generation tests (no internet needed).

Serves the three wire formats kbv speaks (src/llm.c):
  POST <prefix>/chat/completions                      OpenAI-compatible (Authorization: Bearer KEY)
  POST /v1/messages                                   Anthropic (x-api-key: KEY, anthropic-version)
  POST /v1beta/models/<model>:generateContent         Gemini (x-goog-api-key: KEY)
  GET  /stats                                         {"total": n, "counts": {model: n}, "last": {model: request body}}

The answer is a canned completion with a fenced ```python block defining ModelNew: an honest
candidate for examples/problems/relu.py (torch.relu).

The behaviour is chosen by the requested model id, "<mode>[-<n>][-<anything>]" (the tail lets
each test use its own counter, e.g. "429-2-resume"); requests are counted per model id:
  ok (or any other id)  the canned answer
  slow-N                sleep N seconds (a float), then the answer
  429-K                 the first K requests get 429 with Retry-After: 1, then the answer
  429date-K             the same with Retry-After as an HTTP date 1 s ahead
  500-K                 the first K requests get 500, then the answer
  truncated[-K]         a 200 whose JSON body is cut short (every request, or the first K)
  nocode                an answer with no code block
  huge                  a 200 with a body larger than 8 MiB (with its Content-Length)
  hugestream            the same streamed without a Content-Length (the connection closes)
  auth                  401 with an error message
  budget                the answer, reporting 1,000,000 input and output tokens (spending caps)
Without K, a fault mode faults every request.

Auth: when the environment variable KBV_STUB_KEY is set and not empty, each request must carry
it in its provider's header (401 otherwise); when unset, no key is checked.

Usage: /usr/bin/python3 tests/gen/stub_server.py [--port-file F] [--lifetime S] [--models M [--mode ID]...]
Prints "PORT <n>" as its first line (and writes n to F); exits after S seconds (default 900)
so a crashed test leaves nothing behind. --models writes a kbv models config pointing at the
stub (stub-openai, stub-anthropic, stub-gemini, and stub-ID for each --mode ID) before the
port is printed. Standard library only.
"""

import argparse
import email.utils
import json
import os
import re
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

CODE = '''import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.relu(x)
'''

ANSWER = ("Here is an optimized version. ReLU is elementwise, so a single fused call is already "
          "memory-bound; the module below keeps it to one pass.\n\n```python\n" + CODE + "```\n")
NOCODE = "I am sorry, but I cannot write a faster kernel for this problem than the reference."

LOCK = threading.Lock()
COUNTS = {}
LAST = {}
KEY = os.environ.get("KBV_STUB_KEY", "")


def mode_of(model):
    """(mode, n) from a model id such as "429-2-tag" or "slow-0.5"."""
    parts = model.split("-")
    mode = parts[0]
    n = None
    if len(parts) > 1 and re.fullmatch(r"[0-9]+(\.[0-9]+)?", parts[1]):
        n = float(parts[1])
    return mode, n


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "kbv-stub/1"

    def log_message(self, fmt, *args):  # quiet: tests read stdout for the port only
        pass

    def send(self, status, body, headers=None):
        data = body if isinstance(body, bytes) else json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.end_headers()
        try:
            self.wfile.write(data)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client gave up (a timeout, or a body over its cap)

    def error(self, provider, status, message, headers=None):
        if provider == "anthropic":
            body = {"type": "error", "error": {"type": "error", "message": message}}
        elif provider == "gemini":
            body = {"error": {"code": status, "message": message, "status": "ERROR"}}
        else:
            body = {"error": {"message": message, "type": "error", "code": status}}
        self.send(status, body, headers)

    def do_GET(self):
        if self.path != "/stats":
            return self.send(404, {"error": "not found"})
        with LOCK:
            self.send(200, {"total": sum(COUNTS.values()), "counts": dict(COUNTS), "last": dict(LAST)})

    def route(self):
        """(provider, model id from the path or None), or (None, None)."""
        path = self.path.split("?")[0]
        if path.endswith("/chat/completions"):
            return "openai", None
        if path == "/v1/messages":
            return "anthropic", None
        m = re.fullmatch(r"/v1beta/models/([^/:]+):generateContent", path)
        if m:
            return "gemini", m.group(1)
        return None, None

    def authorized(self, provider):
        if not KEY:
            return True
        if provider == "openai":
            return self.headers.get("Authorization") == "Bearer " + KEY
        if provider == "anthropic":
            return self.headers.get("x-api-key") == KEY and self.headers.get("anthropic-version") == "2023-06-01"
        return self.headers.get("x-goog-api-key") == KEY

    def do_POST(self):
        provider, model = self.route()
        n = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(n)
        if provider is None:
            return self.send(404, {"error": {"message": "no such endpoint: " + self.path}})
        if not self.authorized(provider):
            return self.error(provider, 401, "invalid or missing API key (stub: expected the value of KBV_STUB_KEY)")
        try:
            req = json.loads(raw)
        except ValueError:
            return self.error(provider, 400, "the request body is not JSON")
        model = model or req.get("model")
        problem = check_request(provider, req)
        if problem:
            return self.error(provider, 400, problem)
        with LOCK:
            COUNTS[model] = COUNTS.get(model, 0) + 1
            count = COUNTS[model]
            LAST[model] = req
        self.answer(provider, model, count, req)

    def answer(self, provider, model, count, req):
        mode, n = mode_of(model)
        faulting = n is None or count <= n
        if mode == "slow":
            time.sleep(n or 1)
        elif mode == "429" and faulting:
            return self.error(provider, 429, "rate limited (stub)", {"Retry-After": "1"})
        elif mode == "429date" and faulting:
            when = email.utils.formatdate(time.time() + 1.0, usegmt=True)
            return self.error(provider, 429, "rate limited (stub)", {"Retry-After": when})
        elif mode == "500" and faulting:
            return self.error(provider, 500, "internal error (stub)")
        elif mode == "auth":
            return self.error(provider, 401, "invalid x-api-key (stub: this model id always refuses)")
        elif mode == "truncated" and faulting:
            body = json.dumps(completion(provider, model, ANSWER, 10, 10)).encode()
            return self.send(200, body[: len(body) // 2])
        elif mode == "huge":
            return self.send(200, completion(provider, model, "x" * (9 << 20), 10, 10))
        elif mode == "hugestream":  # no Content-Length: the client must stop reading itself
            self.close_connection = True
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Connection", "close")
            self.end_headers()
            try:
                self.wfile.write(b'{"choices": [{"message": {"content": "')
                for _ in range(9 * 16):
                    self.wfile.write(b"x" * (64 << 10))
            except (BrokenPipeError, ConnectionResetError):
                pass
            return None
        text = NOCODE if mode == "nocode" else ANSWER
        tokens = 1000000 if mode == "budget" else None
        self.send(200, completion(provider, model, text, tokens or len(json.dumps(req)) // 4, tokens or len(text) // 4,
                                  thinking=bool(req.get("thinking") or req.get("generationConfig", {}).get("thinkingConfig"))))


def check_request(provider, req):
    """What is wrong with a request body, or None (the stub catches a client's mistakes)."""
    if provider == "gemini":
        contents = req.get("contents")
        if not (isinstance(contents, list) and contents and contents[0].get("parts")):
            return "contents[0].parts is missing"
        if not isinstance(req.get("generationConfig", {}).get("maxOutputTokens"), int):
            return "generationConfig.maxOutputTokens is missing"
        return None
    if not isinstance(req.get("model"), str):
        return "model is missing"
    msgs = req.get("messages")
    if not (isinstance(msgs, list) and msgs and msgs[0].get("role") == "user" and isinstance(msgs[0].get("content"), str)):
        return "messages[0] must be a user message with text content"
    if provider == "anthropic" and not isinstance(req.get("max_tokens"), int):
        return "max_tokens is required"
    if provider == "openai" and "max_tokens" in req and "max_completion_tokens" in req:
        return "max_tokens and max_completion_tokens are both set"
    return None


def completion(provider, model, text, tin, tout, thinking=False):
    """A successful response body in the provider's format."""
    if provider == "anthropic":
        content = [{"type": "thinking", "thinking": "Let me think.", "signature": "x"}] if thinking else []
        content.append({"type": "text", "text": text})
        return {"id": "msg_stub", "type": "message", "role": "assistant", "model": model, "content": content,
                "stop_reason": "end_turn", "usage": {"input_tokens": tin, "output_tokens": tout}}
    if provider == "gemini":
        parts = [{"text": "Thinking about it.", "thought": True}] if thinking else []
        parts.append({"text": text})
        return {"candidates": [{"content": {"role": "model", "parts": parts}, "finishReason": "STOP", "index": 0}],
                "usageMetadata": {"promptTokenCount": tin, "candidatesTokenCount": tout, "totalTokenCount": tin + tout}}
    return {"id": "chatcmpl-stub", "object": "chat.completion", "model": model,
            "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": tin, "completion_tokens": tout, "total_tokens": tin + tout}}


def write_models(path, port, modes):
    """A models config for kbv that points at this stub (the key, if any, from KBV_STUB_KEY)."""
    base = "http://127.0.0.1:%d" % port
    key = "KBV_STUB_KEY" if KEY else ""
    models = [{"name": "stub-openai", "provider": "openai", "base_url": base + "/v1", "model": "ok"},
              {"name": "stub-anthropic", "provider": "anthropic", "base_url": base, "model": "ok"},
              {"name": "stub-gemini", "provider": "gemini", "base_url": base, "model": "ok"}]
    models += [{"name": "stub-" + m, "provider": "openai", "base_url": base + "/v1", "model": m} for m in modes]
    for m in models:
        m.update({"api_key_env": key, "temperature": 0, "max_tokens": 4096, "concurrency": 2,
                  "price_in_per_mtok": 1.0, "price_out_per_mtok": 2.0})
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        json.dump({"models": models}, f, indent=2)
        f.write("\n")
    os.replace(tmp, path)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--port-file", help="write the port here too")
    ap.add_argument("--lifetime", type=float, default=900, help="exit after this many seconds")
    ap.add_argument("--models", metavar="FILE", help="write a kbv models config (JSON) for this port to FILE: "
                    "one model per provider, named stub-<provider>, and one per --mode")
    ap.add_argument("--mode", action="append", default=[], metavar="ID",
                    help="with --models: also a model (OpenAI-compatible) whose id is ID, named stub-ID")
    args = ap.parse_args()
    srv = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    srv.daemon_threads = True
    port = srv.server_address[1]
    if args.models:
        write_models(args.models, port, args.mode)
    if args.port_file:
        tmp = args.port_file + ".tmp"
        with open(tmp, "w") as f:
            f.write("%d\n" % port)
        os.replace(tmp, args.port_file)  # a reader never sees half a number
    print("PORT %d" % port, flush=True)
    threading.Timer(args.lifetime, lambda: os._exit(0)).start()
    try:
        srv.serve_forever()
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    sys.exit(main())
