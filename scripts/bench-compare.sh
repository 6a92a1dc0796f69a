#!/usr/bin/env bash
# Compare two lupa binaries on the bundled benchmarks.
#   scripts/bench-compare.sh OLD NEW             wall time, best of ROUNDS (alternating)
#   MODE=icount scripts/bench-compare.sh OLD NEW instructions executed (cachegrind; exact,
#                                                insensitive to machine load)
# OLD_ARGS / NEW_ARGS add arguments to one side's `bench` command (e.g. NEW_ARGS="--jit off").
# Prints per-benchmark NEW/OLD ratios and their geometric mean. Build an old binary with e.g.
#   git worktree add /tmp/old REV && cargo build --release -p lupa-cli --manifest-path /tmp/old/Cargo.toml
old=$(realpath "${1:?usage: bench-compare.sh OLD_LUPA NEW_LUPA}")
new=$(realpath "${2:?usage: bench-compare.sh OLD_LUPA NEW_LUPA}")
. "$(dirname "$0")/lib.sh"
MODE=${MODE:-time}
ROUNDS=${ROUNDS:-5}
if [ "$MODE" = icount ]; then
  BENCHES=${BENCHES:-$BENCH_SIZES_ICOUNT}
  measure() { bench_icount "$@"; }
  ROUNDS=1
else
  BENCHES=${BENCHES:-$BENCH_SIZES_TIME}
  measure() { bench_us "$@"; }
fi
printf "%-11s %14s %14s %8s\n" bench old new new/old
for spec in $BENCHES; do
  IFS=: read -r name it inner <<< "$spec"
  a=999999999999999; b=999999999999999
  for _ in $(seq "$ROUNDS"); do # alternate, so that both see the same machine load
    t=$(measure "$old" "$name" "$it" "$inner" "${OLD_ARGS:-}"); [ "$t" -lt "$a" ] && a=$t
    t=$(measure "$new" "$name" "$it" "$inner" "${NEW_ARGS:-}"); [ "$t" -lt "$b" ] && b=$t
  done
  r=$(ratio "$a" "$b")
  geomean_add "$r"
  printf "%-11s %14s %14s %8s\n" "$name" "$a" "$b" "$r"
done
geomean_print new/old
