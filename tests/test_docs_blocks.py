"""Every code block of the README and the guides runs in a test or says why not.

The line before a block is an HTML comment, which neither GitHub nor the site
shows: `<!-- not run: REASON -->`, or `<!-- run: tests/FILE.py[, how] -->`
where FILE is the test that runs it. The blocks this file runs are the Python
blocks of each page, in order and in one namespace (as a reader runs them in
one session), in a fresh folder, with every preset's budget shrunk to two
updates of 16 steps of its own environments: each line runs as written, on
the suite's 8 fake devices, at a budget a test can afford. The presets keep
their `num_envs`, so a block that does not fit them on 8 devices fails here
as it would on the reader's 8 GPUs. Another test file named by a marker must
read that page.
"""

import dataclasses
import pathlib
import re
import sys

import pytest

import purejaxdrl as pjd
import purejaxdrl.sweeps.program
import purejaxdrl.training
import purejaxdrl.training.presets

ROOT = pathlib.Path(__file__).resolve().parents[1]
PAGES = [
    ROOT / "README.md",
    ROOT / "docs" / "index.md",
    *sorted((ROOT / "docs" / "guide").glob("*.md")),
]
HERE = f"tests/{pathlib.Path(__file__).name}"
BLOCK = re.compile(r"^```(\w*)[^\n]*\n(.*?)^```[ \t]*$", re.MULTILINE | re.DOTALL)
MARKER = re.compile(r"<!--\s*(not run|run):\s*(.*?)\s*-->\Z", re.DOTALL)
# Two updates of 16 steps, one log; `num_envs` is the preset's (cartpole's 4
# do not split over 8 devices: a block must say how it copes with that).
UNROLL, UPDATES = 16, 2


def _name(page: pathlib.Path) -> str:
    return str(page.relative_to(ROOT))


def blocks(page: pathlib.Path) -> list[tuple[str, str, re.Match | None]]:
    """Each fenced block of `page`: its language, its code and its marker."""
    text = page.read_text()
    out = []
    for block in BLOCK.finditer(text):
        before = text[: block.start()].rstrip().rpartition("\n")[2]
        out.append((block.group(1), block.group(2), MARKER.search(before)))
    return out


def _run_here(marker: re.Match | None) -> bool:
    return (
        marker is not None
        and marker.group(1) == "run"
        and marker.group(2).split(",")[0] == HERE
    )


@pytest.mark.parametrize("page", PAGES, ids=_name)
def test_every_block_is_run_by_a_test_or_says_why_not(page):
    for number, (language, code, marker) in enumerate(blocks(page), 1):
        where = f"{_name(page)}, block {number} ({code.splitlines()[0]!r})"
        assert marker, (
            f"{where}: no marker; put <!-- not run: REASON --> or "
            f"<!-- run: tests/FILE.py --> on the line before it"
        )
        kind, text = marker.groups()
        if kind == "not run":
            assert len(text.split()) >= 3, f"{where}: say why it is not run"
            continue
        test_file = ROOT / text.split(",")[0]
        assert test_file.is_file(), f"{where}: no test file {test_file}"
        if _run_here(marker):
            assert language == "python", f"{where}: only Python blocks run here"
        else:
            assert page.name in test_file.read_text(), (
                f"{where}: {test_file.name} does not read {page.name}"
            )


def _shrunk_load_preset(monkeypatch):
    """Every preset, wherever it is loaded from, shrunk to UPDATES updates."""
    load = purejaxdrl.training.presets.load_preset

    def shrunk(name, algo="ppo"):
        preset = load(name, algo)
        budget = UPDATES * preset.config.num_envs * UNROLL
        config = pjd.apply_overrides(
            preset.config,
            {"unroll_length": UNROLL, "total_steps": budget, "num_logs": 1},
        )
        return dataclasses.replace(preset, config=config)

    # Every module holding its own reference: a sweep's (`sweeps.program`)
    # once trained the guide's 24 runs at their full budget here.
    for module in list(sys.modules.values()):
        if module is not None and getattr(module, "load_preset", None) is load:
            monkeypatch.setattr(module, "load_preset", shrunk)


def _export_a_small_run(folder: pathlib.Path) -> None:
    """What `purejaxdrl export runs/<run> --out policy/` leaves: policy/."""
    # The README's program (the same shrunk preset): compiled once a session.
    result = pjd.train(pjd.load_preset("cartpole").config, write_files=True)
    pjd.export_policy(result.run_dir, folder / "policy")


PYTHON_PAGES = [page for page in PAGES if any(_run_here(m) for _, _, m in blocks(page))]


@pytest.mark.timeout(300)
@pytest.mark.parametrize("page", PYTHON_PAGES, ids=_name)
def test_the_python_blocks_of_each_page_run(page, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    _shrunk_load_preset(monkeypatch)
    if "after a small run exported to policy/" in page.read_text():
        _export_a_small_run(tmp_path)
    namespace = {"__name__": "__main__"}
    for number, (_, code, marker) in enumerate(blocks(page), 1):
        if _run_here(marker):
            source = compile(code, f"{_name(page)} (block {number})", "exec")
            exec(source, namespace)  # the page's own code, as written
