#!/usr/bin/env python3
"""Samples processes' memory for bench/run_soak.sh: every --every seconds, one
JSON line with the wall time, each --pid NAME=PID's VmRSS (KiB; null once
the process is gone) and the gateway's open connections from --admin's
/metrics, until --stop-file exists. Standard library only."""
import argparse
import json
import os
import time
import urllib.request


def rss_kib(pid):
    """VmRSS of a live process in KiB, None when it has exited (or is a zombie)."""
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return None


def gateway_connections(admin):
    """framegate_gateway_connections_active from the gateway's /metrics, None if it does not answer."""
    try:
        text = urllib.request.urlopen(f"http://{admin}/metrics", timeout=2).read().decode()
    except OSError:
        return None
    for line in text.splitlines():
        if line.startswith("framegate_gateway_connections_active "):
            return int(float(line.split()[1]))
    return None


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--every", type=float, required=True, help="seconds between samples")
    ap.add_argument("--pid", action="append", default=[], metavar="NAME=PID", help="a process to watch (repeatable)")
    ap.add_argument("--admin", default="", help="the gateway's admin address, HOST:PORT")
    ap.add_argument("--stop-file", required=True, help="sampling ends once this file exists")
    ap.add_argument("--out", required=True, help="JSON lines, one per sample")
    args = ap.parse_args()
    pids = {}
    for spec in args.pid:
        name, _, pid = spec.partition("=")
        if not name or not pid.isdigit():
            ap.error(f"--pid wants NAME=PID, got {spec!r}")
        pids[name] = int(pid)
    with open(args.out, "w") as out:
        next_at = time.monotonic()
        while True:
            sample = {"t": time.time(), "rss_kib": {name: rss_kib(pid) for name, pid in pids.items()},
                      "connections": gateway_connections(args.admin) if args.admin else None}
            out.write(json.dumps(sample) + "\n")
            out.flush()
            if os.path.exists(args.stop_file):
                return
            next_at += args.every
            time.sleep(max(0.0, next_at - time.monotonic()))


if __name__ == "__main__":
    main()
