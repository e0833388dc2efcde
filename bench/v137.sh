#!/bin/sh
# Every comparison of bench/RESULTS.md against kube-scheduler v1.37, one section after the
# other on one machine (nothing else running), each pair of runs side by side:
#
#   sh bench/v137.sh OUT [SECTION...]
#     sections: sim (upstream's performance workloads on the simulator over HTTPS),
#               apiserver (SchedulingBasic, SchedulingPodAntiAffinity, TopologySpreading,
#               PreemptionAsync at 5,000 nodes on the genuine kube-apiserver v1.37, and
#               asched's SchedulingBasic against the bind ceiling), extenders (2 ms and
#               10 ms, interleaved with no extender), gangs, volumes; default: all
# Summaries: python bench/scheduler_perf_table.py OUT/sim (and OUT/apiserver),
# python bench/extenders.py OUT/extenders-10ms, python bench/compare.py OUT/volumes.
set -eu
out=${1:?usage: sh bench/v137.sh OUT [SECTION...]}
shift
sections=${*:-sim apiserver extenders gangs volumes}
export ASCHED=${ASCHED:-"python -m asched"} PYTHON=${PYTHON:-python}
mkdir -p "$out"
echo "start $(date -u +%Y-%m-%dT%H:%M:%SZ) commit $(git rev-parse --short HEAD) $(nproc) cores" >> "$out/times.txt"
for section in $sections; do
  echo "== section $section $(date -u +%H:%M:%S)" | tee -a "$out/times.txt"
  case $section in
    sim) sh bench/scheduler_perf.sh "$out/sim" sim ;;
    apiserver)
      WORKLOADS="misc:SchedulingBasic/5000Nodes_10000Pods
affinity:SchedulingPodAntiAffinity/5000Nodes_2000Pods
topology_spreading:TopologySpreading/5000Nodes_5000Pods
default_preemption:PreemptionAsync/5000Nodes" sh bench/scheduler_perf.sh "$out/apiserver" kube-apiserver
      upstream=$($PYTHON -c 'from asched.tools.backends.provision import go_cache_dirs, KUBERNETES_VERSION as v
print(go_cache_dirs()[0] / f"k8s.io/kubernetes@{v}" / "test/integration/scheduler_perf")')
      mkdir -p "$out/ceiling"
      $ASCHED bench suite "$upstream/misc/performance-config.yaml" --labels performance \
        --workload SchedulingBasic/5000Nodes_10000Pods --backend kube-apiserver \
        --scheduler asched --percentage 100 --no-quality --ceiling bind \
        --json "$out/ceiling/asched-basic.json" > "$out/ceiling/asched-basic.log" 2>&1 \
        || echo "   (failed: see $out/ceiling/asched-basic.log)"
      tail -n 4 "$out/ceiling/asched-basic.log" ;;
    extenders)
      LATENCY=10 sh bench/extender_series.sh "$out/extenders-10ms" "${ROUNDS:-5}"
      LATENCY=2 sh bench/extender_series.sh "$out/extenders-2ms" "${ROUNDS:-5}" ;;
    gangs)
      mkdir -p "$out/gangs"
      for workload in gang-throughput-5000n-1000x8 gang-contention-100n-12x50; do
        for scheduler in asched kube-scheduler; do
          echo "== $workload $scheduler $(date -u +%H:%M:%S)"
          $ASCHED bench run "$workload" --scheduler "$scheduler" --sim-tls --no-quality \
            --ceiling none --json "$out/gangs/$workload-$scheduler.json" \
            > "$out/gangs/$workload-$scheduler.log" 2>&1 || echo "   (failed: see the log)"
          grep -E "^Gangs:|bound .* measured pods" "$out/gangs/$workload-$scheduler.log" || true
        done
      done ;;
    volumes) sh bench/volumes.sh "$out/volumes" 1 "sim kube-apiserver" ;;
    *) echo "unknown section $section" >&2; exit 2 ;;
  esac
done
echo "end $(date -u +%Y-%m-%dT%H:%M:%SZ)" >> "$out/times.txt"
