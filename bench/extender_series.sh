#!/bin/sh
# The extender figures, one command: SchedulingBasic 5,000 nodes / 10,000 pods with no
# extender and with the benchmark extender at LATENCY ms per call (default 10), interleaved
# round by round (the machine's speed drifts over minutes: runs side by side compare
# best), then kube-scheduler v1.37 and asched with the same extender on 2,000 pods.
# Summarise with bench/extenders.py.
#
#   sh bench/extender_series.sh OUT [ROUNDS]
#     OUT:    where every run's JSON and the uptime lines (times.txt) go
#     ROUNDS: interleaved rounds (default 14)
#
# KUBE=0 skips the kube-scheduler runs (they need its binary, built and cached under
# ~/.cache/asched on first use, and take about a minute each). LATENCY=2 for 2 ms.
set -eu
out=${1:?usage: sh bench/extender_series.sh OUT [ROUNDS]}
rounds=${2:-14}
latency=${LATENCY:-10}
py=${PYTHON:-python}
mkdir -p "$out"
echo "start $(date -u +%Y-%m-%dT%H:%M:%SZ) commit $(git rev-parse --short HEAD)" >> "$out/times.txt"
run() {  # run FILE -- asched bench run args...
  file=$1; shift
  uptime >> "$out/times.txt"
  "$py" -m asched bench run "$@" --sim-tls --no-quality --ceiling none --json "$out/$file.json" \
    > "$out/$file.log" 2>&1 || echo "$file failed (see $file.log)"
  tail -3 "$out/$file.log" | head -1
}
i=1
while [ "$i" -le "$rounds" ]; do
  run "asched-none-10000p-$i" scheduling-basic-5000n-10000p
  run "asched-${latency}ms-10000p-$i" scheduling-basic-5000n-10000p --extender-latency-ms "$latency"
  i=$((i + 1))
done
if [ "${KUBE:-1}" != 0 ]; then
  run "asched-${latency}ms-2000p-1" scheduling-basic-5000n-2000p --extender-latency-ms "$latency"
  run "kube-scheduler-${latency}ms-2000p-1" scheduling-basic-5000n-2000p --extender-latency-ms "$latency" \
    --scheduler kube-scheduler
fi
