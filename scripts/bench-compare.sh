#!/usr/bin/env bash
# Compare two lupa binaries on the bundled benchmarks.
#   scripts/bench-compare.sh OLD NEW             wall time, best of ROUNDS (alternating)
#   MODE=icount scripts/bench-compare.sh OLD NEW instructions executed (cachegrind; exact,
#                                                insensitive to machine load)
# Prints per-benchmark NEW/OLD ratios and their geometric mean. Build an old binary with e.g.
#   git worktree add /tmp/old REV && cargo build --release -p lupa-cli --manifest-path /tmp/old/Cargo.toml
set -euo pipefail
old=${1:?usage: bench-compare.sh OLD_LUPA NEW_LUPA}
new=${2:?usage: bench-compare.sh OLD_LUPA NEW_LUPA}
MODE=${MODE:-time}
ROUNDS=${ROUNDS:-5}
if [ "$MODE" = icount ]; then
  DEFAULT="Richards:1:2 DeltaBlue:1:200 Json:1:2 NBody:5000:1 Havlak:1:1 CD:1:10 Bounce:1:20 List:1:20 Mandelbrot:1:100 Permute:1:20 Queens:1:20 Sieve:1:40 Storage:1:20 Towers:1:10"
else
  DEFAULT="Richards:1:10 DeltaBlue:1:1000 Json:1:10 NBody:1:250000 Havlak:1:1 CD:10:10 Bounce:1:100 List:1:100 Mandelbrot:1:500 Permute:1:100 Queens:1:100 Sieve:1:200 Storage:1:100 Towers:1:50"
fi
BENCHES=${BENCHES:-$DEFAULT}
measure() { # binary name iters inner
  if [ "$MODE" = icount ]; then
    local out
    out=$(mktemp)
    valgrind --tool=cachegrind --cache-sim=no --cachegrind-out-file=/dev/null "$1" bench "$2" "$3" "$4" \
      2>"$out" >/dev/null
    sed -n 's/.*I *refs: *\([0-9,]*\).*/\1/p' "$out" | tr -d ,
    rm -f "$out"
  else
    "$1" bench "$2" "$3" "$4" | sed -n 's/.*average: \([0-9]*\)us.*/\1/p' | tail -1
  fi
}
printf "%-11s %14s %14s %8s\n" bench old new new/old
logsum=0; n=0
for spec in $BENCHES; do
  IFS=: read -r name it inner <<< "$spec"
  a=999999999999999; b=999999999999999
  rounds=$ROUNDS; [ "$MODE" = icount ] && rounds=1
  for _ in $(seq "$rounds"); do
    t=$(measure "$old" "$name" "$it" "$inner"); [ "$t" -lt "$a" ] && a=$t
    t=$(measure "$new" "$name" "$it" "$inner"); [ "$t" -lt "$b" ] && b=$t
  done
  r=$(awk -v a="$a" -v b="$b" 'BEGIN { printf "%.4f", b / a }')
  logsum=$(awk -v s="$logsum" -v r="$r" 'BEGIN { print s + log(r) }'); n=$((n + 1))
  printf "%-11s %14s %14s %8s\n" "$name" "$a" "$b" "$r"
done
awk -v s="$logsum" -v n="$n" 'BEGIN { printf "geometric mean new/old: %.4f\n", exp(s / n) }'
