#!/usr/bin/env python3
"""Builds an OCI image archive from one of images/Dockerfile.* without Docker.

The Dockerfile is the single source of truth: the final stage's COPY
--from=build lines name the files, USER the user, ENTRYPOINT/CMD/ENV the
config. A source under /build/ is taken from the CMake build directory
(--build-dir, the same layout the Dockerfile's build stage produces); any
other source path is the file of the same Debian package installed on this
machine (scripts/install-deps.sh installs them). A source that is a
directory is copied as a tree (files, symlinks followed). Dynamically linked
binaries and shared objects get exactly the shared objects `ldd` names. A base other than `scratch`
(distroless, debian-slim) also gets /etc/passwd and /etc/group with the
distroless users (root 0, nonroot 65532), /tmp (1777), a PATH, and, when the
Dockerfile installs ca-certificates, /etc/ssl/certs/ca-certificates.crt.

The archive is an OCI image layout tar (oci-layout, index.json, blobs/) with
the annotation io.containerd.image.name, for `ctr -n k8s.io images import`.
Every tar is deterministic: sorted entries, mtime 0, numeric owners 0:0
(and the home directory 65532), no user/group names, so the same inputs give
the same digest.

Usage:
  oci_image.py build --dockerfile F --build-dir D --name REF [--name REF] --out FILE.tar [--strip]
  oci_image.py describe --dockerfile F        what the Dockerfile says (JSON)
  oci_image.py inspect FILE.tar               name(s), digest, config, files (JSON)
  oci_image.py retag FILE.tar --name REF [--name REF] --out OUT.tar   same image, new names
"""

import argparse
import hashlib
import io
import json
import os
import re
import shlex
import subprocess
import sys
import tarfile
import tempfile

DEFAULT_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
PASSWD = ("root:x:0:0:root:/root:/sbin/nologin\n"
          "nobody:x:65534:65534:nobody:/nonexistent:/sbin/nologin\n"
          "nonroot:x:65532:65532:nonroot:/home/nonroot:/sbin/nologin\n")
GROUP = "root:x:0:\nnobody:x:65534:\nnonroot:x:65532:\n"
CA_BUNDLE = "/etc/ssl/certs/ca-certificates.crt"


class Error(Exception):
    pass


def parse_dockerfile(path):
    """The final stage of a Dockerfile: base, copies, user, entrypoint, env."""
    with open(path) as f:
        text = f.read()
    text = re.sub(r"\\\n", " ", text)  # join continuation lines
    lines = [l.strip() for l in text.splitlines()]
    lines = [l for l in lines if l and not l.startswith("#")]
    starts = [i for i, l in enumerate(lines) if l.upper().startswith("FROM ")]
    if not starts:
        raise Error(f"{path}: no FROM line")
    all_text = "\n".join(lines)
    stage = lines[starts[-1]:]
    out = {"base": stage[0].split()[1], "copies": [], "user": "", "entrypoint": [], "cmd": [],
           "env": {}, "ca_certificates": "ca-certificates" in all_text}
    for line in stage[1:]:
        word, _, rest = line.partition(" ")
        word = word.upper()
        rest = rest.strip()
        if word == "COPY":
            args = [a for a in shlex.split(rest) if not a.startswith("--")]
            if "--from=build" not in rest or len(args) != 2:
                raise Error(f"{path}: only 'COPY --from=build SRC DST' is supported, got: {line}")
            out["copies"].append({"src": args[0], "dst": args[1]})
        elif word == "USER":
            out["user"] = rest
        elif word in ("ENTRYPOINT", "CMD"):
            try:
                value = json.loads(rest)
            except json.JSONDecodeError:
                raise Error(f"{path}: {word} must be a JSON array (exec form): {line}")
            out["entrypoint" if word == "ENTRYPOINT" else "cmd"] = value
        elif word == "ENV":
            k, _, v = rest.partition("=")
            out["env"][k.strip()] = v.strip()
        elif word == "RUN":
            if out["base"] == "scratch":
                raise Error(f"{path}: RUN in a scratch stage cannot be reproduced here")
            # apt-get installs in the runtime stage: their libraries come from
            # ldd, ca-certificates from the host bundle (see module doc).
        else:
            raise Error(f"{path}: unsupported instruction in the final stage: {line}")
    return out


def ldd_deps(path):
    """Shared objects the dynamic loader maps for `path` (absolute paths)."""
    r = subprocess.run(["ldd", path], capture_output=True, text=True)
    if r.returncode != 0 or "not a dynamic executable" in r.stdout + r.stderr:
        return []
    deps = []
    for line in r.stdout.splitlines():
        line = line.strip()
        if "=>" in line:
            target = line.split("=>", 1)[1].strip().split(" ")[0]
            if target == "not":
                raise Error(f"{path}: missing shared object: {line}")
            if target.startswith("/"):
                deps.append(target)
        elif line.startswith("/"):
            deps.append(line.split(" ")[0])  # the interpreter
    return deps


def is_elf(path):
    with open(path, "rb") as f:
        return f.read(4) == b"\x7fELF"


def tree_files(src, dst):
    """(destination, source) for every file under directory src, sorted."""
    pairs = []
    for d, dirs, files in os.walk(src, followlinks=True):
        dirs.sort()
        for f in sorted(files):
            path = os.path.join(d, f)
            if os.path.isfile(path):
                pairs.append((os.path.join(dst, os.path.relpath(path, src)), path))
    return pairs


class Layer:
    """A deterministic tar of regular files, directories and symlinks."""

    def __init__(self):
        self.entries = {}  # path (no leading /) -> (kind, data/target, mode, uid)

    def add_dir(self, path, mode=0o755, uid=0):
        path = path.strip("/")
        parts = path.split("/")
        for i in range(1, len(parts)):
            self.entries.setdefault("/".join(parts[:i]), ("dir", None, 0o755, 0))
        self.entries[path] = ("dir", None, mode, uid)

    def add_file(self, path, data, mode):
        path = path.strip("/")
        parent = os.path.dirname(path)
        if parent and parent not in self.entries:
            self.add_dir(parent)
        self.entries[path] = ("file", data, mode, 0)

    def add_host_file(self, dst, src, strip=False):
        real = os.path.realpath(src)
        with open(real, "rb") as f:
            data = f.read()
        if strip and data[:4] == b"\x7fELF":
            with tempfile.TemporaryDirectory() as tmp:
                out = os.path.join(tmp, "stripped")
                r = subprocess.run(["objcopy", "--strip-debug", real, out], capture_output=True)
                if r.returncode != 0:
                    raise Error(f"objcopy --strip-debug {real}: {r.stderr.decode().strip()}")
                with open(out, "rb") as f:
                    data = f.read()
        mode = 0o755 if os.stat(real).st_mode & 0o111 else 0o644
        self.add_file(dst, data, mode)

    def tar_bytes(self):
        buf = io.BytesIO()
        with tarfile.open(fileobj=buf, mode="w", format=tarfile.PAX_FORMAT) as tar:
            for path in sorted(self.entries):
                kind, data, mode, uid = self.entries[path]
                info = tarfile.TarInfo(path)
                info.mtime = 0
                info.uid = info.gid = uid
                info.uname = info.gname = ""
                info.mode = mode
                if kind == "dir":
                    info.type = tarfile.DIRTYPE
                    tar.addfile(info)
                else:
                    info.size = len(data)
                    tar.addfile(info, io.BytesIO(data))
        return buf.getvalue()

    def files(self):
        return sorted("/" + p for p, e in self.entries.items() if e[0] == "file")


def rootfs(spec, build_dir, strip):
    layer = Layer()
    for c in spec["copies"]:
        src = c["src"]
        if src.startswith("/build/"):
            src = os.path.join(build_dir, src[len("/build/"):])
        if os.path.isdir(src):
            pairs = tree_files(src, c["dst"])
        elif os.path.isfile(src):
            pairs = [(c["dst"], src)]
        else:
            raise Error(f"COPY source {c['src']} not found at {src} (build it first)")
        for dst, path in pairs:
            layer.add_host_file(dst, path, strip)
            if is_elf(path):
                for dep in ldd_deps(path):
                    layer.add_host_file(dep, dep)
    if spec["base"] != "scratch":
        layer.add_file("etc/passwd", PASSWD.encode(), 0o644)
        layer.add_file("etc/group", GROUP.encode(), 0o644)
        layer.add_dir("tmp", 0o1777)
        layer.add_dir("home/nonroot", 0o700, 65532)
        if spec["ca_certificates"]:
            layer.add_host_file(CA_BUNDLE, CA_BUNDLE)
    return layer


def blob(blobs, data):
    digest = "sha256:" + hashlib.sha256(data).hexdigest()
    blobs[digest] = data
    return digest


def index_json(names, manifest_digest, manifest_size):
    """The archive's index.json: one entry per name, all of one manifest."""
    manifests = []
    for name in names:
        tag = name.rsplit(":", 1)[1] if ":" in name.rsplit("/", 1)[-1] else "latest"
        manifests.append({"mediaType": "application/vnd.oci.image.manifest.v1+json",
                          "digest": manifest_digest, "size": manifest_size,
                          "platform": {"architecture": "amd64", "os": "linux"},
                          "annotations": {"io.containerd.image.name": name,
                                          "org.opencontainers.image.ref.name": tag}})
    index = {"schemaVersion": 2, "mediaType": "application/vnd.oci.image.index.v1+json",
             "manifests": manifests}
    return json.dumps(index, sort_keys=True, separators=(",", ":")).encode()


def build(spec, build_dir, names, strip=False):
    """The archive and its manifest digest; the first name is also in the
    config's history (so it is part of the digest), the others only tags."""
    name = names[0]
    layer = rootfs(spec, build_dir, strip)
    layer_tar = layer.tar_bytes()
    blobs = {}
    layer_digest = blob(blobs, layer_tar)
    env = {} if spec["base"] == "scratch" else {"PATH": DEFAULT_PATH}
    env.update(spec["env"])
    cfg = {"User": spec["user"], "Env": [f"{k}={v}" for k, v in env.items()],
           "Entrypoint": spec["entrypoint"]}
    if spec["cmd"]:
        cfg["Cmd"] = spec["cmd"]
    config = {"architecture": "amd64", "os": "linux", "created": "1970-01-01T00:00:00Z",
              "config": cfg, "rootfs": {"type": "layers", "diff_ids": [layer_digest]},
              "history": [{"created": "1970-01-01T00:00:00Z",
                           "created_by": "images/oci_image.py (" + name + ")"}]}
    config_bytes = json.dumps(config, sort_keys=True, separators=(",", ":")).encode()
    config_digest = blob(blobs, config_bytes)
    manifest = {"schemaVersion": 2, "mediaType": "application/vnd.oci.image.manifest.v1+json",
                "config": {"mediaType": "application/vnd.oci.image.config.v1+json",
                           "digest": config_digest, "size": len(config_bytes)},
                "layers": [{"mediaType": "application/vnd.oci.image.layer.v1.tar",
                            "digest": layer_digest, "size": len(layer_tar)}]}
    manifest_bytes = json.dumps(manifest, sort_keys=True, separators=(",", ":")).encode()
    manifest_digest = blob(blobs, manifest_bytes)
    top = Layer()
    top.add_file("oci-layout", b'{"imageLayoutVersion":"1.0.0"}', 0o644)
    top.add_file("index.json", index_json(names, manifest_digest, len(manifest_bytes)), 0o644)
    for digest, data in blobs.items():
        top.add_file("blobs/sha256/" + digest.split(":")[1], data, 0o644)
    return top.tar_bytes(), manifest_digest


def inspect(path):
    with tarfile.open(path) as tar:
        def read(name):
            return tar.extractfile(name).read()
        index = json.loads(read("index.json"))
        desc = index["manifests"][0]
        manifest = json.loads(read("blobs/sha256/" + desc["digest"].split(":")[1]))
        config = json.loads(read("blobs/sha256/" + manifest["config"]["digest"].split(":")[1]))
        files, size = [], 0
        for l in manifest["layers"]:
            data = read("blobs/sha256/" + l["digest"].split(":")[1])
            size += len(data)
            with tarfile.open(fileobj=io.BytesIO(data)) as lt:
                for m in lt.getmembers():
                    files.append({"path": "/" + m.name, "type": "dir" if m.isdir() else "file",
                                  "mode": oct(m.mode), "uid": m.uid, "size": m.size})
    names = [m["annotations"]["io.containerd.image.name"] for m in index["manifests"]]
    return {"name": names[0], "names": names, "digest": desc["digest"],
            "config": config["config"], "layer_bytes": size, "files": files}


def retag(path, names):
    """The archive at `path` with its names replaced by `names` (same image,
    same digest): e.g. an older release's :dev images under its version."""
    with tarfile.open(path) as tar:
        members = {m.name: tar.extractfile(m).read() for m in tar.getmembers() if m.isfile()}
    desc = json.loads(members["index.json"])["manifests"][0]
    top = Layer()
    for name, data in members.items():
        if name == "index.json":
            data = index_json(names, desc["digest"], desc["size"])
        top.add_file(name, data, 0o644)
    return top.tar_bytes()


def write(out, data):
    tmp = out + ".tmp"
    with open(tmp, "wb") as f:
        f.write(data)
    os.replace(tmp, out)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    b = sub.add_parser("build")
    b.add_argument("--dockerfile", required=True)
    b.add_argument("--build-dir", required=True)
    b.add_argument("--name", required=True, action="append",
                   help="image reference; repeat for more tags of the same image")
    b.add_argument("--out", required=True)
    b.add_argument("--strip", action="store_true", help="copy binaries without debug sections")
    d = sub.add_parser("describe")
    d.add_argument("--dockerfile", required=True)
    i = sub.add_parser("inspect")
    i.add_argument("archive")
    r = sub.add_parser("retag")
    r.add_argument("archive")
    r.add_argument("--name", required=True, action="append")
    r.add_argument("--out", required=True)
    a = ap.parse_args()
    try:
        if a.cmd == "describe":
            print(json.dumps(parse_dockerfile(a.dockerfile), indent=1, sort_keys=True))
        elif a.cmd == "inspect":
            print(json.dumps(inspect(a.archive), indent=1, sort_keys=True))
        elif a.cmd == "retag":
            write(a.out, retag(a.archive, a.name))
            print(f"{' '.join(a.name)} {inspect(a.out)['digest']} {a.out}")
        else:
            data, digest = build(parse_dockerfile(a.dockerfile), a.build_dir, a.name, a.strip)
            write(a.out, data)
            print(f"{a.name[0]} {digest} {len(data)} {a.out}")
    except (Error, OSError, KeyError, ValueError) as e:
        print(f"oci_image.py: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
