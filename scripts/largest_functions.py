#!/usr/bin/env python3
"""The longest function definitions in C++ source files, by line count.

Usage: scripts/largest_functions.py [--top N] [--min LINES] PATH...
PATH is a .cc/.h file or a folder (searched for *.cc; *_test.cc and fuzz
corpora are skipped unless --tests). Prints "LINES  FILE:LINE  NAME", longest
first. A function's lines run from the line of its name to its closing brace.

A brace counter, not a parser: comments, string and character literals are
blanked first; a `{` opens a function body when the text before it (back to
the previous `;`, `{` or `}`) has a parameter list and is not a namespace,
class, enum or an `= {` initializer. Constructor initializer lists
(`a_{x}`) are skipped. Good enough for code that clang-format has laid out.
"""
import argparse
import os
import re
import sys

SCOPE_RE = re.compile(r'^\s*(template\s*<.*>\s*)?(namespace\b|class\b|struct\b|union\b|extern\s+"C")')
ENUM_RE = re.compile(r'^\s*enum\b')
NAME_RE = re.compile(r'([~A-Za-z_][\w:~<>]*(?:operator\s*[^\s(]+)?)\s*$')


def blank_comments_and_strings(text):
    """Replace comments and literals with spaces, keeping newlines."""
    out = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith('//', i):
            j = text.find('\n', i)
            j = n if j < 0 else j
            out.append(' ' * (j - i))
            i = j
        elif text.startswith('/*', i):
            j = text.find('*/', i + 2)
            j = n if j < 0 else j + 2
            out.append(re.sub(r'[^\n]', ' ', text[i:j]))
            i = j
        elif c == 'R' and text.startswith('R"', i):
            m = re.match(r'R"([^(\s]*)\(', text[i:])
            if not m:
                out.append(c)
                i += 1
                continue
            end = ')' + m.group(1) + '"'
            j = text.find(end, i + m.end())
            j = n if j < 0 else j + len(end)
            out.append(re.sub(r'[^\n]', ' ', text[i:j]))
            i = j
        elif c in '"\'':
            if c == "'" and i > 0 and (text[i - 1].isalnum()):  # digit separator 1'000
                out.append(' ')
                i += 1
                continue
            j = i + 1
            while j < n and text[j] != c and text[j] != '\n':
                j += 2 if text[j] == '\\' else 1
            j = min(j + 1, n)
            out.append(re.sub(r'[^\n]', ' ', text[i:j]))
            i = j
        elif c == '#' and (i == 0 or text[i - 1] == '\n'):  # preprocessor line
            j = i
            while True:
                k = text.find('\n', j)
                if k < 0:
                    k = n
                    break
                if k > 0 and text[k - 1] == '\\':
                    j = k + 1
                    continue
                break
            out.append(re.sub(r'[^\n]', ' ', text[i:k]))
            i = k
        else:
            out.append(c)
            i += 1
    return ''.join(out)


def match_brace(text, i):
    """Index just past the `}` matching the `{` at i."""
    depth = 0
    n = len(text)
    while i < n:
        if text[i] == '{':
            depth += 1
        elif text[i] == '}':
            depth -= 1
            if depth == 0:
                return i + 1
        i += 1
    return n


def function_name(header):
    """The declarator's name: the identifier before the parameter list."""
    depth = 0
    # The parameter list is the first '(' at angle/paren depth 0 that follows a name.
    for k, ch in enumerate(header):
        if ch == '(' and depth == 0:
            m = NAME_RE.search(header[:k])
            if m:
                return m.group(1).strip()
            return None
        if ch == '<':
            depth += 1
        elif ch == '>' and depth > 0:
            depth -= 1
    return None


def functions(text):
    """(name, first_line, last_line) of every function defined in text."""
    clean = blank_comments_and_strings(text)
    found = []
    n = len(clean)
    i = 0
    start = 0  # start of the current declaration's text
    while i < n:
        ch = clean[i]
        if ch in ';}':
            start = i + 1
            i += 1
            continue
        if ch != '{':
            i += 1
            continue
        header = clean[start:i]
        flat = ' '.join(header.split())
        if SCOPE_RE.match(flat) and '(' not in flat.split('{')[0].split(':')[0]:
            start = i + 1  # enter the scope: its members are declarations
            i += 1
            continue
        if ENUM_RE.match(flat) or flat.endswith('=') or '(' not in flat:
            i = match_brace(clean, i)  # an initializer or an enum body
            continue
        # A constructor's initializer list: a brace right after a name or '>'.
        close_paren = flat.rfind(')')
        tail = flat[close_paren + 1:] if close_paren >= 0 else ''
        if re.match(r'^\s*(const\s*)?(noexcept\s*)?:', tail) and i > 0 and (
                clean[i - 1].isalnum() or clean[i - 1] in '_>'):
            i = match_brace(clean, i)
            continue
        name = function_name(flat)
        end = match_brace(clean, i)
        if name:
            lead = len(header) - len(header.lstrip())
            first = clean.count('\n', 0, start + lead) + 1
            last = clean.count('\n', 0, end - 1) + 1
            found.append((name, first, last))
        i = end
        start = end
    return found


def source_files(paths, tests):
    for path in paths:
        if os.path.isfile(path):
            yield path
            continue
        for root, dirs, files in os.walk(path):
            dirs[:] = sorted(d for d in dirs if d not in ('build', 'corpus', '.git'))
            for f in sorted(files):
                if f.endswith('.cc') and (tests or not f.endswith('_test.cc')):
                    yield os.path.join(root, f)


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument('--top', type=int, default=20)
    ap.add_argument('--min', type=int, default=0)
    ap.add_argument('--tests', action='store_true', help='include *_test.cc')
    ap.add_argument('paths', nargs='+')
    args = ap.parse_args(argv)
    rows = []
    for path in source_files(args.paths, args.tests):
        with open(path, encoding='utf-8', errors='replace') as f:
            for name, first, last in functions(f.read()):
                rows.append((last - first + 1, path, first, name))
    rows.sort(key=lambda r: (-r[0], r[1], r[2]))
    for lines, path, first, name in rows[:args.top]:
        if lines >= args.min:
            print(f'{lines:5d}  {path}:{first}  {name}')
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
