"""The Python examples of docs/python.md run: each ```python block, in order,
in one namespace, in a directory holding the page's ```ad file=NAME blocks
(as the Rust docs test runs its console blocks). A block marked
`requires=MODULE` runs where MODULE is installed."""

import importlib.util
import os
import re
from pathlib import Path

import pytest

DOC = Path(__file__).resolve().parents[2] / "docs" / "python.md"
FENCE = re.compile(r"^```(\w+)([^\n]*)\n(.*?)^```$", re.M | re.S)


def blocks():
    return [(m.group(1), m.group(2).strip(), m.group(3)) for m in FENCE.finditer(DOC.read_text())]


def test_the_page_has_examples():
    langs = [lang for lang, _, _ in blocks()]
    assert langs.count("python") >= 3 and "ad" in langs


def test_python_examples_run(tmp_path, monkeypatch):
    pytest.importorskip("scipy")
    pytest.importorskip("jax")
    for lang, attrs, body in blocks():
        m = re.search(r"file=(\S+)", attrs)
        if lang == "ad" and m:
            (tmp_path / m.group(1)).write_text(body)
    monkeypatch.chdir(tmp_path)
    namespace = {"__name__": "docs_python"}
    for n, (lang, attrs, body) in enumerate(blocks()):
        needs = re.search(r"requires=(\S+)", attrs)
        if needs and importlib.util.find_spec(needs.group(1)) is None:
            continue
        if lang == "python":
            code = compile(body, f"{DOC.name} (python block {n})", "exec")
            exec(code, namespace)
    assert os.getcwd() == str(tmp_path)
