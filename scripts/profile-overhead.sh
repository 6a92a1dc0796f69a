#!/usr/bin/env bash
# Overhead of the sampling profiler (`lupa profile`) over a plain run, per benchmark, with the JIT off and on.
#   MODE=cpu (default): the CPU time (user + system, every thread: the sampler's included) of the whole
#     process at each rate of RATES, runs paired and interleaved so both see the same load; the median of
#     ROUNDS paired ratios, with a 95% interval for it (distribution-free: needs ROUNDS >= 6; 21 give the 6th
#     and 16th ratios).
#   MODE=icount: instructions (cachegrind, exact on a shared machine) of `lupa profile --rate 1`, which takes
#     no tick in these runs, against `lupa run`: what a sampler costs the VM thread by being attached. With the
#     JIT on, both compile on the VM thread (`--jit-thread off`), so that both compile the same functions.
#   scripts/profile-overhead.sh
#   MODE=icount scripts/profile-overhead.sh
#   RATES="1000" BENCHES="Richards:1:10" JITS=off ROUNDS=9 scripts/profile-overhead.sh
. "$(dirname "$0")/lib.sh"
MODE=${MODE:-cpu}
ROUNDS=${ROUNDS:-5}
RATES=${RATES:-"1000 10000"}
JITS=${JITS:-"off on"}
if [ "$MODE" = icount ]; then
  BENCHES=${BENCHES:-"Richards:1:4 DeltaBlue:1:300 Json:1:8 Havlak:1:1"}
else
  # Sized so that each lasts about a second with the JIT on: on this machine a run of 100-200 ms varies by more
  # than the bars (a median of 15 pairs read -1.6% to +4% for one cell).
  BENCHES=${BENCHES:-"Richards:1:100 DeltaBlue:1:30000 Json:1:300 Havlak:1:1"}
fi
cargo build --release -q -p lupa-cli
lupa=${CARGO_TARGET_DIR:-target}/release/lupa
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

cpu_ms() { # command... -> user+system CPU milliseconds
  local TIMEFORMAT='%3U %3S' t
  t=$( { time "$@" >/dev/null 2>&1; } 2>&1 )
  awk -v t="$t" 'BEGIN { split(t, a, " "); printf "%d", (a[1] + a[2]) * 1000 }'
}
icount() { # command... -> instructions
  valgrind --tool=cachegrind --cache-sim=no --cachegrind-out-file="$out/cg" "$@" 2>&1 >/dev/null |
    sed -n 's/.*I *refs: *\([0-9,]*\).*/\1/p' | tr -d ,
}
# The median and a 95% interval for it that assumes nothing of the ratios' distribution: the k-th smallest and
# k-th largest of the n, k the largest with P(Binomial(n, 1/2) < k) <= 2.5% (n = 21: the 6th; fewer than 6
# ratios have none, and the smallest and largest are shown).
median_ci() {
  printf "%s\n" "$@" | sort -g | awk '{ v[NR] = $1 } END {
    n = NR; k = 1; c = 0; p = 0.5 ^ n
    for (i = 0; i < n; i++) { c += p; if (c > 0.025) break; k = i + 1; p = p * (n - i) / (i + 1) }
    printf "%s [%s, %s]", v[int((n + 1) / 2)], v[k], v[n - k + 1] }'
}
median() { median_ci "$@" | cut -d' ' -f1; }

for jit in $JITS; do
  for spec in $BENCHES; do
    IFS=: read -r name it inner <<< "$spec"
    # Instruction counts compile on the VM thread: a compiler thread compiles as much as it gets to before the
    # run ends, which differs from run to run.
    jitargs=(--jit "$jit")
    if [ "$MODE" = icount ] && [ "$jit" = on ]; then jitargs+=(--jit-thread off); fi
    run=(run "${jitargs[@]}" BenchmarkRunner "$name" "$it" "$inner")
    prof() { echo profile "${jitargs[@]}" --rate "$1" --format text -o "$out/p.txt" BenchmarkRunner "$name" "$it" "$inner"; }
    if [ "$MODE" = icount ]; then
      # shellcheck disable=SC2046 # prof's words are the arguments
      a=$(icount $lupa "${run[@]}"); b=$(icount $lupa $(prof 1))
      printf "jit %-3s %-10s run %14s  attached %14s  %+.2f%%\n" "$jit" "$name" "$a" "$b" \
        "$(awk -v a="$a" -v b="$b" 'BEGIN { print (b / a - 1) * 100 }')"
      continue
    fi
    declare -A ratios=()
    bases=()
    for _ in $(seq "$ROUNDS"); do
      a=$(cpu_ms $lupa "${run[@]}"); bases+=("$a")
      for r in $RATES; do
        # shellcheck disable=SC2046
        b=$(cpu_ms $lupa $(prof "$r"))
        ratios[$r]="${ratios[$r]:-} $(ratio "$a" "$b")"
      done
    done
    printf "jit %-3s %-10s run %6s ms" "$jit" "$name" "$(median "${bases[@]}")"
    for r in $RATES; do
      # shellcheck disable=SC2086 # the ratios are words
      printf "  %s Hz x%s" "$r" "$(median_ci ${ratios[$r]})"
    done
    printf "\n"
    unset ratios
  done
done
