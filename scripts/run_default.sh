#!/usr/bin/env bash
# The main job on the embedded default case: set up, build, and run it into results/default/.
# The default case is the built-in synthetic LV (configs/lv_phantom.yaml: Land et al. 2015
# truncated ellipsoid, generated on the fly, rule-based fibres, apical pacing, two beats
# against a Windkessel). See docs/heartbeat.md.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
./build/pipeline/cardiac run configs/lv_phantom.yaml -o results/default "$@"
