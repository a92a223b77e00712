#!/usr/bin/env python3
"""Checks that the code keeps the layout docs/architecture.md describes.

Usage: scripts/check_layout.py [REPO_ROOT]

1. Every CMake library (add_library) is named in docs/architecture.md.
2. The operator's include rules:
   - operator/decide/ and operator/webhook/ (the pure libraries) include
     only core/, api/, base/ and their own folder (their tests also the
     test-only testing/ and operator/testing/);
   - operator/serving/ includes no operator/decide/ or operator/controller/;
   - no library under operator/ includes the program (operator/config.h,
     operator/wiring.h).
Prints one line per breach ("FILE: includes X (rule)") and exits 1 if
there is any; prints a summary and exits 0 otherwise.
"""
import os
import re
import subprocess
import sys

INCLUDE_RE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)
LIBRARY_RE = re.compile(r'add_library\(\s*([A-Za-z0-9_\-]+)')

PURE = ('operator/decide/', 'operator/webhook/')
PURE_MAY = ('core/', 'api/', 'base/')
TEST_MAY = ('testing/', 'operator/testing/')  # tests of a pure library may also use these


def tracked_files(root):
    out = subprocess.run(['git', 'ls-files'], cwd=root, capture_output=True, text=True,
                         check=False)
    if out.returncode == 0 and out.stdout:
        return out.stdout.split()
    files = []
    for base, dirs, names in os.walk(root):
        dirs[:] = [d for d in dirs if not d.startswith('.') and d != 'build']
        files += [os.path.relpath(os.path.join(base, n), root) for n in names]
    return files


def include_breach(path, include):
    """The rule `path` breaks by including `include`, or None."""
    folder = os.path.dirname(path) + '/'
    for pure in PURE:
        if path.startswith(pure):
            if include.startswith(PURE_MAY) or include.startswith(pure):
                return None
            if path.endswith('_test.cc') and include.startswith(TEST_MAY):
                return None
            return 'a pure library includes only core/, api/, base/ and its own folder'
    if path.startswith('operator/serving/') and include.startswith(
            ('operator/decide/', 'operator/controller/')):
        return 'serving does not include the decision library or the controller'
    if (path.startswith('operator/') and folder != 'operator/'
            and include in ('operator/config.h', 'operator/wiring.h')):
        return 'a library does not include the program'
    return None


def check(root):
    problems = []
    files = tracked_files(root)
    with open(os.path.join(root, 'docs/architecture.md'), encoding='utf-8') as f:
        doc = f.read()
    libraries = set()
    for path in files:
        if os.path.basename(path) != 'CMakeLists.txt':
            continue
        with open(os.path.join(root, path), encoding='utf-8') as f:
            libraries.update(LIBRARY_RE.findall(f.read()))
    for lib in sorted(libraries):
        if f'`{lib}`' not in doc:
            problems.append(f'docs/architecture.md: does not name library {lib}')
    checked = 0
    for path in files:
        if not path.startswith('operator/') or not path.endswith(('.cc', '.h')):
            continue
        checked += 1
        with open(os.path.join(root, path), encoding='utf-8') as f:
            for include in INCLUDE_RE.findall(f.read()):
                rule = include_breach(path, include)
                if rule:
                    problems.append(f'{path}: includes {include} ({rule})')
    return problems, len(libraries), checked


def main(argv):
    root = argv[0] if argv else os.path.join(os.path.dirname(os.path.abspath(__file__)), '..')
    problems, libraries, checked = check(root)
    for p in problems:
        print(p)
    if problems:
        return 1
    print(f'layout: {libraries} libraries named in docs/architecture.md, '
          f'{checked} operator files keep the include rules')
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
