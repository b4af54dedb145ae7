"""A local OpenAI-compatible stand-in server (127.0.0.1, a random port) that answers from the
real-model cassettes of ``tests/data/cassettes``: a chat completion whose system prompt and
messages match a recorded call gets that call's reply, the structured-output canary gets the
sentinel a schema-enforcing server returns, ``/v1/models`` lists the recorded model. A call it
has no reply for gets HTTP 500 with the reason; a repair of a recorded call gets the call's
recorded (final) reply again. No model, no network beyond the loopback.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

CASSETTES = Path(__file__).resolve().parents[1] / "data" / "cassettes"
CANARY_VALUE = "crux-lab-canary-42"


# What the backend appends to a user message that has a reply schema (the cassettes hold the
# request's own text).
CONTRACT = "\n\nAnswer with exactly one JSON object and nothing else"


def _key(messages: list[dict[str, Any]]) -> str:
    return json.dumps([(m.get("role"), str(m.get("content")).split(CONTRACT, 1)[0]) for m in messages], ensure_ascii=False)


def recorded(engine: str) -> tuple[str, dict[str, list[str]]]:
    """The model and the replies (by request, in the order they were recorded) of one engine's
    cassette."""
    replies: dict[str, list[str]] = {}
    model = ""
    for line in (CASSETTES / f"{engine}.jsonl").read_text(encoding="utf-8").splitlines():
        rec = json.loads(line)
        request, response = rec["request"], rec.get("response") or {}
        if "text" not in response:
            continue
        model = rec.get("model") or model
        messages = [{"role": "system", "content": request["system"]}, *request["messages"]]
        replies.setdefault(_key(messages), []).append(response["text"])
    return model, replies


@contextmanager
def standin_server(engine: str) -> Iterator[str]:
    """Serve ``engine``'s cassette; yields the base URL (``http://127.0.0.1:PORT/v1``)."""
    model, replies = recorded(engine)
    missed: list[str] = []
    lock = threading.Lock()

    def reply(messages: list[dict[str, Any]]) -> str | None:
        """The next recorded reply to this request (the last one again once they run out). A
        repair (the request, the reply and what was wrong with it) gets the request's reply:
        a cassette holds each call's final answer."""
        with lock:
            queue = replies.get(_key(messages)) or replies.get(_key(messages[:2]))
            if not queue:
                return None
            return queue.pop(0) if len(queue) > 1 else queue[0]

    class Handler(BaseHTTPRequestHandler):
        def _send(self, code: int, body: dict[str, Any]) -> None:
            data = json.dumps(body).encode()
            self.send_response(code)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self) -> None:  # noqa: N802 - http.server's name
            if self.path.rstrip("/").endswith("/models"):
                self._send(200, {"object": "list", "data": [{"id": model, "object": "model"}]})
            elif self.path.startswith(("/health", "/props")):
                self._send(200, {"status": "ok"})
            else:
                self._send(404, {"error": {"message": f"no route {self.path}"}})

        def do_POST(self) -> None:  # noqa: N802
            body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", "0") or 0)) or b"{}")
            schema = (body.get("response_format") or {}).get("json_schema") or {}
            if schema.get("name") == "canary":
                text: str | None = json.dumps({"canary": CANARY_VALUE})
            else:
                text = reply(body.get("messages", []))
            if text is None:
                missed.append(str(body.get("messages", []))[:200])
                self._send(500, {"error": {"message": "the stand-in has no recorded reply for this request"}})
                return
            self._send(200, {
                "id": "chatcmpl-standin", "object": "chat.completion", "created": 0, "model": body.get("model", model),
                "choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": text}}],
                "usage": {"prompt_tokens": 10, "completion_tokens": 10, "total_tokens": 20},
            })

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.missed = missed  # type: ignore[attr-defined]
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    finally:
        server.shutdown()
        server.server_close()
