#!/usr/bin/env python3
"""bench/faults/seal_faults.py: `initwarm seal` killed and starved of space on a large tree.

Python 3 standard library only; runs the real initwarm binary, no cluster.

  seal_faults.py --initwarm BIN [--files 2000] [--mib 32] [--kills 12]
                 [--fills 8] [--seed 1] [--out FILE]

kill  (--kills times): a previous cache is published and READY; a new warmup
      (another job uid, other bytes) is sealed with --replace and SIGKILLed at a
      seeded random point of its run (KC_CRASH_AT, initwarm/testing/crash_at.h,
      in the test-only `initwarm-testing` program: after
      n files hashed, n bytes hashed, n directories synced, a manifest step or
      a publish step). Then: READY must be the old cache, nothing, or the new
      complete one; `initwarm verify --level Checksums` must pass on whatever
      is READY; no other READY anywhere but the quarantine; and the dead
      sealer's lock must not block the retry (the same job seals again when its
      staging survived, else a new job prepares and seals), which must publish
      a cache that verifies.
fill  (--fills times, root only: a tmpfs): the volume is a tmpfs holding the
      tree plus a little room. Even runs: a filler thread writes a file
      outside the cache until the volume is full, starting at a seeded random
      moment of the seal (0 .. the time a clean seal of the same tree takes);
      every other one replaces a READY cache. Odd runs: the seal's own writes
      fill it: the volume is full before the seal but for k free pages, k
      seeded from 0 .. the pages the manifest needs + 1 (the manifest fails,
      READY fails, or both fit), replacing a READY cache. The seal must
      either publish a cache that verifies or exit 8 (volume full) with
      nothing new READY, and a replacing seal that runs out of space must
      leave the previous cache READY (a full volume must not lose a good
      cache); after the filler's file is removed a retry must publish a cache
      that verifies.
Prints a table and writes it to --out as JSON; exit 1 on any violation.
"""
import argparse
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import threading
import time

FP = "0123456789abcdef"
PHASES = ("hash", "bytes", "dirsync", "manifest", "publish")


def log(msg):
    print("[seal-faults %s] %s" % (time.strftime("%H:%M:%S"), msg), file=sys.stderr, flush=True)


class Initwarm:
    def __init__(self, binary, root):
        self.bin, self.root = binary, root

    def run(self, args, env=None, check=False):
        e = dict(os.environ)
        e.update(env or {})
        p = subprocess.run([self.bin] + args, env=e, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        if check and p.returncode != 0:
            raise RuntimeError("initwarm %s: exit %d: %s" % (" ".join(args[:1]), p.returncode,
                                                             p.stdout.decode(errors="replace")[-500:]))
        return p.returncode, p.stdout.decode(errors="replace")

    def prepare(self, uid):
        return self.run(["prepare", "--root", self.root, "--fingerprint", FP, "--job-uid", uid, "--view", ""],
                        check=True)

    def seal_cmd(self, uid):
        return [self.bin, "seal", "--root", self.root, "--fingerprint", FP, "--job-uid", uid, "--replace",
                "--termination-log", ""]

    def seal(self, uid, crash=None):
        return self.run(self.seal_cmd(uid)[1:], {"KC_CRASH_AT": crash} if crash else None)

    def verify(self):
        return self.run(["verify", "--root", self.root, "--fingerprint", FP, "--level", "Checksums",
                         "--no-quarantine"])

    def staging(self, uid):
        return os.path.join(self.root, "v1", ".staging", "%s-%s" % (FP, uid))

    def ready(self):
        p = os.path.join(self.root, "v1", FP, "READY")
        try:
            with open(p) as f:
                return f.read().strip()
        except OSError:
            return None

    def producer(self):
        try:
            with open(os.path.join(self.root, "v1", FP, "manifest.json")) as f:
                return json.load(f).get("producer", {}).get("owner")
        except (OSError, ValueError):
            return None


def fill_tree(d, files, total, seed):
    """A Triton/Inductor-like tree: files small and large over 64 kernel dirs."""
    rng = random.Random(seed)
    sizes = [rng.randint(512, 24 * 1024) for _ in range(files)]
    big = max(0, total - sum(sizes))
    dirs = 0
    for i, size in enumerate(sizes):
        sub = os.path.join(d, ("triton", "inductor", "nv")[i % 3], "K%02d" % (i % 64))
        if not os.path.isdir(sub):
            os.makedirs(sub)
            dirs += 1
        if i < 4:
            size += big // 4
        with open(os.path.join(sub, "f%05d.bin" % i), "wb") as f:
            f.write(rng.randbytes(size) if i >= 4 else os.urandom(size))
    return {"files": files, "bytes": sum(sizes) + big, "dirs": dirs + 3}


def other_ready(root):
    """READY files outside v1/<fp>/ and the quarantine."""
    bad = []
    for dp, _, fs in os.walk(root):
        if "READY" in fs:
            p = os.path.join(dp, "READY")
            if p != os.path.join(root, "v1", FP, "READY") and "/.quarantine/" not in p:
                bad.append(p)
    return bad


def check_published(iw, root, now, what, row, violations):
    """`initwarm verify` on whatever is READY; no READY anywhere else."""
    if now is not None:
        vrc, vout = iw.verify()
        row["ready_verifies"] = vrc == 0
        if vrc != 0:
            violations.append("%s: READY cache fails verification: %s" % (what, vout[-300:]))
    for p in other_ready(root):
        violations.append("%s: a READY outside the published cache: %s" % (what, p))


def retry(iw, uid, a, seed, what, row, violations):
    """The retry after a failed seal: the same job when its staging is left,
    else a new warmup; it must publish a cache that verifies."""
    ruid = uid if os.path.isdir(iw.staging(uid)) else uid + "-retry"
    if ruid != uid:
        iw.prepare(ruid)
        fill_tree(iw.staging(ruid), a.files, (a.mib << 20) // 2, seed)
    rc, out = iw.seal(ruid)
    vrc, vout = iw.verify()
    row["retry"], row["retry_ok"] = ruid, rc == 0 and vrc == 0
    if not row["retry_ok"]:
        violations.append("%s: retry by %s: seal exit %d, verify exit %d: %s %s" %
                          (what, ruid, rc, vrc, out[-200:], vout[-200:]))


def kill_campaign(a, rng, work):
    rows, violations = [], []
    root = os.path.join(work, "kill")
    for k in range(a.kills):
        shutil.rmtree(root, ignore_errors=True)
        os.makedirs(root)
        iw = Initwarm(a.initwarm, root)
        iw.prepare("job-a")
        shape = fill_tree(iw.staging("job-a"), a.files, a.mib << 20, 1)
        rc, out = iw.seal("job-a")
        if rc != 0:
            raise RuntimeError("the previous cache did not seal: %s" % out[-300:])
        old = iw.ready()
        iw.prepare("job-b")
        fill_tree(iw.staging("job-b"), a.files, a.mib << 20, 2 + k)
        phase = rng.choice(PHASES)
        n = {"hash": lambda: rng.randint(1, shape["files"]), "bytes": lambda: rng.randint(1, shape["bytes"]),
             "dirsync": lambda: rng.randint(1, shape["dirs"]), "manifest": lambda: rng.randint(0, 1),
             "publish": lambda: rng.randint(0, 6)}[phase]()
        point = "%s:%d" % (phase, n)
        t0 = time.monotonic()
        rc, out = iw.seal("job-b", point)
        row = {"point": point, "killed": rc == 128 + 9 or rc == -9, "seal_s": time.monotonic() - t0}
        now = iw.ready()
        row["ready_after_kill"] = "old" if now == old else "none" if now is None else "new"
        if now is not None and now != old and iw.producer() != "job-b":
            violations.append("%s: READY is neither the old cache nor job-b's" % point)
        check_published(iw, root, now, point, row, violations)
        retry(iw, "job-b", a, 100 + k, point, row, violations)
        if not row["killed"]:
            violations.append("%s: the failpoint was not reached (exit %d): %s" % (point, rc, out[-200:]))
        rows.append(row)
        log("kill %2d %-16s READY after kill: %-4s verify %s, retry %s" % (
            k + 1, point, row["ready_after_kill"], row.get("ready_verifies", "-"),
            "ok" if row["retry_ok"] else "FAILED"))
    shutil.rmtree(root, ignore_errors=True)
    return rows, violations


def mount_tmpfs(path, mib):
    os.makedirs(path, exist_ok=True)
    p = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=%dm" % mib, "kc-seal-faults", path],
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    return p.returncode == 0, p.stdout.decode(errors="replace").strip()


class Filler(threading.Thread):
    """Writes a file on the volume until it is full, starting `delay` seconds in."""

    def __init__(self, path, delay):
        super().__init__(daemon=True)
        self.path, self.delay, self.full_at = path, delay, None

    def run(self):
        time.sleep(self.delay)
        t0 = time.monotonic()
        fill_until_full(self.path)
        self.full_at = self.delay + time.monotonic() - t0


def fill_until_full(path, leave_pages=0):
    """Fills the volume with one file; then frees `leave_pages` 4 KiB pages."""
    with open(path, "wb", buffering=0) as f:
        for chunk in (b"\0" * (1 << 20), b"\0" * 4096):
            try:
                while True:
                    f.write(chunk)
            except OSError:
                pass
    if leave_pages:
        os.truncate(path, max(0, os.path.getsize(path) - leave_pages * 4096))


def fill_campaign(a, rng, work):
    """Even runs: the volume fills at a random moment of the seal (a filler
    thread), every other one replacing a READY cache. Odd runs: the seal's
    own writes fill it (full before the seal, then k pages freed, k drawn
    from 0 .. the pages its manifest needs + 1: the manifest, READY or
    nothing fails), always replacing a READY cache."""
    rows, violations = [], []
    mnt = os.path.join(work, "tmpfs")
    size = a.mib + 8 + a.files * 4 // 1024 * 2  # the tree, its manifest, a little room
    ok, why = mount_tmpfs(mnt, size)
    if not ok:
        log("fill: cannot mount a tmpfs (%s): skipped (needs root)" % why)
        return None, []
    room_files, room_mib = max(1, a.files // 4), max(1, a.mib // 4)
    try:
        root = os.path.join(mnt, "vol")
        iw = Initwarm(a.initwarm, root)
        # A clean seal of the timed runs' tree: the window the filler's start is drawn from.
        os.makedirs(root)
        iw.prepare("clean")
        fill_tree(iw.staging("clean"), a.files, a.mib << 20, 7)
        t0 = time.monotonic()
        rc, out = iw.seal("clean")
        window = time.monotonic() - t0
        if rc != 0:
            raise RuntimeError("clean seal on the tmpfs failed: %s" % out[-300:])
        # The manifest of the room runs' tree (same names, sizes and uid length every time).
        shutil.rmtree(root)
        os.makedirs(root)
        iw.prepare("room-00")
        fill_tree(iw.staging("room-00"), room_files, room_mib << 20, 11)
        if iw.seal("room-00")[0] != 0:
            raise RuntimeError("room seal on the tmpfs failed")
        manifest_pages = -(-os.path.getsize(os.path.join(root, "v1", FP, "manifest.json")) // 4096)
        for k in range(a.fills):
            run = k + 1
            shutil.rmtree(root, ignore_errors=True)
            os.makedirs(root)
            room = k % 2 == 1
            replace = room or k % 4 == 2
            old = None
            if replace:
                iw.prepare("old")
                fill_tree(iw.staging("old"), 50, 1 << 20, 9)
                if iw.seal("old")[0] != 0:
                    raise RuntimeError("the previous cache did not seal on the tmpfs")
                old = iw.ready()
            filler_path = os.path.join(mnt, "filler")
            row = {"mode": "room" if room else "timed", "replace": replace}
            if room:
                uid = "room-%02d" % k
                iw.prepare(uid)
                fill_tree(iw.staging(uid), room_files, room_mib << 20, 11)
                # Half the runs at the READY write (room for the manifest only).
                pages = rng.choice((manifest_pages, manifest_pages, manifest_pages + 1,
                                    rng.randint(0, manifest_pages - 1)))
                fill_until_full(filler_path, pages)
                row.update({"free_pages": pages, "manifest_pages": manifest_pages, "full_during_seal": True})
                t0 = time.monotonic()
                rc, out = iw.seal(uid)
                took = time.monotonic() - t0
                what = "%d pages free (manifest %d)" % (pages, manifest_pages)
            else:
                uid = "job-%d" % k
                iw.prepare(uid)
                fill_tree(iw.staging(uid), a.files, (a.mib << 20) * (3 if replace else 4) // 4, 20 + k)
                start = rng.uniform(0, window)
                filler = Filler(filler_path, start)
                t0 = time.monotonic()
                seal = subprocess.Popen(iw.seal_cmd(uid), stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
                filler.start()
                out = seal.communicate()[0].decode(errors="replace")
                rc, took = seal.returncode, time.monotonic() - t0
                filler.join()
                row.update({"filler_start_s": round(start, 3), "full_at_s": round(filler.full_at, 3),
                            "full_during_seal": filler.full_at < took})
                what = "full at %.3f s" % filler.full_at
            row.update({"seal_s": round(took, 3), "seal_exit": rc})
            now = iw.ready()
            row["ready"] = "old" if old is not None and now == old else "none" if now is None else "new"
            if rc == 0:
                if row["ready"] != "new":
                    violations.append("fill %d: seal exit 0 but READY is %s" % (run, row["ready"]))
            elif rc == 8:
                if row["ready"] == "new":
                    violations.append("fill %d: exit 8 (volume full) but the new cache is READY" % run)
                if replace and row["ready"] != "old":
                    violations.append("fill %d (%s): a replacing seal ran out of space and the previous READY "
                                      "cache is gone (READY %s): a full volume lost a good cache" %
                                      (run, what, row["ready"]))
            else:
                violations.append("fill %d: seal exit %d (want 0, or 8 for a full volume): %s" %
                                  (run, rc, out[-300:]))
            check_published(iw, root, now, "fill %d" % run, row, violations)
            os.unlink(filler_path)
            if rc != 0:  # room again: the retry publishes
                retry(iw, uid, a, 50 + k, "fill %d (after freeing space)" % run, row, violations)
            rows.append(row)
            log("fill %2d %-5s %-26s seal %.3f s: exit %d, READY %s, verify %s, retry %s" % (
                k + 1, row["mode"], what, took, rc, row["ready"], row.get("ready_verifies", "-"),
                {True: "ok", False: "FAILED"}.get(row.get("retry_ok"), "-")))
        return rows, violations
    finally:
        subprocess.run(["umount", "-l", mnt])


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--initwarm", required=True)
    p.add_argument("--files", type=int, default=2000)
    p.add_argument("--mib", type=int, default=32)
    p.add_argument("--kills", type=int, default=12)
    p.add_argument("--fills", type=int, default=8)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--out")
    a = p.parse_args()
    rng = random.Random(a.seed)
    work = tempfile.mkdtemp(prefix="kc-seal-faults.")
    try:
        t0 = time.monotonic()
        kills, v1 = kill_campaign(a, rng, work) if a.kills else ([], [])
        fills, v2 = fill_campaign(a, rng, work) if a.fills else ([], [])
    finally:
        shutil.rmtree(work, ignore_errors=True)
    violations = v1 + v2
    res = {"files": a.files, "mib": a.mib, "seed": a.seed, "kills": kills, "fills": fills,
           "violations": violations, "wall_s": time.monotonic() - t0}
    if a.out:
        with open(a.out, "w") as f:
            json.dump(res, f, indent=1)
    print("\nseal faults: a %d-file, %d MiB tree; seed %d" % (a.files, a.mib, a.seed))
    print("| fault | runs | READY after: old / none / new | READY failing verify | retry published "
          "| violations |")
    print("|---|---|---|---|---|---|")

    def line(name, rows, v):
        if rows is None:
            print("| %s | skipped (no tmpfs: needs root) | | | | |" % name)
            return
        c = {x: sum(1 for r in rows if r.get("ready_after_kill", r.get("ready")) == x)
             for x in ("old", "none", "new")}
        bad = sum(1 for r in rows if r.get("ready_verifies") is False)
        retried = [r for r in rows if "retry_ok" in r]
        print("| %s | %d | %d / %d / %d | %d | %d of %d | %d |" % (
            name, len(rows), c["old"], c["none"], c["new"], bad, sum(1 for r in retried if r["retry_ok"]),
            len(retried), len(v)))
    if kills:
        line("sealer SIGKILLed at a random point", kills, v1)
    if fills is None or fills:
        line("volume fills up during seal", fills, v2)
        if fills:
            room = [r for r in fills if r["mode"] == "room"]
            print("  (fill: the volume was full before the seal ended in %d of %d runs; %d seals exited 8, "
                  "volume full, the others published; %d runs had room for the manifest but not READY, %d of "
                  "them replacing a READY cache that stayed READY)" % (
                      sum(1 for r in fills if r["full_during_seal"]), len(fills),
                      sum(1 for r in fills if r["seal_exit"] == 8),
                      sum(1 for r in room if r["free_pages"] == r["manifest_pages"]),
                      sum(1 for r in room if r["free_pages"] == r["manifest_pages"] and r["ready"] == "old")))
    for v in violations:
        print("VIOLATION: " + v)
    sys.exit(1 if violations else 0)


if __name__ == "__main__":
    main()
