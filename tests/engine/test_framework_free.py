"""The engine runs without Django: importing it loads no Django module."""

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_the_engine_imports_without_django_or_settings():
    code = (
        "import os, sys\n"
        "os.environ.pop('DJANGO_SETTINGS_MODULE', None)\n"
        "import agent.engine.investigation, agent.engine.offline, agent.engine.llm_policy\n"
        "import agent.engine.openai_chat, agent.engine.sinks, agent.engine.replay\n"
        "leaked = sorted(m for m in sys.modules if m.split('.')[0] in {'django', 'archive',"
        " 'retrieval', 'trace_site'})\n"
        "assert not leaked, leaked\n"
    )
    result = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True,
                            text=True, timeout=60)
    assert result.returncode == 0, result.stderr


def test_no_production_module_imports_the_test_fakes():
    packages = ("agent", "archive", "common", "retrieval", "trace_site", "measurement", "scripts")
    offenders = [
        f"{path.relative_to(ROOT)}:{number}"
        for package in packages for path in sorted((ROOT / package).rglob("*.py"))
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1)
        if line.strip().startswith(("from tests", "import tests"))
    ]
    assert not offenders, offenders
