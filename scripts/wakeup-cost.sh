#!/usr/bin/env bash
# The floor of any timer-driven sampler on this machine: the CPU time one timer wakeup costs, measured
# without Lupa by two small C programs (needs a C compiler) while a main thread spins for SECONDS of CPU:
#   - a thread that only sleeps to absolute deadlines (clock_nanosleep) at each rate: the sampler thread's
#     design with nothing to do; its own CPU time per wakeup;
#   - a POSIX timer (timer_create, SIGEV_THREAD_ID) signalling the spinning thread itself at each rate: the
#     signal-handler design; the extra CPU time of the spinning thread per signal.
# Compare with the "sampler thread: CPU ... µs per tick" line of `lupa profile`'s report.
#   scripts/wakeup-cost.sh            at 1 kHz and 10 kHz
#   RATES="1000" scripts/wakeup-cost.sh
set -euo pipefail
RATES=${RATES:-"1000 10000"}
cc=${CC:-cc}
dir=$(mktemp -d); trap 'rm -rf "$dir"' EXIT
cat > "$dir/wake.c" <<'C'
#define _GNU_SOURCE
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
static volatile int stop;
static volatile unsigned long signals;
static long period_ns;
static unsigned long wakes;
static double sleeper_cpu;
static double cpu(void) {
  struct timespec t;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return t.tv_sec + t.tv_nsec * 1e-9;
}
static void *sleeper(void *arg) {
  (void)arg;
  struct timespec d;
  clock_gettime(CLOCK_MONOTONIC, &d);
  while (!stop) {
    d.tv_nsec += period_ns;
    while (d.tv_nsec >= 1000000000) { d.tv_nsec -= 1000000000; d.tv_sec++; }
    clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &d, 0);
    wakes++;
  }
  sleeper_cpu = cpu();
  return 0;
}
static void on_signal(int s) { (void)s; signals++; }
static double spin(void) {
  double t0 = cpu();
  volatile unsigned long x = 0;
  for (unsigned long i = 0; i < 2000000000UL; i++) x += i;
  return cpu() - t0;
}
int main(int argc, char **argv) {
  long hz = atol(argv[1]);
  const char *mode = argv[2];
  period_ns = 1000000000L / hz;
  double base = spin();
  if (mode[0] == 't') {
    pthread_t t;
    pthread_create(&t, 0, sleeper, 0);
    double busy = spin();
    stop = 1;
    pthread_join(t, 0);
    printf("sleeping thread  %6ld Hz: %6lu wakeups, %7.1f us of its CPU per wakeup (%.1f%% of the spinning thread's CPU)\n",
           hz, wakes, sleeper_cpu / wakes * 1e6, 100 * sleeper_cpu / busy);
  } else {
    struct sigaction sa = {0};
    sa.sa_handler = on_signal;
    sa.sa_flags = SA_RESTART;
    sigaction(SIGPROF, &sa, 0);
    struct sigevent ev = {0};
    ev.sigev_notify = SIGEV_THREAD_ID;
    ev.sigev_signo = SIGPROF;
    ev._sigev_un._tid = syscall(SYS_gettid);
    timer_t timer;
    if (timer_create(CLOCK_MONOTONIC, &ev, &timer)) { perror("timer_create"); return 1; }
    struct itimerspec its = {{0, period_ns}, {0, period_ns}};
    timer_settime(timer, 0, &its, 0);
    double busy = spin();
    timer_delete(timer);
    printf("timer signal     %6ld Hz: %6lu signals, %7.1f us of the signalled thread's CPU per signal (%.1f%%)\n",
           hz, signals, (busy - base) / signals * 1e6, 100 * (busy - base) / base);
  }
  return 0;
}
C
"$cc" -O2 -pthread -o "$dir/wake" "$dir/wake.c"
for r in $RATES; do
  "$dir/wake" "$r" thread
  "$dir/wake" "$r" signal
done
