#!/usr/bin/env bash
# Overhead of the lifetime profiler (`lupa lifetimes`) over a plain run: the CPU
# time (user + system) of the whole process, report included, best of ROUNDS,
# runs interleaved so all configurations see the same load.
#   scripts/lifetimes-overhead.sh                         GcLoad 20000 and Json
#   CONFIGS="vm:0.01 faithful:1" WORKLOADS="GcLoad:2000" scripts/lifetimes-overhead.sh
. "$(dirname "$0")/lib.sh"
ROUNDS=${ROUNDS:-3}
CONFIGS=${CONFIGS:-"vm:0.01 vm:1 faithful:0.01 faithful:1"}
WORKLOADS=${WORKLOADS:-"GcLoad:20000 BenchmarkRunner:Json:1:40"}
cargo build --release -q -p lupa-cli
lupa=${CARGO_TARGET_DIR:-target}/release/lupa
cpu_ms() { # command... -> user+system CPU milliseconds
  local TIMEFORMAT='%3U %3S' t
  t=$( { time "$@" >/dev/null 2>&1; } 2>&1 )
  awk -v t="$t" 'BEGIN { split(t, a, " "); printf "%d", (a[1] + a[2]) * 1000 }'
}
printf "%-28s %10s" workload run_ms
for c in $CONFIGS; do printf " %16s %8s" "${c}_ms" ratio; done
printf "\n"
for spec in $WORKLOADS; do
  IFS=: read -r -a args <<< "$spec"
  base=999999999
  declare -A best=()
  for c in $CONFIGS; do best[$c]=999999999; done
  for _ in $(seq "$ROUNDS"); do
    t=$(cpu_ms $lupa run "${args[@]}"); [ "$t" -lt "$base" ] && base=$t
    for c in $CONFIGS; do
      IFS=: read -r mode rate <<< "$c"
      t=$(cpu_ms $lupa lifetimes --mode "$mode" --rate "$rate" --format json -o - "${args[@]}")
      [ "$t" -lt "${best[$c]}" ] && best[$c]=$t
    done
  done
  printf "%-28s %10s" "${args[*]}" "$base"
  for c in $CONFIGS; do printf " %16s %8s" "${best[$c]}" "$(ratio "$base" "${best[$c]}")"; done
  printf "\n"
done
