#!/usr/bin/env bash
# Compares split-policy settings on the cases they affect, in one device call.
set -u
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT/tune"
sel='outer|middle|transposed|cols|4-D|5-D|full 2\^1[468]|full 2\^2[02]'
for cfg in "16 16 8" "16 8 8" "32 8 8" "8 32 8" "16 16 4"; do
  set -- $cfg
  GPUREDUCE_ROWS_PER_COLUMN_THREAD=$1 GPUREDUCE_MAX_ROW_THREADS=$2 GPUREDUCE_ONE_BLOCK_LOOPS=$3 \
    python3 benchmarks/bench.py --only "$sel" --no-plots --no-cupy --replays 11 \
    --out-dir "$OUT/tune/r$1_b$2_l$3" > "$OUT/tune/r$1_b$2_l$3.log" 2>/dev/null
  echo "== rows/thread $1, max row threads $2, one-block loops $3"
  python3 - "$OUT/tune/r$1_b$2_l$3/nvidia_h200.json" <<'PY'
import json, sys, math
d = json.load(open(sys.argv[1]))["cases"]
e = [c for c in d if c["kernel"] == "gpureduce"]
print(" ".join(f"{c['name'].split(' [')[0][:10]}{c['shape']}{c['dtype'][:4]}={c['speedup']:.2f}" for c in e))
print("geomean", round(math.exp(sum(math.log(c["speedup"]) for c in e) / len(e)), 3), "min", round(min(c["speedup"] for c in e), 3))
PY
done
