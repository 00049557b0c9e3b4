"""Every repository path that a comment, docstring or document cites exists: a renamed or
removed file leaves no pointer behind, and no note points to a map kept outside the repository.

A citation is a relative path with a source or document extension (`sync/sma.h`,
`docs/design/engine.md`), or a bare file name of ours (`flat_ops.h`) in a comment or in
Markdown's backticks. It resolves against the repository root, the citing file's folder, or as
the tail of any file's path (notes name files relative to the folder they describe). A file of
raw output (`docs/results/...`, `docs/reproduction/...`) is cited at any depth and with any
extension (`docs/results/averaging/seed1/avg_sgd-k1.jsonl`), and resolves from the root only. Paths
outside the repository (`../shared/...`, absolute ones) and patterns (`*_op.cc`, `<name>.cu`)
are not citations."""
import ast
import io
import os
import re
import tokenize

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SKIP_DIRS = {".git", "__pycache__", "build"}
EXTS = ("h", "cc", "cu", "cuh", "py", "md", "cmake", "sh", "toml")
BARE_EXTS = ("h", "cc", "cu", "cuh", "py", "md")  # bare names of ours; not OpenCVConfig.cmake
PATH = re.compile(r"(?<![\w./{}*<>$~-])((?:[\w.{},-]+/)*[\w{},*<>-]+\.(?:%s|\{[\w,]+\}))"
                  r"(?![\w/])" % "|".join(EXTS))
RAW_OUTPUT = re.compile(r"(?<![\w./{}*<>$~-])(docs/(?:results|reproduction)/[\w.{},/-]*\.[\w{},]*[\w}])")
BACKTICKED = re.compile(r"`([^`\n]+)`")
# Names that stand for the reader's own file in examples (--net FILE.py:FUNCTION,
# gpu_check_DATE.json).
PLACEHOLDERS = {"FILE", "NAME", "PATH", "MODULE", "DATE"}


def repository_files():
    files = []
    for folder, dirs, names in os.walk(ROOT):
        dirs[:] = [d for d in dirs if d not in SKIP_DIRS and not d.startswith(("build-", "."))
                   and not d.endswith(".egg-info")]
        files += [os.path.relpath(os.path.join(folder, n), ROOT) for n in names]
    return files


def python_prose(text):
    """(offset, text) of the comments and docstrings of a Python file."""
    starts = [0]
    for line in text.splitlines(keepends=True):
        starts.append(starts[-1] + len(line))
    out = [(starts[t.start[0] - 1] + t.start[1], t.string)
           for t in tokenize.generate_tokens(io.StringIO(text).readline)
           if t.type == tokenize.COMMENT]
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) \
                    and isinstance(body[0].value.value, str):
                doc = body[0].value
                out.append((starts[doc.lineno - 1] + doc.col_offset, doc.value))
    return out


def prose(path, text):
    """(offset, text, whether bare names count) of the parts of a file that cite paths."""
    if path.endswith(".md"):
        return [(0, text, False)] + [(m.start(1), m.group(1), True)
                                     for m in BACKTICKED.finditer(text)]
    if path.endswith(".py"):
        return [(at, part, True) for at, part in python_prose(text)]
    comment = r"//[^\n]*|/\*.*?\*/" if path.endswith(("h", "cc", "cu", "cuh")) else r"#[^\n]*"
    return [(m.start(), m.group(0), True) for m in re.finditer(comment, text, re.S)]


def expand(path):
    """`sync/sma.{h,cc}` -> sync/sma.h, sync/sma.cc."""
    m = re.search(r"\{([^{}]*)\}", path)
    if not m:
        return [path]
    return [p for alt in m.group(1).split(",")
            for p in expand(path[:m.start()] + alt + path[m.end():])]


def placeholder(cited):
    return not PLACEHOLDERS.isdisjoint(re.split(r"[^A-Za-z]", cited.split("/")[-1]))


def citations(path, text):
    """(line, path) of the paths a file cites; raw output as ("raw", path) in place of a path
    alone, resolved from the root only."""
    for at, part, bare in prose(path, text):
        for m in PATH.finditer(part):
            cited = m.group(1)
            if any(c in cited for c in "*<>") or cited.startswith(("../", "...", "path/to/")) \
                    or placeholder(cited) or RAW_OUTPUT.fullmatch(cited):
                continue
            if "/" not in cited and not (bare and cited.endswith(BARE_EXTS)):
                continue
            line = text.count("\n", 0, at + m.start()) + 1
            for one in expand(cited):
                yield line, one[2:] if one.startswith("./") else one
        for m in RAW_OUTPUT.finditer(part):
            if placeholder(m.group(1)):
                continue
            line = text.count("\n", 0, at + m.start()) + 1
            for one in expand(m.group(1)):
                yield line, ("raw", one)


def missing_citations():
    files = repository_files()
    present = set(files)
    tails = {"/".join(f.split("/")[i:]) for f in files for i in range(f.count("/") + 1)}
    missing = []
    for f in sorted(files):
        if not f.endswith(tuple("." + e for e in EXTS)) and os.path.basename(f) != "CMakeLists.txt":
            continue
        with open(os.path.join(ROOT, f), encoding="utf-8", errors="replace") as handle:
            text = handle.read()
        for line, cited in citations(f, text):
            if isinstance(cited, tuple):
                if not os.path.exists(os.path.join(ROOT, cited[1])):
                    missing.append(f"{f}:{line}: {cited[1]}")
                continue
            beside = os.path.normpath(os.path.join(os.path.dirname(f), cited))
            if cited not in tails and beside not in present:
                missing.append(f"{f}:{line}: {cited}")
    return missing


def test_every_cited_repository_path_exists():
    missing = missing_citations()
    assert not missing, "cited paths that the repository does not have:\n" + "\n".join(missing)


def test_a_citation_of_a_missing_file_is_found():
    found = list(citations("x.h", "int a;  // see DESIGN.md and sync/sma.{h,cc}, not FILE.py\n"
                                  "c.h = 1;\n"))
    assert found == [(1, "DESIGN.md"), (1, "sync/sma.h"), (1, "sync/sma.cc")]
    doc = '"""As `flat_ops.h` says."""\n# docs/design/engine.md\nx = "a.py"\n'
    assert sorted(citations("x.py", doc)) == [(1, "flat_ops.h"), (2, "docs/design/engine.md")]
    assert list(citations("x.md", "../shared/REFERENCE.md, `*_op.cc`, /tmp/a.py, `b.cc`")) == \
        [(1, "b.cc")]


def test_raw_output_is_cited_at_any_depth():
    page = "docs/results/issue37/no_such_run.jsonl and `docs/results/a/b.txt`, not NAME.jsonl\n"
    assert set(citations("x.md", page)) == \
        {(1, ("raw", "docs/results/issue37/no_such_run.jsonl")),
         (1, ("raw", "docs/results/a/b.txt"))}
    assert list(citations("x.py", "# docs/reproduction/x.result.json\n")) == \
        [(1, ("raw", "docs/reproduction/x.result.json"))]
