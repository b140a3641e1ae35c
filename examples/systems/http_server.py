"""An example system behind HTTP, for `lasagna benchmark run --system http://...`.

Standard library only. It serves the lasagna HTTP contract (README, "Benchmark your own
system"):

    POST /answer   {"question": "...", "id": "q01", "top_k": 10}
    200            {"answer": "...", "retrieved": ["passage text or document id", ...]}

and answers with examples/systems/keyword_system.py. Run it, then benchmark it:

    uv run python examples/systems/http_server.py --port 8765 &
    uv run lasagna benchmark run examples/data/pasta.jsonl --system http://127.0.0.1:8765/answer

`--delay S` and `--fail-rate P` make it slow and flaky (a 503 for a share P of the
requests), to watch lasagna's retries at work.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from keyword_system import PASSAGES, best_sentence, rank


def answer(question: str, top_k: int) -> dict[str, Any]:
    found = rank(question, PASSAGES, k=top_k)
    reply = best_sentence(question, found[0][1]) if found else "Not mentioned"
    return {"answer": reply, "retrieved": [text for _, text in found]}


class Handler(BaseHTTPRequestHandler):
    delay = 0.0
    fail_rate = 0.0

    def _reply(self, status: int, body: dict[str, Any]) -> None:
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self) -> None:
        if self.path == "/health":
            self._reply(200, {"status": "ok"})
        else:
            self._reply(404, {"error": "POST a question to /answer"})

    def do_POST(self) -> None:
        if self.path != "/answer":
            self._reply(404, {"error": "POST a question to /answer"})
            return
        length = int(self.headers.get("Content-Length") or 0)
        try:
            request = json.loads(self.rfile.read(length))
            question = request["question"]
            top_k = int(request.get("top_k", 10))
        except (ValueError, KeyError, TypeError):
            self._reply(400, {"error": 'expected {"question": "...", "id": "...", "top_k": 10}'})
            return
        time.sleep(self.delay)
        if random.random() < self.fail_rate:
            self._reply(503, {"error": "busy, try again"})
            return
        self._reply(200, answer(question, top_k))

    def log_message(self, format: str, *args: Any) -> None:  # quiet: one line per request
        return


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8765)
    parser.add_argument("--delay", type=float, default=0.0, help="seconds before each reply")
    parser.add_argument("--fail-rate", type=float, default=0.0, help="share of 503 replies")
    args = parser.parse_args()
    Handler.delay, Handler.fail_rate = args.delay, args.fail_rate
    server = ThreadingHTTPServer((args.host, args.port), Handler)
    print(f"serving on http://{args.host}:{server.server_port}/answer", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()


if __name__ == "__main__":
    main()
