"""Test helpers for code that talks to LLMs: a fake OpenAI-compatible server on 127.0.0.1.

The server speaks real HTTP, so tests exercise the same SDKs, retries, timeouts and caches
as production; nothing of lasagna's own is mocked. `scripted_reply` answers lasagna's own
calls as a plausible model would (what `fake/` models serve).
"""

from lasagna_judge.testing._fake_server import FakeLLMServer, Fault, Reply
from lasagna_judge.testing._provider import RateLimits, lognormal_latency
from lasagna_judge.testing._responses import hashed_embedding
from lasagna_judge.testing._scripted import scripted_reply

__all__ = [
    "FakeLLMServer",
    "Fault",
    "RateLimits",
    "Reply",
    "hashed_embedding",
    "lognormal_latency",
    "scripted_reply",
]
