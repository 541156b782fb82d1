#!/usr/bin/env bash
# The main job on the embedded default case: set up, build, and run it into results/default/.
# Until the heart pipeline lands, the default case is Baudet's cantilever experiment.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
./build/pipeline/cardiac run configs/experiments/cantilever.yaml -o results/default "$@"
