"""Loaded by a model process when bench/gpu/erofs_trace is on PYTHONPATH:
logs every write-side filesystem call that fails (EROFS, EACCES, ...) with
its path to $KC_FS_TRACE, so a read-only view's silent fallbacks show up by
name even where the framework catches the error."""
import builtins
import os

_LOG = os.environ.get("KC_FS_TRACE")


def _note(what, path, err):
    if _LOG:
        with open(_LOG, "a") as f:
            f.write(f"{what}\t{getattr(err, 'errno', '')}\t{path}\n")


def _wrap(name, mod, is_write):
    orig = getattr(mod, name)

    def w(*a, **k):
        try:
            return orig(*a, **k)
        except OSError as e:
            if is_write(a, k):
                _note(name, a[0] if a else "", e)
            raise
    setattr(mod, name, w)


def _open_writes(a, k):
    mode = a[1] if len(a) > 1 else k.get("mode", "r")
    return isinstance(mode, str) and any(c in mode for c in "wax+")


def _os_open_writes(a, k):
    flags = a[1] if len(a) > 1 else k.get("flags", 0)
    return bool(flags & (os.O_WRONLY | os.O_RDWR | os.O_CREAT))


if _LOG:
    _wrap("open", builtins, _open_writes)
    _wrap("open", os, _os_open_writes)
    for n in ("mkdir", "makedirs", "rename", "replace", "unlink", "utime"):
        _wrap(n, os, lambda a, k: True)
