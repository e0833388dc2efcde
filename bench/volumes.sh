#!/bin/sh
# Issue 11's volume benchmarks, side by side in one session: asched (100 % of nodes scored)
# and kube-scheduler v1.37 (adaptive, its default) on SchedulingBasic and the volume workloads, on the simulator
# and on the genuine kube-apiserver (with kube-controller-manager's PV controller for the
# StatefulSet workload). Summarise with: python bench/compare.py OUT
#
#   sh bench/volumes.sh OUT [RUNS] [BACKENDS]     e.g. sh bench/volumes.sh bench/results/x 1 "sim"
# (ASCHED names the command, e.g. ASCHED="python -m asched" from a checkout; WORKLOADS the
# workloads, space-separated, names or files; TIMEOUT the seconds each measured phase may take)
set -eu
out=${1:?usage: sh bench/volumes.sh OUT [RUNS] [BACKENDS]}
runs=${2:-1}
backends=${3:-"sim kube-apiserver"}
mkdir -p "$out"
workloads=${WORKLOADS:-"scheduling-basic-5000n-10000p volumes-intree-5000n-1000i-2000p volumes-migrated-5000n-5000i-5000p volumes-csi-5000n-5000i-5000p statefulset-local-5000n-2pv-5000p"}
for backend in $backends; do
  for workload in $workloads; do
    for scheduler in asched kube-scheduler; do
      r=1
      while [ "$r" -le "$runs" ]; do
        name=$(basename "$workload" .yaml)
        json="$out/$name-$backend-$scheduler-r$r.json"
        percentage=0  # kube-scheduler at its default (adaptive); asched scores every node
        [ "$scheduler" = asched ] && percentage=100
        echo "== $workload $backend $scheduler run $r"
        ${ASCHED:-asched} bench run "$workload" --backend "$backend" --scheduler "$scheduler" \
          --percentage "$percentage" --ceiling none --no-quality --json "$json" ${TIMEOUT:+--timeout "$TIMEOUT"} \
          > "$out/$name-$backend-$scheduler-r$r.log" 2>&1 || echo "   (failed: see the log)"
        tail -n 4 "$out/$name-$backend-$scheduler-r$r.log" | head -n 2
        r=$((r + 1))
      done
    done
  done
done
