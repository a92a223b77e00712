#!/usr/bin/env python3
"""bench/scale/audit_bursts.py: where a scale run's change latency goes, read
from the kube-apiserver audit log run.sh writes (the operator's user only).

For one operator's window (UTC times as in the log, HH:MM:SS), prints its
requests by verb/resource/subresource, the server-side latency of each kind
(p50/p90, stageTimestamp - requestReceivedTimestamp), and its Job creates
grouped into bursts (creates less than --gap s apart): the size of the
bursts and how long one takes from its first create to its last.

Usage: audit_bursts.py --audit-log DIR/audit.log --start 14:53:40 --end 14:56:05 [--gap 0.7]
"""
import argparse
import collections
import datetime
import json
import sys


def ts(s):
    return datetime.datetime.fromisoformat(s.replace("Z", "+00:00")).timestamp()


def pct(xs, q):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(len(xs) * q))] if xs else None


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--audit-log", required=True)
    p.add_argument("--start", required=True, help="HH:MM:SS (UTC, the log's clock)")
    p.add_argument("--end", required=True, help="HH:MM:SS")
    p.add_argument("--gap", type=float, default=0.7)
    a = p.parse_args()
    kinds = collections.Counter()
    lat = collections.defaultdict(list)
    creates = []
    try:
        f = open(a.audit_log)
    except OSError as e:
        sys.exit("audit_bursts: --audit-log %s: %s" % (a.audit_log, e.strerror))
    with f:
        for n, line in enumerate(f, 1):
            try:
                e = json.loads(line)
                t = e["requestReceivedTimestamp"]
                if not a.start <= t[11:19] <= a.end:
                    continue
                ref = e.get("objectRef", {})
                k = "%s %s%s" % (e["verb"], ref.get("resource", "?"),
                                 "/" + ref["subresource"] if ref.get("subresource") else "")
                kinds[k] += 1
                lat[k].append(ts(e["stageTimestamp"]) - ts(t))
                if k == "create jobs":
                    creates.append(ts(t))
            except (ValueError, KeyError, TypeError) as err:
                sys.exit("audit_bursts: %s line %d: not an audit event (%s)" % (a.audit_log, n, err))
    if not kinds:
        sys.exit("audit_bursts: no request between %s and %s; check --start/--end" % (a.start, a.end))
    print("| request | count | server p50 (ms) | server p90 (ms) |")
    print("|---|---|---|---|")
    for k, c in kinds.most_common():
        print("| %s | %d | %.0f | %.0f |" % (k, c, 1000 * pct(lat[k], 0.5), 1000 * pct(lat[k], 0.9)))
    creates.sort()
    bursts = []
    for t in creates:
        if bursts and t - bursts[-1][-1] <= a.gap:
            bursts[-1].append(t)
        else:
            bursts.append([t])
    sizes = [len(b) for b in bursts]
    spans = [b[-1] - b[0] for b in bursts if len(b) > 1]
    print("\nJob create bursts: %d; size median %s (min %s, max %s); first to last create: "
          "median %.2f s, max %.2f s" % (len(bursts), pct(sizes, 0.5), min(sizes, default=0),
                                         max(sizes, default=0), pct(spans, 0.5) or 0,
                                         max(spans, default=0)))


if __name__ == "__main__":
    main()
