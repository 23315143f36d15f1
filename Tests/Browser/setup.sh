#!/usr/bin/env bash
# Creates the browser test's Python environment (Playwright, video.js from PyPI) in the venv given, once.
set -euo pipefail
venv="$1"
here="$(cd "$(dirname "$0")" && pwd)"
mkdir -p "$(dirname "$venv")"
# One setup at a time, whoever calls it (parallel tests, two checkouts' runs): the others wait, then find it made.
exec 9>"$venv.lock"
flock 9
if [ -x "$venv/bin/python" ] && "$venv/bin/python" -c 'import playwright, js.videojs, h2' 2>/dev/null; then exit 0; fi
python3 -m venv "$venv"
"$venv/bin/pip" install -q --disable-pip-version-check -r "$here/requirements.txt"
