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
        ]
        for path, include, want in cases:
            got = check_layout.include_breach(path, include)
            if want is None:
                self.assertIsNone(got, (path, include))
            else:
                self.assertIsNotNone(got, (path, include))
                self.assertIn(want, got)

    def test_library_missing_from_the_doc_is_reported(self):
        with tempfile.TemporaryDirectory() as d:
            os.makedirs(os.path.join(d, 'docs'))
            os.makedirs(os.path.join(d, 'lib'))
            with open(os.path.join(d, 'docs', 'architecture.md'), 'w') as f:
                f.write('| `lib/` | `kc_named` | |\n')
            with open(os.path.join(d, 'lib', 'CMakeLists.txt'), 'w') as f:
                f.write('add_library(kc_named STATIC a.cc)\nadd_library(kc_unnamed STATIC b.cc)\n')
            problems, libraries, _ = check_layout.check(d)
            self.assertEqual(libraries, 2)
            self.assertEqual(problems, ['docs/architecture.md: does not name library kc_unnamed'])

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
