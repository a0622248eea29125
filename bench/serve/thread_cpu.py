"""Each thread of a process: its CPU share and context switches between two snapshots (Linux /proc).

Used to see what a server's threads do under load (docs/PERFORMANCE.md §67: 64 waiting threads yielding on every
core). Take a snapshot before and after the load, then compare them:
    python3 bench/serve/thread_cpu.py snap PID before.json
    ... the load ...
    python3 bench/serve/thread_cpu.py snap PID after.json
    python3 bench/serve/thread_cpu.py diff before.json after.json SECONDS
prints the machine's busy share over the interval (/proc/stat), how many threads used over 5 % of a CPU, their
voluntary and involuntary context switches, and the eight busiest threads by name.
"""
import json
import os
import sys


def snapshot(pid):
    threads = {}
    for tid in os.listdir(f"/proc/{pid}/task"):
        try:
            stat = open(f"/proc/{pid}/task/{tid}/stat").read()
            status = open(f"/proc/{pid}/task/{tid}/status").read()
        except (FileNotFoundError, ProcessLookupError):
            continue  # the thread ended between the listing and the read
        name = stat[stat.index("(") + 1:stat.rindex(")")]
        fields = stat[stat.rindex(")") + 2:].split()  # fields from the 3rd (state) on
        counts = dict(line.split(":\t") for line in status.splitlines() if ":\t" in line)
        threads[tid] = {"name": name, "ticks": int(fields[11]) + int(fields[12]),  # utime + stime
                        "voluntary": int(counts["voluntary_ctxt_switches"]),
                        "involuntary": int(counts["nonvoluntary_ctxt_switches"])}
    cpu = [int(x) for x in open("/proc/stat").readline().split()[1:]]
    return {"threads": threads, "idle": cpu[3] + cpu[4], "total": sum(cpu)}


def compare(before, after, seconds):
    hz = os.sysconf("SC_CLK_TCK")
    rows = []
    for tid, now in after["threads"].items():
        was = before["threads"].get(tid, {"ticks": 0, "voluntary": 0, "involuntary": 0})
        rows.append({"cpu": 100.0 * (now["ticks"] - was["ticks"]) / hz / seconds, "name": now["name"], "tid": tid,
                     "voluntary": now["voluntary"] - was["voluntary"],
                     "involuntary": now["involuntary"] - was["involuntary"]})
    rows.sort(key=lambda row: -row["cpu"])
    busy = 100.0 * (1 - (after["idle"] - before["idle"]) / max(1, after["total"] - before["total"]))
    print(f"  machine busy {busy:.0f}% of {os.cpu_count()} cpus; threads {len(rows)}, "
          f"over 5%: {sum(row['cpu'] > 5 for row in rows)}, cpu% sum {sum(row['cpu'] for row in rows):.0f}, "
          f"switches vol {sum(row['voluntary'] for row in rows)} invol {sum(row['involuntary'] for row in rows)}")
    for row in rows[:8]:
        print(f"  {row['cpu']:5.0f}% {row['name']:<16} tid {row['tid']} vol {row['voluntary']} "
              f"invol {row['involuntary']}")


if __name__ == "__main__":
    if sys.argv[1] == "snap":
        json.dump(snapshot(sys.argv[2]), open(sys.argv[3], "w"))
    else:
        compare(json.load(open(sys.argv[2])), json.load(open(sys.argv[3])), float(sys.argv[4]))
