#!/usr/bin/env bash
# Set up, build, and run the default test suite (long validation runs carry the CTest label
# "long" and are excluded; run them with: ctest --test-dir build -L long).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
ctest --test-dir build --output-on-failure -j "$(nproc)" -LE long
