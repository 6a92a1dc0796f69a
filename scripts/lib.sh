# Shared helpers of Lupa's measurement scripts; source it: `. "$(dirname "$0")/lib.sh"`.
# It moves to the repository root and defines:
#   BENCH_SIZES_TIME / BENCH_SIZES_ICOUNT   the 14 bundled benchmarks as NAME:ITERATIONS:INNER
#   avg_us CMD...                           the average iteration time (µs) a benchmark run prints
#   bench_us LUPA NAME IT INNER [ARGS]             the same for `LUPA bench NAME IT INNER`
#   bench_icount LUPA NAME IT INNER [ARGS]         instructions executed (cachegrind; exact, load-insensitive)
#   best N CMD...                           the smallest of N outputs of CMD (a number per run)
#   ratio A B                               B / A with 4 decimals
#   geomean_add RATIO; geomean_print LABEL  geometric mean of the ratios added so far
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

BENCH_SIZES_TIME="Richards:1:10 DeltaBlue:1:1000 Json:1:10 NBody:1:250000 Havlak:1:1 CD:10:10 Bounce:1:100 List:1:100 Mandelbrot:1:500 Permute:1:100 Queens:1:100 Sieve:1:200 Storage:1:100 Towers:1:50"
BENCH_SIZES_ICOUNT="Richards:1:2 DeltaBlue:1:200 Json:1:2 NBody:5000:1 Havlak:1:1 CD:1:10 Bounce:1:20 List:1:20 Mandelbrot:1:100 Permute:1:20 Queens:1:20 Sieve:1:40 Storage:1:20 Towers:1:10"

avg_us() { # command...
  "$@" 2>/dev/null | sed -n 's/.*average: \([0-9]*\)us.*/\1/p' | tail -1
}

bench_us() { avg_us "$1" bench "$2" "$3" "$4" ${5:+$5}; }

bench_icount() { # lupa name it inner [extra-args]
  local out
  out=$(mktemp)
  # shellcheck disable=SC2086 # extra arguments are words
  valgrind --tool=cachegrind --cache-sim=no --cachegrind-out-file=/dev/null "$1" bench "$2" "$3" "$4" ${5:-} \
    2>"$out" >/dev/null
  sed -n 's/.*I *refs: *\([0-9,]*\).*/\1/p' "$out" | tr -d ,
  rm -f "$out"
}

best() { # rounds command...
  local rounds=$1 b=999999999999999 t
  shift
  for _ in $(seq "$rounds"); do
    t=$("$@")
    [ -n "$t" ] && [ "$t" -lt "$b" ] && b=$t
  done
  echo "$b"
}

ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.4f", b / a }'; }

_GEO_LOGSUM=0
_GEO_N=0
geomean_add() {
  _GEO_LOGSUM=$(awk -v s="$_GEO_LOGSUM" -v r="$1" 'BEGIN { print s + log(r) }')
  _GEO_N=$((_GEO_N + 1))
}
geomean_print() { awk -v s="$_GEO_LOGSUM" -v n="$_GEO_N" -v l="$1" 'BEGIN { printf "geometric mean %s: %.4f\n", l, exp(s / n) }'; }
