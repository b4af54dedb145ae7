"""A stand-in for llama-server: parses its flags and answers /health, /v1/models and /props.

``FAKE_LLAMA_EXIT=N`` makes it print an error and exit with N at once, like a server that
cannot load its model. Tests write a launcher for it with the test interpreter as shebang.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from http.server import BaseHTTPRequestHandler, HTTPServer


def main() -> None:
    if "--version" in sys.argv:
        print("version: 0 (fake)\nbuilt with a test for Linux", flush=True)
        return
    parser = argparse.ArgumentParser()
    parser.add_argument("--model", required=True)
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8080)
    parser.add_argument("--alias", default="model")
    parser.add_argument("--ctx-size", type=int, default=4096)
    parser.add_argument("--parallel", type=int, default=1)
    args, _unknown = parser.parse_known_args()
    code = int(os.environ.get("FAKE_LLAMA_EXIT", "0") or 0)
    if code:
        print(f"error: failed to load model '{args.model}'", flush=True)
        sys.exit(code)
    print(f"main: server is listening on http://{args.host}:{args.port}", flush=True)

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802
            routes = {
                "/health": {"status": "ok"},
                "/v1/models": {"object": "list", "data": [{"id": args.alias}]},
                "/props": {"default_generation_settings": {"n_ctx": args.ctx_size // args.parallel}},
            }
            body = json.dumps(routes.get(self.path, {"error": {"message": "File Not Found"}})).encode()
            self.send_response(200 if self.path in routes else 404)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *a: object) -> None:
            pass

    HTTPServer((args.host, args.port), Handler).serve_forever()


if __name__ == "__main__":
    main()
