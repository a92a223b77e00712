#!/usr/bin/env python3
"""The Dockerfiles in images/ and scripts/build-images.sh cannot drift.

Builds every image with images/oci_image.py from its Dockerfile (into a
temporary directory, from the CMake build directory's binaries) and checks
each archive against what the Dockerfile says, read independently here:
- the files of the final stage's COPY lines, and only those plus the shared
  objects ldd names, /etc/passwd and /etc/group (non-scratch bases) and the
  CA bundle (when the Dockerfile installs ca-certificates);
- USER and ENTRYPOINT in the image config;
- the user is not root, /etc/passwd has nonroot 65532, no shell in the
  operator, initwarm and pause images;
- building twice gives the same digest (reproducible).
Also checks scripts/build-images.sh names exactly these Dockerfiles.
Usage: images_test.py --build-dir BUILD
"""
import argparse
import io
import json
import os
import re
import subprocess
import sys
import tarfile
import tempfile

ROOT = os.path.normpath(os.path.join(os.path.dirname(__file__), "..", ".."))
TOOL = os.path.join(ROOT, "images", "oci_image.py")
IMAGES = ["operator", "initwarm", "pause", "warmup-test"]
# Built by build-images.sh too, but not here: it needs the pinned Triton
# wheel (pip); tests/node/jit_cold_start_test.sh builds it and runs it.
NOT_BUILT_HERE = ["jit-workload"]
NEED_BUILD = {"operator": "operator/kernelcache-operator", "initwarm": "initwarm/initwarm",
              "kc-converge": "initwarm/kc-converge", "pause": None, "warmup-test": None}


def dockerfile_final_stage(path):
    """USER, ENTRYPOINT and COPY destinations, parsed with regexes (not the tool's parser)."""
    text = open(path).read().replace("\\\n", " ")
    stage = re.split(r"(?im)^FROM\s", text)[-1]
    base = stage.split()[0]
    user = re.search(r"(?im)^USER\s+(\S+)", stage)
    entry = re.search(r"(?im)^ENTRYPOINT\s+(\[.*\])", stage)
    copies = re.findall(r"(?im)^COPY\s+--from=build\s+(\S+)\s+(\S+)", stage)
    return {"base": base, "user": user.group(1) if user else None,
            "entrypoint": json.loads(entry.group(1)) if entry else None,
            "copies": copies, "ca": "ca-certificates" in text}


def layer_file(archive, path):
    """Text of `path` in the (single) layer of an OCI archive, "" if absent."""
    with tarfile.open(archive) as outer:
        index = json.load(outer.extractfile("index.json"))
        blob = lambda d: outer.extractfile("blobs/sha256/" + d.split(":")[1]).read()
        manifest = json.loads(blob(index["manifests"][0]["digest"]))
        with tarfile.open(fileobj=io.BytesIO(blob(manifest["layers"][0]["digest"]))) as layer:
            try:
                return layer.extractfile(path).read().decode()
            except KeyError:
                return ""


def run(args, **kw):
    return subprocess.run(args, capture_output=True, text=True, **kw)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build-dir", required=True)
    a = ap.parse_args()
    failures = []

    def check(cond, msg):
        if not cond:
            failures.append(msg)

    script = open(os.path.join(ROOT, "scripts", "build-images.sh")).read()
    named = sorted(set(re.findall(r"images/Dockerfile\.([a-z-]+)", script)))
    present = sorted(f.split(".", 1)[1] for f in os.listdir(os.path.join(ROOT, "images"))
                     if f.startswith("Dockerfile."))
    every = sorted(IMAGES + NOT_BUILT_HERE)
    check(named == present == every,
          f"build-images.sh names {named}, images/ has {present}, test expects {every}")

    with tempfile.TemporaryDirectory() as tmp:
        # pause is compiled by build-images.sh; do the same here.
        os.makedirs(os.path.join(tmp, "images"))
        r = run(["gcc", "-Os", "-static", "-s", "-o", os.path.join(tmp, "images", "pause"),
                 os.path.join(ROOT, "images", "pause", "pause.c")])
        check(r.returncode == 0, f"gcc pause.c: {r.stderr}")
        for rel in filter(None, NEED_BUILD.values()):
            src = os.path.join(a.build_dir, rel)
            if not os.path.exists(src):
                print(f"images_test: {src} not built; build the project first", file=sys.stderr)
                return 1
            os.makedirs(os.path.dirname(os.path.join(tmp, rel)), exist_ok=True)
            os.symlink(src, os.path.join(tmp, rel))
        for name in IMAGES:
            df = os.path.join(ROOT, "images", "Dockerfile." + name)
            want = dockerfile_final_stage(df)
            digests = []
            for i in range(2):
                out = os.path.join(tmp, f"{name}-{i}.tar")
                r = run([sys.executable, TOOL, "build", "--dockerfile", df, "--build-dir", tmp,
                         "--name", f"kernelcache.local/{name}:dev", "--out", out, "--strip"])
                check(r.returncode == 0, f"{name}: build failed: {r.stderr}")
                if r.returncode != 0:
                    break
                info = json.loads(run([sys.executable, TOOL, "inspect", out]).stdout)
                digests.append(info["digest"])
            if len(digests) != 2:
                continue
            check(digests[0] == digests[1], f"{name}: not reproducible: {digests}")
            cfg = info["config"]
            check(cfg.get("User") == want["user"],
                  f"{name}: image user {cfg.get('User')!r}, Dockerfile USER {want['user']!r}")
            check(cfg.get("Entrypoint") == want["entrypoint"],
                  f"{name}: entrypoint {cfg.get('Entrypoint')}, Dockerfile {want['entrypoint']}")
            check(want["user"] is not None and not want["user"].startswith("0"),
                  f"{name}: runs as root ({want['user']})")
            files = {f["path"]: f for f in info["files"] if f["type"] == "file"}
            for src, dst in want["copies"]:
                check(dst in files and int(files[dst]["mode"], 8) & 0o111,
                      f"{name}: {dst} (COPY {src}) missing or not executable")
            allowed = {dst for _, dst in want["copies"]}
            if want["base"] != "scratch":
                allowed |= {"/etc/passwd", "/etc/group"}
                if want["ca"]:
                    allowed.add("/etc/ssl/certs/ca-certificates.crt")
            extra = {p for p in files if p not in allowed and ".so" not in os.path.basename(p)}
            check(not extra, f"{name}: files the Dockerfile does not name: {sorted(extra)}")
            if want["base"] != "scratch":
                passwd = layer_file(os.path.join(tmp, f"{name}-0.tar"), "etc/passwd")
                check("nonroot:x:65532:65532:" in passwd, f"{name}: /etc/passwd lacks nonroot 65532")
            if name != "warmup-test":
                check(not any(p in files for p in ("/bin/sh", "/bin/bash", "/bin/busybox")),
                      f"{name}: has a shell")
            print(f"{name}: {info['digest']} {info['layer_bytes']} bytes, user {cfg.get('User')}, "
                  f"entrypoint {cfg.get('Entrypoint')}, {len(files)} files")
        # More names for one image (build-images.sh: :dev and the release's
        # version), and retag (an older release's :dev images under its
        # version, for the upgrade test): same image, same digest.
        pause = os.path.join(tmp, "pause-0.tar")
        two = os.path.join(tmp, "pause-two.tar")
        r = run([sys.executable, TOOL, "build", "--dockerfile", os.path.join(ROOT, "images", "Dockerfile.pause"),
                 "--build-dir", tmp, "--name", "kernelcache.local/pause:dev",
                 "--name", "kernelcache.local/pause:9.8.7", "--out", two, "--strip"])
        check(r.returncode == 0, f"build with two names: {r.stderr}")
        if r.returncode == 0:
            one, both = (json.loads(run([sys.executable, TOOL, "inspect", f]).stdout) for f in (pause, two))
            check(both["names"] == ["kernelcache.local/pause:dev", "kernelcache.local/pause:9.8.7"],
                  f"two names: {both['names']}")
            check(both["digest"] == one["digest"], "a second name changed the image digest")
            moved = os.path.join(tmp, "pause-moved.tar")
            r = run([sys.executable, TOOL, "retag", two, "--name", "kernelcache.local/pause:0.1.0", "--out", moved])
            check(r.returncode == 0, f"retag: {r.stderr}")
            if r.returncode == 0:
                m = json.loads(run([sys.executable, TOOL, "inspect", moved]).stdout)
                check(m["names"] == ["kernelcache.local/pause:0.1.0"], f"retag names: {m['names']}")
                check(m["digest"] == one["digest"] and m["files"] == one["files"], "retag changed the image")
    for f in failures:
        print("FAIL: " + f, file=sys.stderr)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
