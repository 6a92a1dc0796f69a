#!/usr/bin/env bash
# Measure what Lupa's observation points (send counter, activation-hook checks,
# sampling register) cost when nobody uses them: build the VM with and without
# them (feature lupa-vm/no-observe) and run the bundled benchmarks alternately,
# keeping the best of ROUNDS runs of each. Prints per-benchmark and geometric-mean ratios.
set -euo pipefail
cd "$(dirname "$0")/.."
ROUNDS=${ROUNDS:-5}
BENCHES=${BENCHES:-"Richards:1:10 DeltaBlue:1:1000 Json:1:10 NBody:300:1 Havlak:1:1 CD:1:20 Bounce:1:100 List:1:100 Mandelbrot:1:500 Permute:1:100 Queens:1:100 Sieve:1:200 Storage:1:100 Towers:1:50"}
cargo build --release -q -p lupa-cli --target-dir target/observe-on
cargo build --release -q -p lupa-cli --features lupa-vm/no-observe --target-dir target/observe-off
on=target/observe-on/release/lupa
off=target/observe-off/release/lupa
best() { # binary name iters inner
  local b=999999999999
  for _ in $(seq "$ROUNDS"); do
    local t
    t=$("$1" bench "$2" "$3" "$4" | sed -n 's/.*average: \([0-9]*\)us.*/\1/p' | tail -1)
    [ "$t" -lt "$b" ] && b=$t
  done
  echo "$b"
}
printf "%-11s %12s %12s %8s\n" bench with_us without_us ratio
logsum=0; n=0
for spec in $BENCHES; do
  IFS=: read -r name it inner <<< "$spec"
  a=$(best $on "$name" "$it" "$inner")
  b=$(best $off "$name" "$it" "$inner")
  r=$(awk -v a="$a" -v b="$b" 'BEGIN { printf "%.4f", a / b }')
  logsum=$(awk -v s="$logsum" -v r="$r" 'BEGIN { print s + log(r) }'); n=$((n + 1))
  printf "%-11s %12s %12s %8s\n" "$name" "$a" "$b" "$r"
done
awk -v s="$logsum" -v n="$n" 'BEGIN { printf "geometric mean ratio (with/without): %.4f\n", exp(s / n) }'
