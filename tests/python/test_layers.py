"""The layer checker (check_layers.py) on small synthetic trees: it passes a tree whose includes point down and
names file:line for an upward include, an include its layer's row does not list, an unknown folder and a
malformed table."""
import os
import tempfile
import unittest

import check_layers

TABLE = """# Architecture

| Layer | Holds | May include |
|-------|-------|-------------|
| `core` | errors | - |
| `mid` | systems | `core` |
| `top` | wiring | `core`, `mid` |

Text after the table.
"""


def make_tree(root, files, table=TABLE):
    os.makedirs(os.path.join(root, "docs"))
    with open(os.path.join(root, "docs", "architecture.md"), "w", encoding="utf-8") as f:
        f.write(table)
    for rel, text in files.items():
        path = os.path.join(root, rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)


CLEAN = {
    "include/rollsim/core/error.hpp": "#pragma once\n",
    "include/rollsim/mid/system.hpp": '#pragma once\n#include "rollsim/core/error.hpp"\n',
    "src/mid/system.cpp": '#include "rollsim/mid/system.hpp"\n#include <vector>\n',
    "src/top/app.cpp": '#include "rollsim/mid/system.hpp"\n#include "rollsim/core/error.hpp"\n',
}


class CheckLayers(unittest.TestCase):
    def run_check(self, files, table=TABLE):
        with tempfile.TemporaryDirectory() as root:
            make_tree(root, files, table)
            return check_layers.check(root)

    def test_table_order_and_allowed(self):
        with tempfile.TemporaryDirectory() as root:
            make_tree(root, {})
            order, allowed = check_layers.read_layers(root)
        self.assertEqual(order, ["core", "mid", "top"])
        self.assertEqual(allowed, {"core": set(), "mid": {"core"}, "top": {"core", "mid"}})

    def test_clean_tree_passes(self):
        problems, crossing = self.run_check(CLEAN)
        self.assertEqual(problems, [])
        self.assertEqual(crossing, 3)  # mid -> core once, top -> mid and top -> core

    def test_upward_include_named_with_file_and_line(self):
        files = dict(CLEAN)
        files["src/mid/system.cpp"] = '#include "rollsim/mid/system.hpp"\n\n#include "rollsim/top/app.hpp"\n'
        problems, _ = self.run_check(files)
        self.assertEqual(len(problems), 1)
        self.assertTrue(problems[0].startswith(os.path.join("src", "mid", "system.cpp") + ":3: upward include"),
                        problems[0])
        self.assertIn("`mid` includes `top`", problems[0])

    def test_upward_include_in_a_header(self):
        files = dict(CLEAN)
        files["include/rollsim/core/error.hpp"] = '#pragma once\n#  include "rollsim/mid/system.hpp"\n'
        problems, _ = self.run_check(files)
        self.assertEqual(len(problems), 1)
        self.assertTrue(problems[0].startswith(os.path.join("include", "rollsim", "core", "error.hpp") + ":2:"))

    def test_lower_layer_not_listed(self):
        table = TABLE.replace("| `top` | wiring | `core`, `mid` |", "| `top` | wiring | `mid` |")
        problems, _ = self.run_check(CLEAN, table)
        self.assertEqual(len(problems), 1)
        self.assertTrue(problems[0].startswith(os.path.join("src", "top", "app.cpp") + ":2:"), problems[0])
        self.assertIn("does not list", problems[0])

    def test_unknown_folder_and_unknown_target(self):
        files = dict(CLEAN)
        files["src/extra/x.cpp"] = "int x;\n"
        files["src/top/y.cpp"] = '#include "rollsim/nowhere/y.hpp"\n'
        problems, _ = self.run_check(files)
        self.assertEqual(len(problems), 2, problems)
        self.assertTrue(any("`extra` is no layer" in p for p in problems))
        self.assertTrue(any(p.startswith(os.path.join("src", "top", "y.cpp") + ":1:") and "nowhere" in p
                            for p in problems))

    def test_table_that_allows_an_upward_include_is_refused(self):
        table = TABLE.replace("| `mid` | systems | `core` |", "| `mid` | systems | `core`, `top` |")
        with self.assertRaises(check_layers.TableError) as e:
            self.run_check(CLEAN, table)
        self.assertIn("architecture.md:6:", str(e.exception))
        self.assertIn("not below it", str(e.exception))

    def test_missing_table_is_an_error(self):
        with self.assertRaises(check_layers.TableError):
            self.run_check(CLEAN, "# Architecture\n\nNo table.\n")

    def test_main_exit_codes(self):
        with tempfile.TemporaryDirectory() as root:
            make_tree(root, CLEAN)
            self.assertEqual(check_layers.main(["check_layers.py", root]), 0)
            with open(os.path.join(root, "src", "mid", "up.cpp"), "w", encoding="utf-8") as f:
                f.write('#include "rollsim/top/app.hpp"\n')
            self.assertEqual(check_layers.main(["check_layers.py", root]), 1)
        with tempfile.TemporaryDirectory() as root:
            self.assertEqual(check_layers.main(["check_layers.py", root]), 2)


if __name__ == "__main__":
    unittest.main()
