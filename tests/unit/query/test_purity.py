"""The query layer stays pure: importing it pulls in no store, web framework or settings."""

from __future__ import annotations

import json
import subprocess
import sys

FORBIDDEN = ("sqlalchemy", "fastapi", "starlette", "limelight.store", "limelight.settings")


def test_importing_the_query_layer_imports_no_infrastructure() -> None:
    code = (
        "import json, sys\n"
        "import limelight.query, limelight.query.spec, limelight.query.compile\n"
        "import limelight.query.results\n"
        "print(json.dumps(sorted(sys.modules)))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    loaded = json.loads(out.stdout)
    assert "limelight.query.compile" in loaded  # the probe did import the layer
    leaked = [m for m in loaded if any(m == f or m.startswith(f + ".") for f in FORBIDDEN)]
    assert leaked == []
