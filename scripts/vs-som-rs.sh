#!/usr/bin/env bash
# Lupa against the faster som-rs interpreter (smarr/som-rs: som-interpreter-bc and
# som-interpreter-ast, built locally, never committed) on SOM's own Are-We-Fast-Yet
# harness with the same core-lib (SOM-st/SOM): CPU time (user + system) of each VM,
# best of ROUNDS, the VMs' runs interleaved (a som-rs interpreter that fails a benchmark
# is left out of it and shown as -). Prints lupa / faster som-rs per benchmark
# and the geometric mean.
#   scripts/vs-som-rs.sh LUPA SOMRS_RELEASE_DIR SOM_CHECKOUT
#   BENCHES="Json:1:40 Havlak:1:1500" ROUNDS=5 scripts/vs-som-rs.sh ...
#   INTERP=1 scripts/vs-som-rs.sh ...   also runs Lupa's interpreter (`--jit off`) in the same rounds and prints
#                                       the JIT's time over it (interp_ms, jit/int; the issue's "no benchmark slower
#                                       than Lupa's own interpreter")
# (BENCHES: NAME:ITERATIONS:INNER, Harness's arguments; Havlak verifies only 1, 15, 150,
# 1500 or 15000 inner iterations, Mandelbrot 1, 500 or 750, NBody 1 or 250000.)
set -euo pipefail
lupa=$(realpath "${1:?usage: vs-som-rs.sh LUPA SOMRS_RELEASE_DIR SOM_CHECKOUT}")
somrs=$(realpath "${2:?usage: vs-som-rs.sh LUPA SOMRS_RELEASE_DIR SOM_CHECKOUT}")
som=$(realpath "${3:?usage: vs-som-rs.sh LUPA SOMRS_RELEASE_DIR SOM_CHECKOUT}")
ROUNDS=${ROUNDS:-5}
INTERP=${INTERP:-0}
BENCHES=${BENCHES:-"Bounce:1:1500 CD:1:100 DeltaBlue:1:12000 Havlak:1:150 Json:1:40 List:1:1500 Mandelbrot:1:500 NBody:1:250000 Permute:1:1000 Queens:1:1000 Richards:1:20 Sieve:1:3000 Storage:1:1000 Towers:1:600"}
awfy=$som/Examples/AreWeFastYet
# Each benchmark's class path (set in the loop): AWFY first (its Core has its own Vector, Dictionary...), the
# benchmark's own directory when it has one, then core-lib, as SOM's rebench.conf. One path with every benchmark's
# directory made som-rs's interpreters panic on CD and Richards (som-rs 7c214d5).
log=$(mktemp); trap 'rm -f "$log"' EXIT
cpu_ms() { # command... -> user+system CPU milliseconds, or 999999999 when the run failed
  local TIMEFORMAT='%3U %3S' t status
  t=$( { time "$@" >"$log" 2>&1; } 2>&1 ) && status=0 || status=$?
  if [ "$status" -ne 0 ] || grep -q ERROR "$log"; then
    echo "run failed ($status): $* : $(tail -c 200 "$log")" >&2; echo 999999999; return
  fi
  awk -v t="$t" 'BEGIN { split(t, a, " "); printf "%d", (a[1] + a[2]) * 1000 }'
}
show() { if [ "$1" -eq 999999999 ]; then echo -; else echo "$1"; fi; } # a VM left out: -
printf "%-11s %9s %9s %9s %8s" bench lupa_ms bc_ms ast_ms ratio
[ "$INTERP" = 1 ] && printf " %9s %8s" interp_ms jit/int
printf "\n"
logsum=0; n=0; ilogsum=0
for spec in $BENCHES; do
  IFS=: read -r name it inner <<< "$spec"
  dirs=("$awfy" "$awfy/Core")
  [ -d "$awfy/$name" ] && dirs+=("$awfy/$name")
  dirs+=("$som/Smalltalk")
  cp=$(IFS=:; echo "${dirs[*]}")
  l=999999999; b=999999999; a=999999999; i=999999999
  # A run that fails would time its error: check each VM once first. Lupa must run; a som-rs interpreter that fails
  # (som-rs's bc interpreter panics on some benchmarks) is left out, and the other one is the comparison.
  run_bc=1; run_ast=1
  if ! out=$("$lupa" --no-bundled -cp "$cp" Harness "$name" "$it" "$inner" 2>&1) || [[ "$out" == *ERROR* ]]; then
    echo "$name: failed on lupa: ${out: -200}" >&2; continue
  fi
  if ! out=$("$somrs/som-interpreter-bc" -c "${dirs[@]}" -- Harness "$name" "$it" "$inner" 2>&1) || [[ "$out" == *ERROR* ]]; then
    echo "$name: som-interpreter-bc failed, compared with som-interpreter-ast only: ${out: -200}" >&2; run_bc=0
  fi
  if ! out=$("$somrs/som-interpreter-ast" -c "${dirs[@]}" -- Harness "$name" "$it" "$inner" 2>&1) || [[ "$out" == *ERROR* ]]; then
    echo "$name: som-interpreter-ast failed: ${out: -200}" >&2; run_ast=0
  fi
  if [ "$run_bc" -eq 0 ] && [ "$run_ast" -eq 0 ]; then
    echo "$name: both som-rs interpreters failed; left out" >&2; continue
  fi
  for _ in $(seq "$ROUNDS"); do
    t=$(cpu_ms "$lupa" --no-bundled -cp "$cp" Harness "$name" "$it" "$inner"); [ "$t" -lt "$l" ] && l=$t
    if [ "$INTERP" = 1 ]; then
      t=$(cpu_ms "$lupa" --jit off --no-bundled -cp "$cp" Harness "$name" "$it" "$inner"); [ "$t" -lt "$i" ] && i=$t
    fi
    if [ "$run_bc" -eq 1 ]; then
      t=$(cpu_ms "$somrs/som-interpreter-bc" -c "${dirs[@]}" -- Harness "$name" "$it" "$inner"); [ "$t" -lt "$b" ] && b=$t
    fi
    if [ "$run_ast" -eq 1 ]; then
      t=$(cpu_ms "$somrs/som-interpreter-ast" -c "${dirs[@]}" -- Harness "$name" "$it" "$inner"); [ "$t" -lt "$a" ] && a=$t
    fi
  done
  best=$(( b < a ? b : a ))
  if [ "$l" -eq 999999999 ] || [ "$best" -eq 999999999 ]; then
    echo "$name: every timed run of lupa or of both som-rs interpreters failed; left out" >&2; continue
  fi
  q=$(awk -v l="$l" -v s="$best" 'BEGIN { printf "%.3f", l / s }')
  printf "%-11s %9s %9s %9s %8s" "$name" "$l" "$(show "$b")" "$(show "$a")" "$q"
  if [ "$INTERP" = 1 ]; then
    qi=$(awk -v l="$l" -v s="$i" 'BEGIN { printf "%.3f", l / s }')
    printf " %9s %8s" "$(show "$i")" "$qi"
    ilogsum=$(awk -v s="$ilogsum" -v q="$qi" 'BEGIN { print s + log(q) }')
  fi
  printf "\n"
  logsum=$(awk -v s="$logsum" -v q="$q" 'BEGIN { print s + log(q) }'); n=$((n + 1))
done
awk -v s="$logsum" -v n="$n" 'BEGIN { printf "geometric mean: %.3f\n", exp(s / n) }'
[ "$INTERP" = 1 ] && awk -v s="$ilogsum" -v n="$n" 'BEGIN { printf "geometric mean, JIT over interpreter: %.3f\n", exp(s / n) }'
exit 0
