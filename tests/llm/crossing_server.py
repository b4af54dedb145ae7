"""A stand-in llama.cpp server with the fault that crossed replies between debates.

What ``benchmarks/cross_replies.py`` found on a real llama.cpp server (2026-11-28, raw HTTP, no
crux_lab code): when a second request arrives for a slot that is still working on a first one,
the first request is answered about the second one's prompt; the second then gets its own
answer. This server does exactly that, on purpose, and otherwise answers like llama.cpp: ``/props`` (``total_slots``, ``n_ctx``), ``/v1/models``,
the structured-output canary enforced, and a chat completion for everything else.

A chat reply is a crux-card reply (the ``direct`` and ``cot`` baselines' schema) about the
prompt it answers: one card asking about that prompt's ``Topic:`` line, with its first two
bracketed persona ids on the YES and NO sides. So a reply answered about another debate's
prompt names that debate's topic and personas.

To make the fault show whenever two requests could overlap, a request that finds its slot
free holds it until a second request arrives for the slot, or for ``hold_s`` seconds. The
hold decides only how surely the fault is met when two requests overlap; a client that never
sends two requests to one slot at once is answered correctly whatever the timing.

    python tests/llm/crossing_server.py [--port 0] [--slots 5] [--hold-s 5]   # prints its URL
"""

from __future__ import annotations

import argparse
import json
import re
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

MODEL = "stand-in"


def prompt_of(body: dict[str, Any]) -> str:
    """The text of a request's messages (system and user)."""
    return "\n".join(str(m.get("content") or "") for m in body.get("messages") or [])


def about(prompt: str) -> dict[str, Any]:
    """The crux-card reply this server gives about ``prompt``."""
    topic = re.search(r"^Topic: (.+)$", prompt, flags=re.MULTILINE)
    subject = topic.group(1).strip().rstrip("?.") if topic else "this"
    ids = re.findall(r"^\[([^\]\n]+)\]", prompt, flags=re.MULTILINE)[:2] or ["a", "b"]
    sides = ["YES", "NO"]
    return {
        "reasoning": f"They split on {subject}.",
        "cards": [{
            "question": f"Is it true that {subject}?",
            "disagreement_type": "premise",
            "diagnosis": f"They read the evidence on {subject} differently.",
            "positions": [
                {"persona": pid, "position": sides[i % 2], "reasoning": f"{pid} on {subject}.", "falsifier": None}
                for i, pid in enumerate(ids)
            ],
        }],
    }


@dataclass
class Exchange:
    """One chat request as the server saw it (for the test's failure message)."""

    slot: int | None
    asked: str
    answered: str

    @property
    def crossed(self) -> bool:
        return self.asked != self.answered


@dataclass
class CrossingState:
    slots: int = 5
    hold_s: float = 5.0
    n_ctx: int = 32768
    exchanges: list[Exchange] = field(default_factory=list)
    _cond: threading.Condition = field(default_factory=threading.Condition)
    _busy: dict[int, str] = field(default_factory=dict)  # slot -> the prompt it is working on
    _waiting: dict[int, list[str]] = field(default_factory=dict)  # slot -> prompts waiting for it

    def answer(self, body: dict[str, Any]) -> str:
        """The prompt a chat request is answered about (the fault included)."""
        own = prompt_of(body)
        slot = body.get("id_slot")
        if not isinstance(slot, int) or slot < 0:
            self._log(None, own, own)
            return own
        with self._cond:
            if slot not in self._busy:
                self._busy[slot] = own
                # Hold the slot until another request arrives for it (or for hold_s).
                self._cond.wait_for(lambda: bool(self._waiting.get(slot)), timeout=self.hold_s)
                # The fault: the request holding the slot is answered about the newcomer's prompt.
                waiting = self._waiting.get(slot) or [own]
                answered = waiting[0]
                del self._busy[slot]
                self._cond.notify_all()
            else:
                self._waiting.setdefault(slot, []).append(own)
                self._cond.notify_all()
                self._cond.wait_for(lambda: slot not in self._busy)
                self._waiting[slot].remove(own)
                answered = own
        self._log(slot, own, answered)
        return answered

    def _log(self, slot: int | None, asked: str, answered: str) -> None:
        with self._cond:
            self.exchanges.append(Exchange(slot, _tag(asked), _tag(answered)))


def _tag(prompt: str) -> str:
    topic = re.search(r"^Topic: (.+)$", prompt, flags=re.MULTILINE)
    return topic.group(1) if topic else prompt[:40]


def _completion(text: str) -> dict[str, Any]:
    return {
        "id": "chatcmpl-stand-in", "object": "chat.completion", "created": 1, "model": MODEL,
        "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 100, "completion_tokens": 50, "total_tokens": 150},
    }


def _handler(state: CrossingState) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:  # quiet
            return

        def _send(self, status: int, data: dict[str, Any]) -> None:
            raw = json.dumps(data).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(raw)))
            self.end_headers()
            self.wfile.write(raw)

        def do_GET(self) -> None:
            if self.path.rstrip("/") == "/props":
                self._send(200, {"default_generation_settings": {"n_ctx": state.n_ctx}, "total_slots": state.slots})
            elif self.path.rstrip("/").endswith("/models"):
                self._send(200, {"object": "list", "data": [{"id": MODEL, "object": "model"}]})
            elif self.path.rstrip("/") == "/health":
                self._send(200, {"status": "ok"})
            else:
                self._send(404, {"error": {"code": 404, "message": "File Not Found"}})

        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            body = json.loads(self.rfile.read(length) or b"{}")
            if not self.path.rstrip("/").endswith("/chat/completions"):
                self._send(404, {"error": {"code": 404, "message": "File Not Found"}})
                return
            fmt = body.get("response_format") or {}
            schema = (fmt.get("json_schema") or {}) if isinstance(fmt, dict) else {}
            if schema.get("name") == "canary":
                sentinel = schema["schema"]["properties"]["canary"]["enum"][0]
                self._send(200, _completion(json.dumps({"canary": sentinel})))
                return
            self._send(200, _completion(json.dumps(about(state.answer(body)))))

    return Handler


class CrossingServer:
    """The stand-in server on 127.0.0.1, in threads of this process (``with`` starts and stops it)."""

    def __init__(self, *, port: int = 0, slots: int = 5, hold_s: float = 5.0) -> None:
        self.state = CrossingState(slots=slots, hold_s=hold_s)
        self.httpd = ThreadingHTTPServer(("127.0.0.1", port), _handler(self.state))
        self.httpd.daemon_threads = True
        self._thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"

    def __enter__(self) -> CrossingServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()

    @property
    def crossed(self) -> list[Exchange]:
        return [e for e in self.state.exchanges if e.crossed]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    ap.add_argument("--port", type=int, default=0)
    ap.add_argument("--slots", type=int, default=5)
    ap.add_argument("--hold-s", type=float, default=5.0)
    args = ap.parse_args()
    server = CrossingServer(port=args.port, slots=args.slots, hold_s=args.hold_s)
    print(server.base_url, flush=True)
    try:
        server.httpd.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        for e in server.crossed:
            print(f"crossed on slot {e.slot}: asked about {e.asked!r}, answered about {e.answered!r}", flush=True)


if __name__ == "__main__":
    main()
