#!/usr/bin/env python3
"""The Illimani paper's table 1 and tables 3-5 under memory pressure: the DataFrame loads of `lupa gc-bench
--workload dataframe --param-scale 100`, each run in a memory cgroup that holds less than the largest load needs.

Why: with the defaults the paper's GC share goes 15% -> 22% -> 89% (500 MB, 1.6 GB, 3.1 GB); Lupa's, on a machine
with memory to spare, 38% -> 53% -> 64%. Read in the paper, each full GC at 3.1 GB costs 7x one at 1.6 GB for 2x
the heap, and the time outside the collector grows as much with configuration 5 as with the defaults: what a
machine that pages does. This script gives the runs a machine that pages (README, "Table 1's last step").

Needs Linux, root, swap (`swapon --show` not empty; e.g. `fallocate -l 4G /swap && chmod 600 /swap && mkswap /swap
&& swapon /swap`), and a memory cgroup: cgroup v2's `memory.high` (the kernel reclaims and slows the process down)
where the v2 hierarchy has the memory controller, else cgroup v1's `memory.limit_in_bytes` (the kernel's OOM killer
kills some runs that must page: they are retried, counted and reported; only the runs that finished are in the
tables). The data files are made by `lupa gc-bench` (in --data-dir, reused while they exist).

  scripts/gc-memory-pressure.py --limit 64MB
  scripts/gc-memory-pressure.py --limit 64MB --runs 1 --sizes 5MB,31MB --configs default,c5,proposal --csv out.csv
  LUPA=target/release/lupa scripts/gc-memory-pressure.py --limit none     # the same runs without a limit

Exit status: 0 done; 2 bad arguments; 3 the machine cannot run it (not Linux or root, no swap, no writable memory
cgroup); 4 some run failed other than by the OOM killer, or every attempt of it was killed (the tables are printed
without it, each run's line says so).
"""

import argparse
import csv
import json
import os
import signal
import statistics
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SCALE = 100
MB = 1 << 20

# The paper's configurations (Pharo's defaults and table 2), as `lupa gc-bench --param-scale 100` scales them: their
# flags are read from gc-bench's own CSV of the run that makes the files. `proposal` is what `lupa gc-tune
# --param-scale 100` proposed for the 31 MB load (README), whose flags are not scaled.
PAPER = ["default", "c1", "c2", "c3", "c4", "c5"]
PROPOSAL = "--eden-size 15MB --growth-headroom 128MB --shrink-threshold 256MB --gc-ratio 10 --tenuring-threshold 1"


def fail(code, message):
    print(f"gc-memory-pressure: {message}", file=sys.stderr)
    sys.exit(code)


def paper_flags(lupa, data_dir, sizes, configs):
    """Make the data files (gc-bench checks them against their sums, in one short run of each configuration without
    a limit) and answer each configuration's `lupa run` flags, from gc-bench's CSV of those runs."""
    with tempfile.TemporaryDirectory() as tmp:
        runs = os.path.join(tmp, "runs.csv")
        subprocess.run([lupa, "gc-bench", "--workload", "dataframe", "--sizes", sizes, "--runs", "1", "--warmup", "0",
                        "--configs", ",".join(configs), "--param-scale", str(SCALE), "--jobs", "1", "--data-dir",
                        data_dir, "--csv", runs, "-q"], check=True, stdout=subprocess.DEVNULL)
        with open(runs, newline="") as f:
            return {r["config"]: ["--eden-size", r["eden_bytes"], "--growth-headroom", r["growth_headroom_bytes"],
                                  "--shrink-threshold", r["shrink_threshold_bytes"], "--gc-ratio", r["gc_ratio"]]
                    for r in csv.DictReader(f)}


def megabytes(text):
    t = text.strip().upper().removesuffix("B")
    factor = {"K": 1 << 10, "M": MB, "G": 1 << 30}.get(t[-1:], None)
    try:
        return int(float(t[:-1]) * factor) if factor else int(t)
    except ValueError:
        fail(2, f"not a size: '{text}' (e.g. 64MB)")


class Cgroup:
    """A memory cgroup below this process's own, removed on exit."""

    def __init__(self, limit):
        own = {}
        with open("/proc/self/cgroup") as f:
            for line in f:
                ident, controllers, path = line.rstrip("\n").split(":", 2)
                own[controllers] = path
        v2 = "/sys/fs/cgroup" if os.path.exists("/sys/fs/cgroup/cgroup.controllers") else "/sys/fs/cgroup/unified"
        v2_has_memory = os.path.exists(f"{v2}/cgroup.controllers") and "memory" in open(
            f"{v2}/cgroup.controllers").read().split()
        name = f"lupa-pressure-{os.getpid()}"
        if v2_has_memory:
            self.dir = os.path.join(v2 + own.get("", "/"), name)
            self.kind = "cgroup v2 memory.high"
            self.limit_file = "memory.high"
        else:
            memory = next((p for c, p in own.items() if "memory" in c.split(",")), None)
            if memory is None or not os.path.isdir("/sys/fs/cgroup/memory"):
                fail(3, "no memory cgroup controller (cgroup v2 with memory, or v1's /sys/fs/cgroup/memory)")
            self.dir = os.path.join("/sys/fs/cgroup/memory" + memory, name)
            self.kind = "cgroup v1 memory.limit_in_bytes"
            self.limit_file = "memory.limit_in_bytes"
        try:
            os.mkdir(self.dir)
            with open(os.path.join(self.dir, self.limit_file), "w") as f:
                f.write(str(limit))
        except OSError as e:
            fail(3, f"cannot make the memory cgroup {self.dir}: {e.strerror} (run as root)")

    def remove(self):
        try:
            os.rmdir(self.dir)
        except OSError:
            pass


def run_once(lupa, cgroup, flags, data):
    """One `lupa run --stats-json` of DataFrameLoad with `flags`: its statistics, or why it failed ("killed": by a
    signal)."""
    command = [lupa, "run", "--stats-json", *flags, "DataFrameLoad", data]
    enter = f"echo $BASHPID > {cgroup.dir}/cgroup.procs; " if cgroup else ""
    p = subprocess.run(["bash", "-c", enter + 'exec "$@"', "run", *command], capture_output=True, text=True)
    if p.returncode < 0 or p.returncode == 128 + signal.SIGKILL:
        return None, "killed"
    stats = [json.loads(line) for line in p.stderr.splitlines() if line.startswith('{"lupa_run_stats')]
    if p.returncode != 0 or not stats or "verified" not in p.stdout:
        tail = "\n".join(p.stderr.strip().splitlines()[-5:])
        return None, f"exit {p.returncode}: {tail}"
    return stats[-1], None


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--limit", required=True, help="the memory the runs may use (64MB), or 'none'")
    ap.add_argument("--runs", type=int, default=3, help="runs of each size and configuration (default 3)")
    ap.add_argument("--sizes", default="5MB,16MB,31MB", help="data sizes, as gc-bench's --sizes")
    ap.add_argument("--configs", default="default,c1,c5,proposal",
                    help="default, c1..c5, proposal (comma-separated; the first is the baseline)")
    ap.add_argument("--data-dir", default=os.path.join(ROOT, ".lupa", "data"))
    ap.add_argument("--attempts", type=int, default=10, help="attempts of a run the OOM killer kills (default 10)")
    ap.add_argument("--csv", help="write every run to this CSV file")
    args = ap.parse_args()
    configs = args.configs.split(",")
    for c in configs:
        if c not in PAPER and c != "proposal":
            fail(2, f"unknown configuration '{c}' (default, c1..c5, proposal)")
    if args.runs < 1 or args.attempts < 1:
        fail(2, "--runs and --attempts must be at least 1")
    limit = None if args.limit == "none" else megabytes(args.limit)
    if limit is not None:
        if sys.platform != "linux" or os.geteuid() != 0:
            fail(3, "a memory limit needs Linux and root")
        with open("/proc/swaps") as f:
            if len(f.read().strip().splitlines()) < 2:
                fail(3, "no swap: the runs would be killed, not paged (see the header for making a swap file)")
    lupa = os.environ.get("LUPA")
    if not lupa:
        subprocess.run(["cargo", "build", "--release", "-q", "-p", "lupa-cli"], cwd=ROOT, check=True)
        lupa = os.path.join(os.environ.get("CARGO_TARGET_DIR", os.path.join(ROOT, "target")), "release", "lupa")
    sizes = args.sizes.split(",")
    flags = paper_flags(lupa, args.data_dir, args.sizes, [c for c in configs if c != "proposal"] or ["default"])
    flags["proposal"] = PROPOSAL.split()
    cgroup = Cgroup(limit) if limit is not None else None
    rows, killed, failed = [], {}, []
    try:
        print(f"limit {args.limit} ({cgroup.kind if cgroup else 'no cgroup'}), {args.runs} runs, interleaved",
              flush=True)
        for r in range(args.runs):
            for size in sizes:
                data = os.path.join(args.data_dir, f"dataframe-{size}.csv")
                for config in configs:
                    for _ in range(args.attempts):
                        stats, why = run_once(lupa, cgroup, flags[config], data)
                        if stats or why != "killed":
                            break
                        killed[(size, config)] = killed.get((size, config), 0) + 1
                    if stats is None:
                        failed.append(f"{size} {config} run {r + 1}: "
                                      + (f"killed at all {args.attempts} attempts" if why == "killed" else why))
                        print(f"  {failed[-1]}", flush=True)
                        continue
                    row = {"limit": args.limit, "size": size, "config": config, "run": r + 1,
                           "total_s": stats["elapsed_us"] / 1e6, "gc_s": stats["gc_us"] / 1e6,
                           "scavenges": stats["scavenges"], "full_gcs": stats["full_gcs"],
                           "full_gc_s": stats["full_gc_us"] / 1e6, "page_faults": stats["page_faults"]}
                    rows.append(row)
                    print(f"  {size} {config} run {r + 1}: {row['total_s']:.2f} s, GC {row['gc_s']:.2f} s, "
                          f"{row['full_gcs']} full GCs", flush=True)
    finally:
        if cgroup:
            cgroup.remove()
    if args.csv and rows:
        with open(args.csv, "w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=list(rows[0]))
            w.writeheader()
            w.writerows(rows)
    report(rows, sizes, configs, killed)
    if failed:
        fail(4, f"{len(failed)} runs did not finish (left out of the tables above): " + "; ".join(failed))


def report(rows, sizes, configs, killed):
    def of(size, config):
        return [x for x in rows if x["size"] == size and x["config"] == config]

    def mean_sd(values):
        sd = statistics.stdev(values) if len(values) > 1 else 0.0
        return f"{statistics.mean(values):.2f} ± {sd:.2f}"

    def times(runs):
        """GC time, total time (mean ± sd) and GC share of some runs, as the tables print them."""
        gc, total = [x["gc_s"] for x in runs], [x["total_s"] for x in runs]
        return f"{mean_sd(gc):>14}  {mean_sd(total):>14}  {100 * sum(gc) / sum(total):5.1f}%"

    print(f"\nTable 1 ({configs[0]}): size, scavenges, full GCs, GC s, total s, GC share")
    for size in sizes:
        rr = of(size, configs[0])
        if rr:
            print(f"  {size:>6} {rr[0]['scavenges']:6} {rr[0]['full_gcs']:5}  {times(rr)}")
        else:
            print(f"  {size:>6}  no run finished")
    for size in sizes:
        print(f"\n{size}: configuration, GC s, total s, GC share, full GCs, speed-up over {configs[0]} (means)")
        base_runs = [x["total_s"] for x in of(size, configs[0])]
        base = statistics.mean(base_runs) if base_runs else float("nan")
        for config in configs:
            rr = of(size, config)
            if rr:
                speed_up = base / statistics.mean(x["total_s"] for x in rr)
                print(f"  {config:>8}  {times(rr)}  {rr[0]['full_gcs']:4}  {speed_up:.2f}x")
            else:
                print(f"  {config:>8}  no run finished")
    if killed:
        listed = ", ".join(f"{s} {c}: {n}" for (s, c), n in killed.items())
        print(f"\nattempts killed by the OOM killer and retried: {sum(killed.values())} ({listed})")

if __name__ == "__main__":
    main()
