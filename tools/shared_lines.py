#!/usr/bin/env python3
"""The paper's measure of a reusable core: the source lines behind
`import lazytensor` that are the C core shared with C programs, against
the lines of the Python front end alone.

    python3 tools/shared_lines.py [ROOT]

Core: src/ and include/ (*.c, *.h). Front end: python/src/ (the extension,
*.c, *.h) and python/lazytensor/ (the package, *.py); the tests, examples,
benchmarks and build files are not counted on either side. A line counts
when it holds code: blank lines do not, nor lines that are only comment
(C: /* ... */ and //; Python: # and docstrings, the string that opens a
module, class or function body). Prints the two counts and the share of
the core, core / (core + front end).
"""
import ast
import os
import sys


def c_code_lines(text):
    """Non-blank lines of C with comments removed (strings and character
    constants are kept whole, so a "/*" inside one is not a comment)."""
    i, n, in_block = 0, len(text), False
    line_has_code = False
    count = 0
    while i < n:
        ch = text[i]
        if in_block:
            if text.startswith("*/", i):
                in_block, i = False, i + 2
                continue
            if ch == "\n":
                count += line_has_code
                line_has_code = False
            i += 1
            continue
        if text.startswith("/*", i):
            in_block, i = True, i + 2
        elif text.startswith("//", i):
            while i < n and text[i] != "\n":
                i += 1
        elif ch in "\"'":
            j = i + 1
            while j < n and text[j] != ch and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            line_has_code, i = True, j + 1
        elif ch == "\n":
            count += line_has_code
            line_has_code, i = False, i + 1
        else:
            line_has_code = line_has_code or not ch.isspace()
            i += 1
    return count + line_has_code


def python_code_lines(text):
    """Non-blank lines of Python that are neither comments nor docstrings."""
    docstring_lines = set()
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) and \
                    isinstance(first.value.value, str):
                docstring_lines.update(range(first.lineno, first.end_lineno + 1))
    count = 0
    for number, line in enumerate(text.splitlines(), 1):
        stripped = line.strip()
        if stripped and not stripped.startswith("#") and number not in docstring_lines:
            count += 1
    return count


def count_tree(root, folder, suffixes, counter):
    total = 0
    for dirpath, _, files in os.walk(os.path.join(root, folder)):
        for name in sorted(files):
            if name.endswith(suffixes):
                with open(os.path.join(dirpath, name), encoding="utf-8") as f:
                    total += counter(f.read())
    return total


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    core = sum(count_tree(root, d, (".c", ".h"), c_code_lines) for d in ("src", "include"))
    ext = count_tree(root, "python/src", (".c", ".h"), c_code_lines)
    pkg = count_tree(root, "python/lazytensor", (".py",), python_code_lines)
    print(f"core (src/, include/):              {core:6d} lines of code")
    print(f"front end, extension (python/src/): {ext:6d}")
    print(f"front end, package (python/lazytensor/): {pkg:6d}")
    print(f"shared: {100 * core / (core + ext + pkg):.1f}% of the lines behind `import lazytensor` are the core")


if __name__ == "__main__":
    main()
