#!/bin/sh
# Upstream's own scheduler_perf performance workloads, run from upstream's files unchanged,
# asched (100 % of nodes scored) then kube-scheduler v1.37 (adaptive, its default) one
# right after the other per workload.
#
#   sh bench/scheduler_perf.sh OUT [BACKEND] [UPSTREAM]
#     OUT:      where the suite JSON and logs go (one pair per workload and scheduler)
#     BACKEND:  sim (default; served over HTTPS for both schedulers) or kube-apiserver
#     UPSTREAM: a test/integration/scheduler_perf folder; default: the one of
#               k8s.io/kubernetes v1.37 in the Go module cache the provisioner fills
#               (python -m asched.tools.backends.provision)
# Summarise with: python bench/scheduler_perf_table.py OUT --plot PNG
# (ASCHED names the command, e.g. ASCHED="python -m asched" from a checkout; WORKLOADS
# overrides the list: space-separated config:TestCase/Workload entries; REP=k suffixes the
# files with -rk for repeated runs, summarised as medians)
#
# The default list is every `performance` workload of misc, affinity, topology_spreading,
# default_preemption and volumes that both schedulers run, less the variants that only
# switch kube-scheduler internals (_AsyncAPICallsEnabled, _AsyncPreemptionEnabled: the
# same pods, the same asched run). podgroup/ and dra/ need gates asched does not switch yet.
set -eu
out=${1:?usage: sh bench/scheduler_perf.sh OUT [BACKEND] [UPSTREAM]}
backend=${2:-sim}
py=${PYTHON:-python3}
upstream=${3:-$($py -c 'from asched.tools.backends.provision import go_cache_dirs, KUBERNETES_VERSION as v
print(go_cache_dirs()[0] / f"k8s.io/kubernetes@{v}" / "test/integration/scheduler_perf")')}
[ -d "$upstream" ] || { echo "no $upstream: run python -m asched.tools.backends.provision first" >&2; exit 2; }
tls=""
[ "$backend" = sim ] && tls="--sim-tls"  # client-go sends no token over plain HTTP
mkdir -p "$out"
workloads=${WORKLOADS:-"misc:SchedulingBasic/5000Nodes_10000Pods
misc:SchedulingBasic/5000Nodes_50000Pods
misc:SchedulingDaemonset/15000Nodes
misc:SchedulingWithMixedChurn/5000Nodes_10000Pods
misc:SchedulingWhileGated/1Node_10000GatedPods
misc:SchedulingDeletedPodsWithFinalizers/5000Node_5000DeletingPods
affinity:SchedulingPodAntiAffinity/5000Nodes_2000Pods
affinity:SchedulingPodMatchingAntiAffinity/5000Nodes_5000Pods
affinity:SchedulingPodAffinity/5000Nodes_5000Pods
affinity:SchedulingPreferredPodAffinity/5000Nodes_5000Pods
affinity:SchedulingPreferredPodAntiAffinity/5000Nodes_5000Pods
affinity:SchedulingNodeAffinity/5000Nodes_10000Pods
affinity:MixedSchedulingBasePod/5000Nodes_5000Pods
affinity:SchedulingRequiredPodAntiAffinityWithNSSelector/5000Nodes_2000Pods
affinity:SchedulingPreferredAntiAffinityWithNSSelector/5000Nodes_2000Pods
affinity:SchedulingRequiredPodAffinityWithNSSelector/5000Nodes_2000Pods
affinity:SchedulingPreferredAffinityWithNSSelector/5000Nodes_5000Pods
affinity:SchedulingGatedPodsWithPodAffinityImpactForThroughput/1Node_10000GatedPods
topology_spreading:TopologySpreading/5000Nodes_5000Pods
topology_spreading:PreferredTopologySpreading/5000Nodes_5000Pods
topology_spreading:DefaultTopologySpreading/5000Nodes_50000Pods
topology_spreading:SchedulingWithNodeInclusionPolicy/5000Nodes
default_preemption:PreemptionAsync/5000Nodes
default_preemption:Unschedulable/5kNodes/100Init/10kPods
default_preemption:Unschedulable/5kNodes/20kInit/10kPods
volumes:SchedulingSecrets/5000Nodes_10000Pods
volumes:SchedulingInTreePVs/5000Nodes_2000Pods
volumes:SchedulingMigratedInTreePVs/5000Nodes_5000Pods
volumes:SchedulingCSIPVs/5000Nodes_5000Pods
volumes:PreemptionPVs/1000Nodes"}
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
