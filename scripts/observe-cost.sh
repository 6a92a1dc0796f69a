#!/usr/bin/env bash
# Measure what Lupa's observation points (send counter, activation-hook checks,
# sampling register) cost when nobody uses them: build the VM with and without
# them (feature lupa-vm/no-observe) and run the bundled benchmarks alternately,
# keeping the best of ROUNDS runs of each. Prints per-benchmark and geometric-mean ratios.
. "$(dirname "$0")/lib.sh"
ROUNDS=${ROUNDS:-5}
BENCHES=${BENCHES:-"Richards:1:10 DeltaBlue:1:1000 Json:1:10 NBody:300:1 Havlak:1:1 CD:1:20 Bounce:1:100 List:1:100 Mandelbrot:1:500 Permute:1:100 Queens:1:100 Sieve:1:200 Storage:1:100 Towers:1:50"}
cargo build --release -q -p lupa-cli --target-dir target/observe-on
cargo build --release -q -p lupa-cli --features lupa-vm/no-observe --target-dir target/observe-off
on=target/observe-on/release/lupa
off=target/observe-off/release/lupa
printf "%-11s %12s %12s %8s\n" bench with_us without_us ratio
for spec in $BENCHES; do
  IFS=: read -r name it inner <<< "$spec"
  a=$(best "$ROUNDS" bench_us $on "$name" "$it" "$inner")
  b=$(best "$ROUNDS" bench_us $off "$name" "$it" "$inner")
  r=$(ratio "$b" "$a")
  geomean_add "$r"
  printf "%-11s %12s %12s %8s\n" "$name" "$a" "$b" "$r"
done
geomean_print "(with/without)"
