#!/usr/bin/env bash
# Lupa against the faster som-rs interpreter (smarr/som-rs: som-interpreter-bc and
# som-interpreter-ast, built locally, never committed) on SOM's own Are-We-Fast-Yet
# harness with the same core-lib (SOM-st/SOM): CPU time (user + system) of each VM,
# best of ROUNDS, the VMs' runs interleaved. Prints lupa / faster som-rs per benchmark
# and the geometric mean.
#   scripts/vs-som-rs.sh LUPA SOMRS_RELEASE_DIR SOM_CHECKOUT
#   BENCHES="Json:1:40 Havlak:1:1500" ROUNDS=5 scripts/vs-som-rs.sh ...
# (BENCHES: NAME:ITERATIONS:INNER, Harness's arguments; Havlak verifies only 1, 15, 150,
# 1500 or 15000 inner iterations, Mandelbrot 1, 500 or 750, NBody 1 or 250000.)
set -euo pipefail
lupa=$(realpath "${1:?usage: vs-som-rs.sh LUPA SOMRS_RELEASE_DIR SOM_CHECKOUT}")
somrs=$(realpath "${2:?usage: vs-som-rs.sh LUPA SOMRS_RELEASE_DIR SOM_CHECKOUT}")
som=$(realpath "${3:?usage: vs-som-rs.sh LUPA SOMRS_RELEASE_DIR SOM_CHECKOUT}")
ROUNDS=${ROUNDS:-5}
BENCHES=${BENCHES:-"Bounce:1:1500 CD:1:100 DeltaBlue:1:12000 Havlak:1:150 Json:1:40 List:1:1500 Mandelbrot:1:500 NBody:1:250000 Permute:1:1000 Queens:1:1000 Richards:1:20 Sieve:1:3000 Storage:1:1000 Towers:1:600"}
awfy=$som/Examples/AreWeFastYet
# AWFY first (its Core has its own Vector, Dictionary...), then core-lib, as SOM's rebench.conf.
dirs=("$awfy" "$awfy/Core" "$awfy/CD" "$awfy/DeltaBlue" "$awfy/Havlak" "$awfy/Json" "$awfy/NBody" "$awfy/Richards" "$som/Smalltalk")
cp=$(IFS=:; echo "${dirs[*]}")
log=$(mktemp); trap 'rm -f "$log"' EXIT
cpu_ms() { # command... -> user+system CPU milliseconds, or 999999999 when the run failed
  local TIMEFORMAT='%3U %3S' t status
  t=$( { time "$@" >"$log" 2>&1; } 2>&1 ) && status=0 || status=$?
  if [ "$status" -ne 0 ] || grep -q ERROR "$log"; then
    echo "run failed ($status): $* : $(tail -c 200 "$log")" >&2; echo 999999999; return
  fi
  awk -v t="$t" 'BEGIN { split(t, a, " "); printf "%d", (a[1] + a[2]) * 1000 }'
}
printf "%-11s %9s %9s %9s %8s\n" bench lupa_ms bc_ms ast_ms ratio
logsum=0; n=0
for spec in $BENCHES; do
  IFS=: read -r name it inner <<< "$spec"
  l=999999999; b=999999999; a=999999999
  # A run that fails would time its error: check each VM once first.
  for vm in "$lupa --no-bundled -cp $cp" "$somrs/som-interpreter-bc -c ${dirs[*]} --" "$somrs/som-interpreter-ast -c ${dirs[*]} --"; do
    # shellcheck disable=SC2086
    if ! out=$($vm Harness "$name" "$it" "$inner" 2>&1) || [[ "$out" == *ERROR* ]]; then
      echo "$name: failed on ${vm%% *}: ${out: -200}" >&2; continue 2
    fi
  done
  for _ in $(seq "$ROUNDS"); do
    t=$(cpu_ms "$lupa" --no-bundled -cp "$cp" Harness "$name" "$it" "$inner"); [ "$t" -lt "$l" ] && l=$t
    t=$(cpu_ms "$somrs/som-interpreter-bc" -c "${dirs[@]}" -- Harness "$name" "$it" "$inner"); [ "$t" -lt "$b" ] && b=$t
    t=$(cpu_ms "$somrs/som-interpreter-ast" -c "${dirs[@]}" -- Harness "$name" "$it" "$inner"); [ "$t" -lt "$a" ] && a=$t
  done
  best=$(( b < a ? b : a ))
  q=$(awk -v l="$l" -v s="$best" 'BEGIN { printf "%.3f", l / s }')
  printf "%-11s %9s %9s %9s %8s\n" "$name" "$l" "$b" "$a" "$q"
  logsum=$(awk -v s="$logsum" -v q="$q" 'BEGIN { print s + log(q) }'); n=$((n + 1))
done
awk -v s="$logsum" -v n="$n" 'BEGIN { printf "geometric mean: %.3f\n", exp(s / n) }'
