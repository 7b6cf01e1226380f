#!/usr/bin/env bash
# Compares this build with another one on the throughput suite, the way the issues' performance
# targets are stated: scripts/bench.sh --throughput alternately with the other build's dlqd
# (DLQD=BEFORE) and this one, ROUNDS times each (first the other build), then per configuration
# and workload the median rate of each build, the ratio this/before, and the median dlqd CPU per
# message of each. The rounds' JSON stays in bench-results/ab-*.json.
#   scripts/bench-ab.sh BEFORE_DLQD [ROUNDS]     (ROUNDS: 3)
set -euo pipefail
cd "$(dirname "$0")/.."
before="${1:?usage: $0 BEFORE_DLQD [ROUNDS]}"
rounds="${2:-3}"
[ -x "$before" ] || { echo "not an executable: $before" >&2; exit 2; }
mkdir -p bench-results
for round in $(seq 1 "$rounds"); do
  echo "== round $round: before ($before)" >&2
  DLQD="$before" scripts/bench.sh --throughput > /dev/null
  cp bench-results/latest.json "bench-results/ab-before-$round.json"
  echo "== round $round: this build" >&2
  scripts/bench.sh --throughput > /dev/null
  cp bench-results/latest.json "bench-results/ab-after-$round.json"
done
python3 - "$rounds" <<'PY'
import json, statistics, sys
rounds = int(sys.argv[1])
def load(side):
    rows = {}
    for r in range(1, rounds + 1):
        for row in json.load(open(f"bench-results/ab-{side}-{r}.json")):
            rows.setdefault((row["config"], row["workload"]), []).append(row)
    return rows
before, after = load("before"), load("after")
print(f"{'config':14} {'workload':15} {'before':>10} {'after':>10} {'ratio':>6} {'cpu_us b':>9} {'cpu_us a':>9}")
for key in before:
    if key not in after:
        continue
    med = lambda rows, f: statistics.median(float(x.get(f, 0)) for x in rows)
    b, a = med(before[key], "rate"), med(after[key], "rate")
    print(f"{key[0]:14} {key[1]:15} {b:10.1f} {a:10.1f} {a / b if b else 0:6.3f} "
          f"{med(before[key], 'cpu_us'):9.1f} {med(after[key], 'cpu_us'):9.1f}")
PY
