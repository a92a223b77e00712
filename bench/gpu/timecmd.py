"""Runs one command, records how it went: timecmd.py RESULT.json CMD ARGS...
Writes {"cmd","rc","wall_ms","json" (the last JSON object the command
printed on stdout, if any),"stdout_tail","stderr_tail"} and exits with the
command's exit code."""
import json
import subprocess
import sys
import time

out, cmd = sys.argv[1], sys.argv[2:]
t = time.perf_counter()
p = subprocess.run(cmd, capture_output=True, text=True)
wall = (time.perf_counter() - t) * 1000.0
parsed = None
text = p.stdout.strip()
for cand in [text] + text.splitlines()[::-1]:
    try:
        parsed = json.loads(cand)
        break
    except ValueError:
        continue
rec = {"cmd": cmd, "rc": p.returncode, "wall_ms": wall, "json": parsed,
       "stdout_tail": p.stdout[-1500:], "stderr_tail": p.stderr[-1500:]}
json.dump(rec, open(out, "w"), indent=1)
print(f"  [{'ok' if p.returncode == 0 else 'rc=%d' % p.returncode}] {wall:9.1f} ms  "
      + " ".join(c if len(c) < 60 else c[:57] + "..." for c in cmd[:6]))
if p.returncode != 0:
    print("    " + (p.stderr.strip() or p.stdout.strip())[-600:].replace("\n", "\n    "))
sys.exit(p.returncode)
