#!/usr/bin/env bash
# Create the project's virtual environment with Python 3.12 and install the locked runtime and
# development requirements (requirements.lock, requirements-dev.lock).
set -euo pipefail
venv="${1:-.venv}"

find_python() {
  for candidate in "${TRACE_PYTHON:-}" python3.12; do
    [ -n "$candidate" ] && "$candidate" -c 'import sys; assert sys.version_info[:2] == (3, 12)' \
      2>/dev/null && { echo "$candidate"; return; }
  done
  # pyenv installs keep 3.12 off PATH unless selected
  for candidate in "$HOME"/.pyenv/versions/3.12*/bin/python3.12 /usr/bin/python3.12 /usr/local/bin/python3.12; do
    [ -x "$candidate" ] && { echo "$candidate"; return; }
  done
  echo "Python 3.12 not found: install it or set TRACE_PYTHON" >&2
  exit 1
}

if [ ! -x "$venv/bin/python" ]; then
  python="$(find_python)"
  echo "Creating $venv with $python"
  "$python" -m venv "$venv"
fi
"$venv/bin/python" -m pip install --quiet --upgrade pip
"$venv/bin/python" -m pip install --quiet -r requirements.lock -r requirements-dev.lock
echo "Installed the locked runtime and development requirements into $venv"
