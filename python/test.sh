#!/usr/bin/env bash
# Builds the lahar Python package into a virtual environment under target/ and
# runs its tests (pytest over python/tests). Part of the README's test command;
# needs python3 (3.9 or later) with venv and pip, and the registries of PyPI.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(dirname "$here")"
venv="$root/target/python-venv"
python="${PYTHON:-python3}"
if [ ! -x "$venv/bin/python" ]; then
  "$python" -m venv "$venv"
fi
"$venv/bin/python" -m pip install --quiet --disable-pip-version-check -r "$here/requirements-test.txt"
# `pip install ./python`, as a user installs it: maturin builds the extension
# with cargo into the workspace's target/ (reusing what the Rust tests built).
PATH="$venv/bin:$PATH" "$venv/bin/python" -m pip install --quiet --disable-pip-version-check --no-build-isolation --force-reinstall --no-deps "$here"
# The tests compare the package with the `lahar` binary of the same checkout.
(cd "$root" && cargo build --release --quiet --bin lahar)
# From tests/, so that the installed package is imported, not the source folder.
cd "$here/tests"
exec "$venv/bin/pytest" -q -p no:cacheprovider . "$@"
