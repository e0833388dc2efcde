#!/bin/sh
# Issue 14's figures, one command: this checkout against 24a9163 (the main of the day the
# issue was filed), side by side in one session on one machine, medians of RUNS runs.
#
#   sh bench/issue14.sh OUT [BASE_CHECKOUT]
#     OUT:           where every run's JSON and the summaries go
#     BASE_CHECKOUT: a checkout of 24a9163 (default: a worktree made under
#                    ~/.cache/asched/worktrees/24a9163 by bench/side_by_side.py)
#
# PART selects what runs (space-separated; default all): core, https, http, queue,
# genuine (kube-apiserver: asched new, asched base, kube-scheduler adaptive, the pipeline
# ceiling), scale (SchedulingBasic 50,000 nodes / 50,000 pods), sync (50,000 nodes,
# 500,000 pods). Every figure is printed as a markdown table into OUT/*.md. REP=k suffixes
# the genuine and scale files with -rk, for repeated runs.
set -eu
out=${1:?usage: sh bench/issue14.sh OUT [BASE_CHECKOUT]}
base=${2:-}
runs=${RUNS:-3}
parts=${PART:-"core https http queue genuine scale sync"}
py=${PYTHON:-python}
here=$(cd "$(dirname "$0")/.." && pwd)
mkdir -p "$out"
base_args=""
[ -n "$base" ] && base_args="--base-checkout $base"
side() {  # side NAME -- asched bench args...
  name=$1; shift
  echo "== $name $(date -u +%H:%M:%S)"
  # shellcheck disable=SC2086
  "$py" "$here/bench/side_by_side.py" --runs "$runs" --out "$out/$name" $base_args "$@" \
    | tee "$out/$name.md"
}
for part in $parts; do
  case $part in
    core)
      side core -- core --nodes 5000,50000 --seconds 4 --no-scalar ;;
    https)
      side sim-https -- run scheduling-basic-5000n-10000p --sim-tls --percentage 100 --ceiling none --no-quality ;;
    http)
      side sim-http -- run scheduling-basic-5000n-10000p --percentage 100 --ceiling none --no-quality ;;
    queue)
      echo "== queue $(date -u +%H:%M:%S)"
      against=${base:-$HOME/.cache/asched/worktrees/24a9163}
      PYTHONPATH=$here "$py" "$here/bench/queue_cost.py" --against "$against" \
        --json "$out/queue.json" | tee "$out/queue.md" ;;
    genuine)
      echo "== genuine $(date -u +%H:%M:%S)"
      against=${base:-$HOME/.cache/asched/worktrees/24a9163}
      for who in new base ks; do
        dir=$here; sched=asched; pct=100; ceiling=none
        [ "$who" = base ] && dir=$against
        [ "$who" = ks ] && { sched=kube-scheduler; pct=0; ceiling=pipeline; }
        (cd "$dir" && PYTHONPATH=$dir "$py" -m asched bench run scheduling-basic-5000n-10000p \
          --backend kube-apiserver --scheduler $sched --percentage $pct --ceiling $ceiling \
          --no-quality --json "$out/genuine-$who${REP:+-r$REP}.json" > "$out/genuine-$who${REP:+-r$REP}.log" 2>&1)
        tail -3 "$out/genuine-$who${REP:+-r$REP}.log"
      done ;;
    scale)
      echo "== scale $(date -u +%H:%M:%S)"
      PYTHONPATH=$here "$py" -m asched bench run scheduling-basic-50000n-50000p \
        --percentage 100 --ceiling none --no-quality --timeout 1800 \
        --json "$out/scale-50000n.json" --plot "$out/scale-50000n.png" > "$out/scale-50000n.log" 2>&1
      tail -3 "$out/scale-50000n.log" ;;
    sync)
      echo "== sync $(date -u +%H:%M:%S)"
      PYTHONPATH=$here "$py" "$here/bench/initial_sync.py" --sizes 0x0,50000x0,50000x500000 \
        --json "$out/sync.json" | tee "$out/sync.md" ;;
    *) echo "unknown part $part" >&2; exit 2 ;;
  esac
done
