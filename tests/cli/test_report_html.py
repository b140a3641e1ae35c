"""The HTML report as a file: self-contained, its vendored charting runtime the one pinned,
and untrusted text unable to end its data element (the browser tests check the page)."""

from __future__ import annotations

import hashlib
import json
import re
from importlib.resources import files
from pathlib import Path

from typer.testing import CliRunner

from lasagna_cli._app import app
from lasagna_cli.engine.reports._html import json_for_html, page_parts

ASSETS = files("lasagna_cli.engine.reports") / "assets"
DATA = Path(__file__).resolve().parents[2] / "examples" / "data"


def test_vendored_vega_is_the_pinned_build() -> None:
    pinned = json.loads((ASSETS / "vendor.json").read_text(encoding="utf-8"))["files"]
    for name, facts in pinned.items():
        data = (ASSETS / name).read_bytes()
        assert hashlib.sha256(data).hexdigest() == facts["sha256"], name
        assert b"</script" not in data
    licences = (ASSETS / "VEGA-LICENSES.txt").read_text(encoding="utf-8")
    assert "vega 6.4.0 (BSD-3-Clause)" in licences and "vega-lite 6.4.3" in licences


def test_untrusted_text_cannot_leave_the_data_element() -> None:
    hostile = "</script><script>alert(1)</script><!-- & \u2028"
    encoded = json_for_html({"answer": hostile}).decode("utf-8")
    assert "<" not in encoded and ">" not in encoded and "&" not in encoded
    assert json.loads(encoded) == {"answer": hostile}
    payload = {"title": "<b>t</b>", "runs": [], "groups": [], "passages": {}}
    page = b"".join(page_parts(payload)).decode()
    assert page.count("<script") == 4  # the data, vega, vega-lite, the page's script
    assert "<title>&lt;b&gt;t&lt;/b&gt;</title>" in page


def test_line_separators_are_escaped_and_other_text_kept() -> None:
    text = "a\u2028b\u2029c \u2026 \u2027\u202a"  # U+2026..U+202A share their first two bytes
    encoded = json_for_html({"t": text})
    assert encoded == b'{"t":"a\\u2028b\\u2029c \xe2\x80\xa6 \xe2\x80\xa7\xe2\x80\xaa"}'
    assert json.loads(encoded) == {"t": text}
    assert json_for_html({"t": "\u2026"}) == '{"t":"\u2026"}'.encode()


def test_the_report_needs_no_network(tmp_path: Path) -> None:
    run = tmp_path / "run"
    assert CliRunner().invoke(app, ["benchmark", "run", str(DATA / "pasta.jsonl"), "-o",
                                    str(run)]).exit_code == 0  # fmt: skip
    result = CliRunner().invoke(app, ["benchmark", "report", str(run)])
    assert result.exit_code == 0, result.output
    page = (run / "report.html").read_text(encoding="utf-8")
    assert "default-src 'none'" in page  # the page's CSP: no fetch of any kind
    assert not re.search(r"""<(script|link|img|iframe)[^>]+(src|href)=""", page)
    assert "sourceMappingURL" not in page
    assert "What kind of pasta is layered to make lasagna?" in page  # the data's text
