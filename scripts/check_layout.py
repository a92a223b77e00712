#!/usr/bin/env python3
"""Checks that the code keeps the layout docs/architecture.md describes.

Usage: scripts/check_layout.py [REPO_ROOT]

1. docs/architecture.md's table names every CMake library and program
   (add_library, add_executable; tests excepted), and each row's last
   column names exactly the project libraries (kc_*) the row's targets
   link (target_link_libraries; a ${VAR} that set() lists plain names in
   reads as those names, and so does `VAR` in the column), and every
   outside library they link.
2. The operator's include rules:
   - operator/decide/ and operator/webhook/ (the pure libraries) include
     only core/, api/, base/ and their own folder (their tests also the
     test-only testing/ and operator/testing/);
   - operator/serving/ includes no operator/decide/ or operator/controller/;
   - no library under operator/ includes the program (operator/config.h,
     operator/wiring.h).
3. initwarm's include rules: a library folder under initwarm/ includes
   only its own folder and the initwarm folders below it (INITWARM_BELOW,
   the arrows of docs/architecture.md), so no library includes the
   command line (initwarm/cli/) and the libraries form no cycle. Tests
   (*_test.cc), initwarm/testing/ and the programs (initwarm/*.cc) may
   include any.
Prints one line per breach ("FILE: includes X (rule)") and exits 1 if
there is any; prints a summary and exits 0 otherwise.
"""
import os
import re
import subprocess
import sys

INCLUDE_RE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)
LIBRARY_RE = re.compile(r'add_library\(\s*([A-Za-z0-9_\-]+)')
PROGRAM_RE = re.compile(r'add_executable\(\s*([A-Za-z0-9_\-]+)')
LINK_RE = re.compile(r'target_link_libraries\(\s*([A-Za-z0-9_\-]+)([^)]*)\)')
SET_RE = re.compile(r'\bset\(\s*([A-Za-z0-9_]+)\s([^)]*)\)')
PLAIN_RE = re.compile(r'[A-Za-z0-9_\-:]+$')
TICKED_RE = re.compile(r'`([^`]+)`')
# An outside library as CMake names it -> the word the table uses for it.
# Absent: system libraries the table does not list (threads; libdl is named
# where a program links it).
OUTSIDE = {
    'nlohmann_json::nlohmann_json': 'nlohmann/json',
    'OpenSSL::SSL': 'OpenSSL',
    'OpenSSL::Crypto': 'OpenSSL',
    '${KC_STATIC_CRYPTO}': 'OpenSSL',
    'cpprestsdk::cpprest': 'cpprestsdk',
    'yaml-cpp': 'yaml-cpp',
    'Boost::headers': 'Boost',
    'Boost::boost': 'Boost',
    'GTest::gtest': 'googletest',
    'GTest::gtest_main': 'googletest',
    '${TORCH_LIBRARIES}': 'libtorch',
}
SYSTEM = {'Threads::Threads', '${CMAKE_DL_LIBS}', 'PUBLIC', 'PRIVATE', 'INTERFACE'}

PURE = ('operator/decide/', 'operator/webhook/')
PURE_MAY = ('core/', 'api/', 'base/')
TEST_MAY = ('testing/', 'operator/testing/')  # tests of a pure library may also use these
# The initwarm folders each initwarm library folder may include besides its own.
INITWARM_BELOW = {
    'fs': (),
    'failpoint': (),
    'aoti': (),
    'gpu': ('failpoint',),
    'net': (),
    'cache': ('fs', 'failpoint', 'aoti'),
    'misses': ('cache', 'gpu', 'net', 'fs'),
    'gate': ('misses', 'cache', 'gpu', 'net', 'fs'),
    'warmup': ('net', 'fs'),
    'cli': ('gate', 'misses', 'warmup', 'cache', 'gpu', 'net', 'fs', 'failpoint', 'aoti'),
}


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
    parts = path.split('/')
    if (parts[0] == 'initwarm' and len(parts) > 2 and parts[1] in INITWARM_BELOW
            and not path.endswith('_test.cc') and include.startswith('initwarm/')):
        target = include.split('/')[1] if include.count('/') > 1 else ''
        if target != parts[1] and target not in INITWARM_BELOW[parts[1]]:
            return (f'initwarm/{parts[1]}/ includes only its own folder and the initwarm '
                    'folders below it')
    return None


def table_rows(doc):
    """(targets, links column) of each row of the first table naming a target."""
    rows = []
    for line in doc.split('\n'):
        if not line.startswith('| '):
            if rows:
                break
            continue
        cells = [c.strip() for c in line.strip().strip('|').split('|')]
        if len(cells) < 4:
            continue
        targets = set(TICKED_RE.findall(cells[1]))
        if targets:
            rows.append((targets, cells[3]))
    return rows


def link_problems(rows, links, lists=None):
    """Rows whose last column does not name what their targets link."""
    problems = []
    for targets, column in rows:
        linked = set()
        for t in targets:
            linked.update(links.get(t, []))
        ticked = TICKED_RE.findall(column)
        named = {n for n in ticked if n.startswith('kc_')}
        for n in ticked:
            named.update(l for l in (lists or {}).get(n, []) if l.startswith('kc_'))
        ours = {l for l in linked if l.startswith('kc_')} - targets - {'kc_testing'}
        label = ', '.join(sorted(targets))
        for lib in sorted(ours - named):
            problems.append(f'docs/architecture.md: row {label} links {lib} but does not name it')
        for lib in sorted(named - {l for l in linked if l.startswith('kc_')} - {'kc_testing'}):
            if any(t in links for t in targets):
                problems.append(f'docs/architecture.md: row {label} names {lib} but links none')
        for lib in sorted(linked - SYSTEM):
            if lib.startswith('kc_') or lib in targets:
                continue
            word = OUTSIDE.get(lib)
            if word is None:
                problems.append(f'scripts/check_layout.py: no table word for {lib} (row {label})')
            elif word not in column:
                problems.append(f'docs/architecture.md: row {label} links {lib} but does not '
                                f'say {word}')
    return problems


def check(root):
    problems = []
    files = tracked_files(root)
    with open(os.path.join(root, 'docs/architecture.md'), encoding='utf-8') as f:
        doc = f.read()
    libraries, programs, links = set(), set(), {}
    texts = []
    for path in files:
        if os.path.basename(path) != 'CMakeLists.txt':
            continue
        with open(os.path.join(root, path), encoding='utf-8') as f:
            texts.append(re.sub(r'#[^\n]*', '', f.read()))
    # A list of plain names set() once (the static archives a program links
    # in order): its ${NAME} in a link reads as those names.
    lists = {}
    for text in texts:
        for name, items in SET_RE.findall(text):
            if items.split() and all(PLAIN_RE.match(i) for i in items.split()):
                lists[name] = items.split()
    for text in texts:
        libraries.update(LIBRARY_RE.findall(text))
        programs.update(p for p in PROGRAM_RE.findall(text) if not p.endswith('_test'))
        for target, items in LINK_RE.findall(text):
            for item in items.split():
                name = item[2:-1] if item.startswith('${') and item.endswith('}') else None
                links.setdefault(target, []).extend(lists.get(name, [item]))
    rows = table_rows(doc)
    in_table = set().union(*(t for t, _ in rows)) if rows else set()
    for lib in sorted(libraries):
        if lib not in in_table:
            problems.append(f'docs/architecture.md: does not name library {lib}')
    for prog in sorted(programs):
        if prog not in in_table:
            problems.append(f'docs/architecture.md: does not name program {prog}')
    problems += link_problems(rows, links, lists)
    checked = 0
    for path in files:
        if not path.startswith(('operator/', 'initwarm/')) or not path.endswith(('.cc', '.h')):
            continue
        checked += 1
        with open(os.path.join(root, path), encoding='utf-8') as f:
            for include in INCLUDE_RE.findall(f.read()):
                rule = include_breach(path, include)
                if rule:
                    problems.append(f'{path}: includes {include} ({rule})')
    return problems, len(libraries) + len(programs), checked


def main(argv):
    root = argv[0] if argv else os.path.join(os.path.dirname(os.path.abspath(__file__)), '..')
    problems, libraries, checked = check(root)
    for p in problems:
        print(p)
    if problems:
        return 1
    print(f'layout: {libraries} libraries and programs named with their links in '
          f'docs/architecture.md, '
          f'{checked} operator and initwarm files keep the include rules')
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
