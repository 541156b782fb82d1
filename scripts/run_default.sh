#!/usr/bin/env bash
# The main job on the embedded default case: set up, build, and run it into results/default/.
# The default case is the real human biventricle (configs/biv_calibrated.yaml: the mean shape in
# data/, unloaded, beating in the closed loop, filled, calibrated to 120/80 mmHg and EF 60 %,
# until periodic). The quick demo is configs/lv_phantom.yaml. See docs/heartbeat.md.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
./build/pipeline/cardiac run configs/biv_calibrated.yaml -o results/default "$@"
