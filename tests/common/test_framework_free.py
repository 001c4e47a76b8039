"""The shared package runs without Django: importing it loads no Django or app module."""

import pkgutil
import subprocess
import sys
from pathlib import Path

import common

ROOT = Path(__file__).resolve().parents[2]


def test_every_common_module_imports_without_django():
    names = [f"common.{m.name}" for m in pkgutil.iter_modules(common.__path__)]
    code = (
        "import importlib, os, sys\n"
        "os.environ.pop('DJANGO_SETTINGS_MODULE', None)\n"
        f"for name in {names!r}:\n"
        "    importlib.import_module(name)\n"
        "leaked = sorted(m for m in sys.modules if m.split('.')[0] in {'django', 'agent',"
        " 'archive', 'retrieval', 'trace_site'})\n"
        "assert not leaked, leaked\n"
    )
    result = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True,
                            text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    assert {"common.text", "common.french_dates", "common.jsonl", "common.sql",
            "common.locks"} <= set(names)
