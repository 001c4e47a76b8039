"""Measure the peak memory of reading one large, valid ALTO page: ``python -m
archive.alto_memory PATH BYTES`` writes the page (about BYTES long) at PATH unless it exists, then
reads it in this fresh process and prints JSON: its size, the peak resident memory before and
after the read (MB), and the characters of text read. ``measure`` runs it in a child process
(the test of bounded memory and ``manage.py hardening_report`` use it)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

SENTENCE = ("Le Conseil municipal a voté hier le budget de la ville de Paris pour 1887 après "
            "une longue discussion")
LINE = SENTENCE.split(" ")


def write_page(path: Path, size: int) -> None:
    """An ALTO v3 page of blocks of 20 lines of words, about ``size`` bytes."""
    words = "<SP/>".join(f'<String CONTENT="{w}" WC="0.93" HPOS="1" VPOS="1" WIDTH="9" '
                         f'HEIGHT="9"/>' for w in LINE)
    block_lines = "".join(f'<TextLine ID="L{n}">{words}</TextLine>\n' for n in range(20))
    head = ('<?xml version="1.0" encoding="UTF-8"?>\n'
            '<alto xmlns="http://www.loc.gov/standards/alto/ns-v3#"><Description>'
            "<MeasurementUnit>pixel</MeasurementUnit></Description><Layout>"
            '<Page ID="P1" WIDTH="5000" HEIGHT="7000"><PrintSpace>\n')
    tail = "</PrintSpace></Page></Layout></alto>\n"
    with path.open("w", encoding="utf-8") as out:
        out.write(head)
        written, number = len(head.encode()), 0
        while True:
            block = (f'<TextBlock ID="TB{number}" HPOS="10" VPOS="{10 + number}" WIDTH="500" '
                     f'HEIGHT="40">\n{block_lines}</TextBlock>\n')
            if written + len(block.encode()) + len(tail) > size:
                break
            out.write(block)
            written += len(block.encode())
            number += 1
        out.write(tail)


def peak_mb() -> float:
    """This process's peak resident memory (Linux ``VmHWM``, MB). Unlike ``ru_maxrss``, which a
    child inherits from the process that started it, it starts again with each program."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    raise OSError("no VmHWM in /proc/self/status")


def measure(path: Path, size: int) -> dict:
    """Write (if absent) and read a page of about ``size`` bytes in a child process."""
    result = subprocess.run([sys.executable, "-m", "archive.alto_memory", str(path), str(size)],
                            capture_output=True, text=True, check=True,
                            cwd=Path(__file__).resolve().parent.parent)
    return json.loads(result.stdout)


def main() -> None:
    path, size = Path(sys.argv[1]), int(sys.argv[2])
    if not path.exists():
        write_page(path, size)
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "trace_site.settings")
    # deferred: this child process measures the reader's memory without setting Django up, so
    # the reader is imported only once the settings module is named
    from archive.importers.alto_page import read_alto_page
    from archive.importers.alto_text import AltoTextBuilder

    before = peak_mb()
    builder = AltoTextBuilder()
    read_alto_page(path, path.name, max_bytes=size + 1, text=builder)
    text, _ = builder.result()
    after = peak_mb()
    print(json.dumps({"bytes": path.stat().st_size, "peak_mb_before": round(before, 1),
                      "peak_mb_after": round(after, 1), "characters": len(text)}))


if __name__ == "__main__":
    main()
