#!/bin/sh
# Issue 16's figures: upstream's own scheduler_perf performance workloads, run from
# upstream's files unchanged, asched (100 % of nodes scored) then kube-scheduler v1.20.2
# (adaptive, its default) one right after the other per workload.
#
#   sh bench/scheduler_perf.sh UPSTREAM OUT [BACKEND]
#     UPSTREAM: a checkout's test/integration/scheduler_perf folder
#     OUT:      where the suite JSON and logs go (one pair per workload and scheduler)
#     BACKEND:  sim (default; served over HTTPS for both schedulers) or kube-apiserver
# Summarise with: python bench/scheduler_perf_table.py OUT --plot PNG
# (ASCHED names the command, e.g. ASCHED="python -m asched" from a checkout; WORKLOADS
# overrides the list: space-separated config:TestCase/Workload entries; REP=k suffixes the
# files with -rk for repeated runs, summarised as medians)
set -eu
upstream=${1:?usage: sh bench/scheduler_perf.sh UPSTREAM OUT [BACKEND]}
out=${2:?usage: sh bench/scheduler_perf.sh UPSTREAM OUT [BACKEND]}
backend=${3:-sim}
# kube-scheduler v1.20.2 talks to the simulator over HTTPS only (client-go sends no bearer
# token over plain HTTP): asched gets HTTPS too, so the pair is like for like
tls=""
[ "$backend" = sim ] && tls="--sim-tls"
mkdir -p "$out"
workloads=${WORKLOADS:-"misc:SchedulingBasic/5000Nodes_10000Pods
affinity:SchedulingPodAntiAffinity/5000Nodes_2000Pods
topology_spreading:TopologySpreading/5000Nodes_5000Pods
topology_spreading:PreferredTopologySpreading/5000Nodes_5000Pods
default_preemption:Unschedulable/5kNodes/100Init/10kPods
misc:SchedulingWithMixedChurn/5000Nodes_10000Pods
default_preemption:PreemptionAsync/5000Nodes
misc:SchedulingDaemonset/15000Nodes"}
for entry in $workloads; do
  config=${entry%%:*}
  workload=${entry#*:}
  slug=$(echo "$config-$workload-$backend" | tr '/' '_')${REP:+-r$REP}
  for scheduler in asched kube-scheduler; do
    percentage=0  # kube-scheduler at its default (adaptive); asched scores every node
    [ "$scheduler" = asched ] && percentage=100
    echo "== $config $workload $backend $scheduler $(date -u +%H:%M:%S)"
    ${ASCHED:-asched} bench suite "$upstream/$config/performance-config.yaml" \
      --labels performance --workload "$workload" --backend "$backend" \
      --scheduler "$scheduler" --percentage "$percentage" --no-quality $tls \
      --json "$out/$slug-$scheduler.json" > "$out/$slug-$scheduler.log" 2>&1 \
      || echo "   (failed: see $out/$slug-$scheduler.log)"
    grep -E "^$workload: " "$out/$slug-$scheduler.log" || tail -n 3 "$out/$slug-$scheduler.log"
  done
done
