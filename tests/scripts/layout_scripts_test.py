#!/usr/bin/env python3
"""Tests of scripts/largest_functions.py and scripts/check_layout.py."""
import os
import sys
import tempfile
import textwrap
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '..', 'scripts'))
import check_layout  # noqa: E402
import largest_functions  # noqa: E402

SAMPLE = textwrap.dedent('''\
    #include "a.h"
    // a comment with { braces }
    namespace kc {
    namespace {
    constexpr int kTable[] = {1, 2,
                              3};
    enum class Color { kRed, kBlue };
    struct Helper {
      int Twice(int x) const {
        return 2 * x;
      }
    };
    }  // namespace

    Widget::Widget(int a) : a_{a}, b_(a) {
      auto f = [&] { return "}"; };
      f();
    }

    int Sum(const std::vector<int>& v) {
      int s = 0;
      for (int x : v) {
        s += x;
      }
      /* } */
      return s;
    }
    }  // namespace kc
    ''')


class LargestFunctionsTest(unittest.TestCase):
    def test_finds_functions_with_their_lines(self):
        found = largest_functions.functions(SAMPLE)
        self.assertEqual(found, [('Twice', 9, 11), ('Widget::Widget', 15, 18), ('Sum', 20, 27)])

    def test_skips_initializers_enums_and_literals(self):
        names = [name for name, _, _ in largest_functions.functions(SAMPLE)]
        self.assertNotIn('kTable', names)
        self.assertNotIn('Color', names)

    def test_prints_longest_first(self):
        with tempfile.TemporaryDirectory() as d:
            with open(os.path.join(d, 'x.cc'), 'w') as f:
                f.write(SAMPLE)
            with open(os.path.join(d, 'x_test.cc'), 'w') as f:
                f.write('void Long() {\n\n\n\n\n\n\n\n\n\n}\n')
            out = _capture(lambda: largest_functions.main(['--top', '2', d]))
            lines = out.splitlines()
            self.assertEqual(len(lines), 2)
            self.assertTrue(lines[0].split()[2] == 'Sum', out)
            self.assertTrue(lines[1].split()[2] == 'Widget::Widget', out)


class CheckLayoutTest(unittest.TestCase):
    def test_include_rules(self):
        cases = [
            ('operator/decide/views.cc', 'core/api_types.h', None),
            ('operator/decide/views.cc', 'operator/decide/types.h', None),
            ('operator/decide/views.cc', 'kube/client.h', 'pure'),
            ('operator/decide/views.cc', 'operator/testing/objects.h', 'pure'),
            ('operator/decide/views_test.cc', 'operator/testing/objects.h', None),
            ('operator/decide/views_test.cc', 'operator/controller/caches.h', 'pure'),
            ('operator/decide/views.cc', 'operator/config.h', 'pure'),
            ('operator/webhook/mutate.cc', 'operator/decide/types.h', 'pure'),
            ('operator/serving/metrics.cc', 'operator/controller/caches.h', 'serving'),
            ('operator/serving/handlers.cc', 'operator/webhook/review.h', None),
            ('operator/controller/controller.cc', 'operator/config.h', 'program'),
            ('operator/main.cc', 'operator/config.h', None),
            ('initwarm/cache/seal.cc', 'initwarm/fs/fsutil.h', None),
            ('initwarm/cache/seal.cc', 'initwarm/cache/walk.h', None),
            ('initwarm/gate/wait.cc', 'initwarm/misses/misses.h', None),
            ('initwarm/misses/miss_watch.cc', 'initwarm/cli/cmd_common.h', 'below it'),
            ('initwarm/misses/misses.cc', 'initwarm/gate/wait.h', 'below it'),
            ('initwarm/fs/hasher.cc', 'initwarm/cache/walk.h', 'below it'),
            ('initwarm/cache/verify.cc', 'initwarm/testing/test_util.h', 'below it'),
            ('initwarm/warmup/drive_test.cc', 'initwarm/cli/commands.h', None),
            ('initwarm/main.cc', 'initwarm/cli/commands.h', None),
        ]
        for path, include, want in cases:
            got = check_layout.include_breach(path, include)
            if want is None:
                self.assertIsNone(got, (path, include))
            else:
                self.assertIsNotNone(got, (path, include))
                self.assertIn(want, got)

    def test_library_or_program_missing_from_the_doc_is_reported(self):
        with tempfile.TemporaryDirectory() as d:
            os.makedirs(os.path.join(d, 'docs'))
            os.makedirs(os.path.join(d, 'lib'))
            with open(os.path.join(d, 'docs', 'architecture.md'), 'w') as f:
                f.write('| folder | target | what | links |\n|---|---|---|---|\n'
                        '| `lib/` | `kc_named`, `tool` | | `kc_base` |\n'
                        '| `base/` | `kc_base` | | threads only |\n')
            with open(os.path.join(d, 'lib', 'CMakeLists.txt'), 'w') as f:
                f.write('add_library(kc_named STATIC a.cc)\nadd_library(kc_unnamed STATIC b.cc)\n'
                        'add_library(kc_base STATIC c.cc)\n'
                        'target_link_libraries(kc_named PUBLIC kc_base Threads::Threads)\n'
                        'add_executable(tool main.cc)\nadd_executable(hidden main.cc)\n'
                        'add_executable(lib_test t.cc)  # a test: need not be named\n')
            problems, named, _ = check_layout.check(d)
            self.assertEqual(named, 5)
            self.assertEqual(problems, ['docs/architecture.md: does not name library kc_unnamed',
                                        'docs/architecture.md: does not name program hidden'])

    def test_a_row_names_exactly_what_its_targets_link(self):
        links = {'kc_a': ['kc_b', 'kc_c', 'yaml-cpp', 'Threads::Threads'],
                 'prog': ['kc_a', '${CMAKE_DL_LIBS}']}
        cases = [
            ('all named', {'kc_a', 'prog'}, '`kc_b`, `kc_c`; private: yaml-cpp', []),
            ('a project library left out', {'kc_a'}, '`kc_b`, yaml-cpp',
             ['docs/architecture.md: row kc_a links kc_c but does not name it']),
            ('one named that is not linked', {'kc_a'}, '`kc_b`, `kc_c`, `kc_d`, yaml-cpp',
             ['docs/architecture.md: row kc_a names kc_d but links none']),
            ('an outside library left out', {'kc_a'}, '`kc_b`, `kc_c`',
             ['docs/architecture.md: row kc_a links yaml-cpp but does not say yaml-cpp']),
            ('a program naming its own row\'s library', {'prog'}, '`kc_a`', []),
        ]
        for name, targets, column, want in cases:
            with self.subTest(name):
                self.assertEqual(check_layout.link_problems([(targets, column)], links), want)

    def test_a_set_list_reads_as_its_names(self):
        with tempfile.TemporaryDirectory() as d:
            os.makedirs(os.path.join(d, 'docs'))
            os.makedirs(os.path.join(d, 'lib'))
            with open(os.path.join(d, 'docs', 'architecture.md'), 'w') as f:
                f.write('| folder | target | what | links |\n|---|---|---|---|\n'
                        '| `lib/` | `kc_x`, `kc_y` | | `kc_base` |\n'
                        '| `lib/` | `tool` | | `kc_x` |\n'
                        '| `lib/` | `other` | | `ARCHIVES` |\n'
                        '| `base/` | `kc_base` | | threads only |\n')
            with open(os.path.join(d, 'lib', 'CMakeLists.txt'), 'w') as f:
                f.write('add_library(kc_x STATIC a.cc)\nadd_library(kc_y STATIC b.cc)\n'
                        'add_library(kc_base STATIC c.cc)\n'
                        'target_link_libraries(kc_x PUBLIC kc_base)\n'
                        'target_link_libraries(kc_y PUBLIC kc_base)\n'
                        'set(ARCHIVES kc_x\n    kc_y)\n'
                        'add_executable(tool main.cc)\n'
                        'target_link_libraries(tool PRIVATE ${ARCHIVES} ${CMAKE_DL_LIBS})\n'
                        'add_executable(other main.cc)\n'
                        'target_link_libraries(other PRIVATE ${ARCHIVES})\n')
            problems, _, _ = check_layout.check(d)
            self.assertEqual(problems,
                             ['docs/architecture.md: row tool links kc_y but does not name it'])

    def test_this_repository_keeps_its_layout(self):
        root = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '..')
        problems, libraries, checked = check_layout.check(root)
        self.assertEqual(problems, [])
        self.assertGreater(libraries, 10)
        self.assertGreater(checked, 50)


def _capture(fn):
    import io
    import contextlib
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        fn()
    return buf.getvalue()


if __name__ == '__main__':
    unittest.main()
