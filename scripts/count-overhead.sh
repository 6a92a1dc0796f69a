#!/usr/bin/env bash
# Overhead of per-method counting (`lupa count`) over a plain run (`lupa bench`), per
# bundled benchmark: the benchmark's own timing of its iterations (best of ROUNDS),
# without and with the activation hooks of the counting profiler. The Compteur
# paper's table 4 reports 2% to 2524% for its per-method profiler.
. "$(dirname "$0")/lib.sh"
ROUNDS=${ROUNDS:-3}
BENCHES=${BENCHES:-"Richards:1:5 DeltaBlue:1:1000 Json:1:5 NBody:200:1 Havlak:1:1 CD:1:10 Bounce:1:100 List:1:100 Mandelbrot:1:500 Permute:1:100 Queens:1:100 Sieve:1:200 Storage:1:100 Towers:1:50"}
cargo build --release -q -p lupa-cli
lupa=${CARGO_TARGET_DIR:-target}/release/lupa
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
printf "%-11s %12s %12s %8s\n" bench run_us count_us overhead
for spec in $BENCHES; do
  IFS=: read -r name it inner <<< "$spec"
  a=$(best "$ROUNDS" bench_us $lupa "$name" "$it" "$inner")
  b=$(best "$ROUNDS" avg_us $lupa count -o "$tmp/p.json" --format json BenchmarkRunner "$name" "$it" "$inner")
  printf "%-11s %12s %12s %7.2fx\n" "$name" "$a" "$b" "$(ratio "$a" "$b")"
done
