"""`fake/...` models: a scripted model served in this process, to try every model-backed
command in seconds with no key, no server and no download. Its output looks real (a grade
with its reasoning, a question from the passage with its answer copied from it, an answer
quoting the context, claims and their labels) and means nothing.

The form, and why: a `fake/` model is an OpenAI-compatible backend pointed at lasagna's own
FakeLLMServer (`lasagna_judge.testing`), started on 127.0.0.1 on the first `fake/` model a
process makes and answering with `scripted_reply`. Every call therefore takes the same path
as a real provider's: the openai SDK, real HTTP, the retrying sender, instructor's tool
calls, the cache, the meter, and OpenAI's Batch API for `--batch` (the server's batch
routes). A backend that answered in-process would have been quicker to write, but what a
newcomer tried would not be what runs against a provider, and `--batch` would need a path
of its own. A documented "start the fake server, then point OPENAI_BASE_URL at it" was the
other choice: two terminals and a variable for a first try, and results that record
`openai/...` like a real model's. Here results record `fake/<name>`, and
`is_scripted` lets every view of the figures say that they come from a scripted model
(`scripted_note`).

Replies are drawn from the request (the model's name and the messages): the same request
always gets the same reply, and `fake/a` and `fake/b` answer a little differently. A `fake/`
model costs nothing (`price_for` prices it at 0), reads no environment variable and takes no
base URL or key.
"""

from __future__ import annotations

import atexit
import threading
from typing import TYPE_CHECKING

from lasagna_judge._usage import FAKE_PROVIDER, is_scripted

if TYPE_CHECKING:
    from lasagna_judge._providers import Backend, StructuredMode
    from lasagna_judge._sdk import Wire
    from lasagna_judge.testing import FakeLLMServer

_server: FakeLLMServer | None = None
_server_lock = threading.Lock()


def scripted_note(models: object) -> str | None:
    """The line every view of figures shows when scripted models made them: "scripted:
    fake/scripted answers with canned replies ...". `models` is a name or a collection of
    them (None and other values are skipped); None when none is scripted."""
    names = models if isinstance(models, list | tuple | set | frozenset) else [models]
    scripted = sorted({m for m in names if isinstance(m, str) and is_scripted(m)})
    if not scripted:
        return None
    verb = "answers" if len(scripted) == 1 else "answer"
    return (
        f"scripted: {', '.join(scripted)} {verb} with canned replies (lasagna's fake model, "
        "no real model behind it); these figures mean nothing"
    )


def fake_server() -> FakeLLMServer:
    """The process's scripted server, started on first use and stopped at exit."""
    global _server
    with _server_lock:
        if _server is None:
            from lasagna_judge.testing import FakeLLMServer, scripted_reply

            server = FakeLLMServer(reply=scripted_reply, keep_requests=False)
            server.start()
            atexit.register(server.stop)
            _server = server
        return _server


def fake_backend(name: str, *, wire: Wire, mode: StructuredMode | None = None) -> Backend:
    """The backend of `fake/<name>`: the OpenAI-compatible one, on the scripted server,
    whose Batch API `--batch` uses."""
    from lasagna_judge._openai_compat import OpenAICompatBackend

    server = fake_server()
    return OpenAICompatBackend(
        FAKE_PROVIDER,
        name,
        api_key="fake",
        base_url=server.base_url,
        wire=wire,
        mode=mode or "tools",
    )
