# Sourced by the tools: sets PY, the Python they build and run with.
#   - $PYTHON, if set;
#   - else the Python of an active virtual environment (also one that
#     python3 itself runs in, as on the GPU machine, where torch lives in one);
#   - else the project's own .venv, made on first use with the system's
#     packages visible (a preinstalled torch is used, not downloaded again).
# Nothing is installed into a system Python.
if [ -n "${PYTHON:-}" ]; then
  PY=$PYTHON
elif [ -n "${VIRTUAL_ENV:-}" ] && [ -x "$VIRTUAL_ENV/bin/python" ]; then
  PY="$VIRTUAL_ENV/bin/python"
elif python3 -c "import sys; sys.exit(0 if sys.prefix != sys.base_prefix else 1)" 2>/dev/null; then
  PY=python3
else
  if [ ! -x .venv/bin/python ]; then
    echo "setup: no virtual environment is active: creating .venv here (the system's packages stay visible)"
    if ! python3 -m venv --system-site-packages .venv; then
      echo "setup: python3 -m venv failed. Install your system's venv package (python3-venv on Debian)," >&2
      echo "       activate an environment, or set PYTHON=/path/to/python." >&2
      exit 1
    fi
  fi
  PY=.venv/bin/python
fi
