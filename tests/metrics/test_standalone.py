"""lasagna-metrics stands alone: importing it loads nothing outside the standard library."""

import json
import subprocess
import sys


def test_import_loads_only_the_standard_library() -> None:
    code = (
        "import json, sys; before = set(sys.modules); import lasagna_metrics; "
        "[getattr(lasagna_metrics, name) for name in lasagna_metrics.__all__]; "
        "print(json.dumps(sorted(set(sys.modules) - before)))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    loaded = json.loads(out.stdout)
    foreign = [
        name
        for name in loaded
        if name.split(".")[0] not in sys.stdlib_module_names
        and not name.startswith("lasagna_metrics")
    ]
    assert foreign == []
