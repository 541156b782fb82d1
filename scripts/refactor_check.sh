#!/usr/bin/env bash
# The refactor check (issue 13): a restructuring must change no number. Runs four reference cases
# with a given `cardiac` and lists a SHA-256 per output file, timing fields aside:
#   the default case (configs/lv_phantom.yaml, two beats), a block experiment (elongation),
#   Land et al. 2015 problem 1, and a mesh served from the stage cache (a second `cardiac mesh`).
# The cache files themselves are left out: their key holds the hash of the executable.
# Usage:
#   scripts/refactor_check.sh record CARDIAC OUT.txt     # list the hashes of CARDIAC's outputs
#   scripts/refactor_check.sh compare CARDIAC BEFORE.txt # fail when any hash differs from BEFORE
# Typical use: record with the build of the commit before the move, compare with the one after.
set -euo pipefail
cd "$(dirname "$0")/.."
mode=${1:?record or compare}
cardiac=$(realpath "${2:?path to the cardiac binary}")
list=${3:?hash list}
work=$(mktemp -d /tmp/refactor_check.XXXXXX)
trap 'rm -rf "$work"' EXIT

run() { "$cardiac" "$@" --threads 2 > "$work/last.log" 2>&1 || { cat "$work/last.log"; exit 1; }; }
run run configs/lv_phantom.yaml -o "$work/default" --no-figures
run run configs/experiments/elongation.yaml -o "$work/block"
run run configs/benchmarks/land2015_problem1.yaml -o "$work/land_p1" --no-figures
run mesh configs/lv_phantom.yaml -o "$work/mesh"
run mesh configs/lv_phantom.yaml -o "$work/mesh"  # the second one is served from cache/
grep -q "cache" "$work/mesh/run.log" || { echo "refactor_check: the second mesh did not report the cache"; exit 1; }

# Timing and provenance fields differ between any two runs; every other byte must not.
normalise() {
  case "$1" in
    *.json) /usr/bin/python3 - "$1" << 'EOF'
import json, re, sys
# mesh_cache.key holds the hash of the executable.
timing = re.compile(r'(_s|_utc|^version|^config|^config_hash_fnv1a|^threads|^key)$')
def strip(v):
    if isinstance(v, dict):
        return {k: strip(x) for k, x in v.items() if not timing.search(k)}
    if isinstance(v, list):
        return [strip(x) for x in v]
    return v
print(json.dumps(strip(json.load(open(sys.argv[1]))), sort_keys=True, indent=1))
EOF
      ;;
    *.yaml) grep -v '^# ' "$1" ;;
    *) cat "$1" ;;
  esac
}
( cd "$work" && find . -type f ! -name run.log ! -name last.log ! -name hashes.txt ! -path "*/cache/*" ! -name invocation.json ! -name '*.lock' | sort |
  while read -r f; do echo "$(normalise "$f" | sha256sum | cut -c1-16) $f"; done ) > "$work/hashes.txt"

if [ "$mode" = record ]; then
  cp "$work/hashes.txt" "$list"
  echo "refactor_check: $(wc -l < "$list") files recorded in $list"
else
  if diff "$list" "$work/hashes.txt"; then
    echo "refactor_check: all $(wc -l < "$list") outputs identical"
  else
    echo "refactor_check: outputs differ from $list (lines above: < before, > now)"
    exit 1
  fi
fi
