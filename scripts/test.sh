#!/usr/bin/env bash
# Set up, build, and run the default test suite (long validation runs carry the CTest label
# "long" and are excluded; run them with: ctest --test-dir build -L long). The C++ formatting is
# checked first (scripts/check_format.sh, .clang-format).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
bash scripts/check_format.sh
ctest --test-dir build --output-on-failure -j "$(nproc)" -LE long
