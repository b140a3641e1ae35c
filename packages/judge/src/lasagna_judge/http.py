"""lasagna's HTTP client for other packages (lasagna-cli's HTTP systems and Chroma store):
one `HttpSender` (httpx2 underneath, the providers' SDKs' own stack, so the project has one)
with what every call of the project shares: the proxies given, the certificates trusted,
IDNA 2008 host names, a deadline besides the idle timeout, a cap on a reply's size after
decompression, and failures as `WireError`s whose `retried` says whether another attempt
can help. See `_wire` for the details. `redact` keeps secrets (keys, header values) out of
error messages, as every model call does."""

from lasagna_judge._redact import redact, secrets_of
from lasagna_judge._wire import MAX_REPLY_BYTES, HttpSender, WireRequest, WireResponse
from lasagna_judge._wire_errors import RETRIED_KINDS, WireError

__all__ = [
    "MAX_REPLY_BYTES",
    "RETRIED_KINDS",
    "HttpSender",
    "WireError",
    "WireRequest",
    "WireResponse",
    "redact",
    "secrets_of",
]
