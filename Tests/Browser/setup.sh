#!/usr/bin/env bash
# Creates the browser test's Python environment (Playwright, video.js from PyPI) in the venv given, once.
set -euo pipefail
venv="$1"
here="$(cd "$(dirname "$0")" && pwd)"
if [ -x "$venv/bin/python" ] && "$venv/bin/python" -c 'import playwright, js.videojs' 2>/dev/null; then exit 0; fi
python3 -m venv "$venv"
"$venv/bin/pip" install -q --disable-pip-version-check -r "$here/requirements.txt"
