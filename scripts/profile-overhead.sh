#!/usr/bin/env bash
# Overhead of the sampling profiler (`lupa profile`) over a plain run, per bundled
# benchmark: the CPU time (user + system, every thread: the sampler's included) of
# the whole process, best of ROUNDS, runs interleaved so both see the same load.
#   scripts/profile-overhead.sh                  at 1 kHz and 10 kHz
#   RATES="1000" BENCHES="Richards:1:10" scripts/profile-overhead.sh
. "$(dirname "$0")/lib.sh"
ROUNDS=${ROUNDS:-5}
RATES=${RATES:-"1000 10000"}
BENCHES=${BENCHES:-$BENCH_SIZES_TIME}
cargo build --release -q -p lupa-cli
lupa=target/release/lupa
cpu_ms() { # command... -> user+system CPU milliseconds
  local TIMEFORMAT='%3U %3S' t
  t=$( { time "$@" >/dev/null 2>&1; } 2>&1 )
  awk -v t="$t" 'BEGIN { split(t, a, " "); printf "%d", (a[1] + a[2]) * 1000 }'
}
printf "%-11s %10s" bench run_ms
for r in $RATES; do printf " %12s %8s" "${r}Hz_ms" ratio; done
printf "\n"
declare -A logsum
for spec in $BENCHES; do
  IFS=: read -r name it inner <<< "$spec"
  base=999999999
  declare -A best=()
  for r in $RATES; do best[$r]=999999999; done
  for _ in $(seq "$ROUNDS"); do
    t=$(cpu_ms $lupa run BenchmarkRunner "$name" "$it" "$inner"); [ "$t" -lt "$base" ] && base=$t
    for r in $RATES; do
      t=$(cpu_ms $lupa profile --rate "$r" --format text BenchmarkRunner "$name" "$it" "$inner")
      [ "$t" -lt "${best[$r]}" ] && best[$r]=$t
    done
  done
  printf "%-11s %10s" "$name" "$base"
  for r in $RATES; do
    q=$(ratio "$base" "${best[$r]}")
    printf " %12s %8s" "${best[$r]}" "$q"
    logsum[$r]=$(awk -v s="${logsum[$r]:-0}" -v q="$q" 'BEGIN { print s + log(q) }')
  done
  printf "\n"
  n=$(( ${n:-0} + 1 ))
done
for r in $RATES; do
  awk -v s="${logsum[$r]}" -v n="$n" -v r="$r" 'BEGIN { printf "geometric mean at %s Hz: %.4f\n", r, exp(s / n) }'
done
