#!/usr/bin/env python3
"""Holds the source tree to its design (docs/architecture.md, "Libraries").

    python3 tests/scripts/check_design.py layers      # the DAG: docs, build and includes agree
    python3 tests/scripts/check_design.py functions   # no function longer than 100 lines
    ... [--root DIR]                                  # another tree (the self-test's)

`layers` reads the table of libraries in docs/architecture.md (folder,
target, what it may use), each folder's CMakeLists.txt (the pase_ targets it
defines and links) and every #include "FOLDER/..." of every source file, and
fails when a library includes a header of a library it may not use (its
"may use" list, and what those may use in turn), when the build links other
libraries than the table says, when the table has a cycle, or when a folder
with a library is missing from the table.

`functions` measures every function body in the non-test sources (from the
line its declaration starts to its closing brace, lambdas inside counted with
it) and fails on any longer than 100 lines.

Only the Python standard library; exit status 0 clean, 1 on a finding.
"""
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
MAX_FUNCTION_LINES = 100
SOURCE_FOLDERS_NOT_LIBRARIES = ("tests", "bench", "scripts", "data", "docs", "cmake", "build")


def read(path):
    with open(path, encoding="utf-8") as f:
        return f.read()


def library_table():
    """{folder: (targets, may_use_folders)} from the architecture document's table."""
    ARCHITECTURE = os.path.join(ROOT, "docs", "architecture.md")
    table = {}
    in_table = False
    for line in read(ARCHITECTURE).splitlines():
        if line.startswith("| folder | targets | owns | may use |"):
            in_table = True
            continue
        if in_table and not line.startswith("|"):
            break
        if not in_table or line.startswith("|---"):
            continue
        cells = [c.strip() for c in line.strip("|").split("|")]
        folder = cells[0].strip("`/ ")
        targets = re.findall(r"`([\w-]+)`", cells[1])
        uses = [] if cells[3] in ("", "-", "nothing") else [u.strip("`/ ") for u in re.findall(r"`[\w/]+`", cells[3])]
        table[folder] = (targets, uses)
    if not table:
        sys.exit("error: %s: no table '| folder | targets | owns | may use |'" % ARCHITECTURE)
    return table


def closure(table, folder):
    """Every folder `folder` may use, directly or through the ones it may use."""
    seen, stack = set(), list(table[folder][1])
    while stack:
        f = stack.pop()
        if f in seen:
            continue
        seen.add(f)
        stack.extend(table.get(f, ((), ()))[1])
    return seen


def find_cycle(table):
    state = {}

    def visit(folder, path):
        if state.get(folder) == "open":
            return path[path.index(folder):] + [folder]
        if state.get(folder) == "done":
            return None
        state[folder] = "open"
        for used in table.get(folder, ((), ()))[1]:
            cycle = visit(used, path + [folder])
            if cycle:
                return cycle
        state[folder] = "done"
        return None

    for folder in table:
        cycle = visit(folder, [])
        if cycle:
            return cycle
    return None


def cmake_links(folder):
    """{target: set of pase_ targets it links} for the targets `folder`'s CMakeLists.txt defines."""
    text = re.sub(r"#[^\n]*", "", read(os.path.join(ROOT, folder, "CMakeLists.txt")))
    links = {}
    for m in re.finditer(r"pase_library\(\s*([\w-]+)\s+[\w/]+(.*?)\)", text, re.S):
        uses = re.search(r"\bUSES\b(.*)", m.group(2), re.S)
        links.setdefault(m.group(1), set()).update(re.findall(r"\bpase_[\w]+", uses.group(1) if uses else ""))
    for m in re.finditer(r"add_(?:library|executable)\(\s*([\w-]+)", text):
        links.setdefault(m.group(1), set())
    for m in re.finditer(r"target_link_libraries\(\s*([\w-]+)(.*?)\)", text, re.S):
        if m.group(1) in links:
            links[m.group(1)].update(t for t in re.findall(r"\bpase_[\w]+", m.group(2)))
    return links


def source_files(folder):
    for base, dirs, files in os.walk(os.path.join(ROOT, folder)):
        dirs[:] = [d for d in dirs if d != "corpus"]
        for name in sorted(files):
            if name.endswith((".cc", ".h")):
                yield os.path.join(base, name)


def check_layers():
    table = library_table()
    problems = []
    cycle = find_cycle(table)
    if cycle:
        problems.append("docs/architecture.md: the libraries' uses form a cycle: " + " -> ".join(cycle))
    target_folder = {t: f for f, (targets, _) in table.items() for t in targets}
    for entry in sorted(os.listdir(ROOT)):
        cmake = os.path.join(ROOT, entry, "CMakeLists.txt")
        if entry in SOURCE_FOLDERS_NOT_LIBRARIES or not os.path.isfile(cmake):
            continue
        if entry not in table:
            problems.append("%s/: a folder with a CMakeLists.txt that docs/architecture.md's table does not list" % entry)
            continue
        for target, linked in cmake_links(entry).items():
            if target not in table[entry][0]:
                problems.append("%s/CMakeLists.txt: target %s is not in docs/architecture.md's row for %s/" %
                                (entry, target, entry))
                continue
            used = {target_folder.get(t, "?" + t) for t in linked} - {entry}
            allowed = set(table[entry][1])
            for extra in sorted(used - allowed):
                problems.append("%s/CMakeLists.txt: %s links %s/ (%s), which docs/architecture.md does not let %s/ use" %
                                (entry, target, extra, ", ".join(sorted(t for t in linked if target_folder.get(t) == extra)), entry))
    for folder in table:
        allowed = closure(table, folder) | {folder}
        for path in source_files(folder):
            for number, line in enumerate(read(path).splitlines(), 1):
                m = re.match(r'\s*#\s*include\s+"([\w]+)/', line)
                if m and m.group(1) in table and m.group(1) not in allowed:
                    problems.append("%s:%d: includes %s/, which %s/ may not use (docs/architecture.md)" %
                                    (os.path.relpath(path, ROOT), number, m.group(1), folder))
    for p in problems:
        print(p)
    print("layers: %d libraries, %d problem(s)" % (len(table), len(problems)))
    return 1 if problems else 0


def blank_out(text):
    """The text with comments, strings and character literals replaced by spaces (newlines kept)."""
    out = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            out.append(" " * (j - i))
            i = j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        elif c == "R" and text.startswith('R"', i) and (i == 0 or not (text[i - 1].isalnum() or text[i - 1] == "_")):
            m = re.match(r'R"([^(\s]*)\(', text[i:])
            end = text.find(")" + m.group(1) + '"', i) if m else -1
            j = n if end < 0 else end + len(m.group(1)) + 2
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        elif c in "\"'":
            j = i + 1
            while j < n and text[j] != c:
                j += 2 if text[j] == "\\" else 1
            out.append(" " * (j + 1 - i))
            i = j + 1
        else:
            out.append(c)
            i += 1
    return "".join(out)


def without_preprocessor(text):
    """The text with preprocessor directives (and their continuation lines) blanked."""
    lines = text.split("\n")
    out, continued = [], False
    for line in lines:
        directive = continued or line.lstrip().startswith("#")
        out.append(" " * len(line) if directive else line)
        continued = directive and line.rstrip().endswith("\\")
    return "\n".join(out)


SCOPE = re.compile(r"^(template\s*<[^{]*>\s*)?(namespace|class|struct|union|enum|extern)\b")


def function_lengths(path):
    """(name, first line, last line) of every function body defined at namespace or class level."""
    text = without_preprocessor(blank_out(read(path)))
    functions = []
    stack = []  # per open brace: "scope" (namespace, class), "data" (an initializer), or a function's index
    start = 0   # where the current declaration began, at namespace or class level
    for i, c in enumerate(text):
        at_scope_level = not stack or stack[-1] == "scope"
        if c == ";" and at_scope_level:
            start = i + 1
        elif c == "{":
            if not at_scope_level:
                stack.append("inner")
                continue
            head = re.sub(r"^\s*((public|private|protected)\s*:\s*)*", "", text[start:i])
            if SCOPE.match(head) and "(" not in head:
                stack.append("scope")
                start = i + 1
            elif "(" not in head or re.search(r"=\s*$", head):
                stack.append("data")
            else:
                offset = i - len(text[start:i]) + (len(text[start:i]) - len(head))
                offset += len(head) - len(head.lstrip())
                name = re.findall(r"([~\w:]+)\s*$", head.split("(")[0])
                functions.append([name[0] if name else "?", text.count("\n", 0, offset) + 1, None])
                stack.append(len(functions) - 1)
        elif c == "}" and stack:
            top = stack.pop()
            if isinstance(top, int):
                functions[top][2] = text.count("\n", 0, i) + 1
            if not stack or stack[-1] == "scope":
                start = i + 1
    return [f for f in functions if f[2] is not None]


def check_functions():
    table = library_table()
    long_ones = []
    measured = 0
    for folder in sorted(table):
        for path in source_files(folder):
            for name, first, last in function_lengths(path):
                measured += 1
                if last - first + 1 > MAX_FUNCTION_LINES:
                    long_ones.append((last - first + 1, os.path.relpath(path, ROOT), first, name))
    for length, path, line, name in sorted(long_ones, reverse=True):
        print("%s:%d: %s is %d lines (at most %d)" % (path, line, name, length, MAX_FUNCTION_LINES))
    print("functions: %d measured, %d longer than %d lines" % (measured, len(long_ones), MAX_FUNCTION_LINES))
    return 1 if long_ones else 0


def main():
    global ROOT
    args = sys.argv[1:]
    if len(args) == 3 and args[1] == "--root":
        ROOT = os.path.abspath(args[2])
        args = args[:1]
    if len(args) != 1 or args[0] not in ("layers", "functions"):
        print("usage: check_design.py layers|functions [--root DIR]", file=sys.stderr)
        return 2
    return check_layers() if args[0] == "layers" else check_functions()


if __name__ == "__main__":
    sys.exit(main())
