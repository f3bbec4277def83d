"""The README stays short, and the documentation's links and tables hold.

Fast, no training: reads `README.md`, `CHANGELOG.md`, `docs/**/*.md`, the
score figures in `docs/scores.json` and the tables `scripts/reproduce.py`
writes from them.
"""

import dataclasses
import json
import pathlib
import re
import shutil
import subprocess

import pytest

from purejaxdrl.agents.base import Algorithm
from tests.helpers import reproduce_script

ROOT = pathlib.Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
PAGES = [README, ROOT / "CHANGELOG.md", *sorted((ROOT / "docs").rglob("*.md"))]

FENCE = re.compile(r"^```.*?^```", re.MULTILINE | re.DOTALL)
CODE_SPAN = re.compile(r"`[^`\n]*`")
LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)\)")
HEADING = re.compile(r"^#{1,6}\s+(.*?)\s*$", re.MULTILINE)


def _prose(text: str) -> str:
    """`text` without code blocks and code spans, where brackets are code."""
    return CODE_SPAN.sub("", FENCE.sub("", text))


def _links(page: pathlib.Path) -> list[str]:
    return LINK.findall(_prose(page.read_text()))


def _anchors(page: pathlib.Path) -> set[str]:
    """GitHub's anchors for a Markdown page's headings."""
    anchors, seen = set(), {}
    for heading in HEADING.findall(FENCE.sub("", page.read_text())):
        slug = re.sub(r"[^\w\- ]", "", heading.lower()).replace(" ", "-")
        count = seen.get(slug, 0)
        seen[slug] = count + 1
        anchors.add(slug if count == 0 else f"{slug}-{count}")
    return anchors


def test_the_readme_is_at_most_10000_characters():
    size = len(README.read_text())
    assert size <= 10_000, (
        f"README.md is {size:,} characters; move detail into docs/ "
        "(docs/index.md lists the pages)"
    )


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_local_link_points_to_an_existing_file_and_heading(page):
    broken = []
    for target in _links(page):
        if re.match(r"[a-z][a-z0-9+.-]*:", target):  # https:, mailto:
            continue
        path, _, anchor = target.partition("#")
        resolved = (page.parent / path).resolve() if path else page
        if not resolved.exists():
            broken.append(f"{target}: no such file")
        elif anchor and resolved.suffix == ".md" and anchor not in _anchors(resolved):
            broken.append(f"{target}: no heading with that anchor")
    assert not broken, f"{page.relative_to(ROOT)}: {broken}"


SHELL_BLOCK = re.compile(r"^```(?:bash|sh|console)\n(.*?)^```", re.M | re.S)
SCRIPT = re.compile(r"python3? (?:-\S+ )*([\w./-]+\.py)\b")


@pytest.mark.parametrize("page", [README, *PAGES[2:]], ids=lambda p: p.name)
def test_every_script_a_shell_block_runs_is_where_the_block_stands(page):
    # Each block starts at the repository's root, as the guides' readers do,
    # and follows its own `cd`s: gpu.md's profile block ran `bench_gpu.py`
    # from the root, where it is `scripts/bench_gpu.py` (ds18 #5).
    missing = []
    for block in SHELL_BLOCK.findall(page.read_text()):
        here = ROOT
        for line in block.splitlines():
            if moved := re.match(r"\s*cd (\S+)", line):
                here = here / moved.group(1)
            missing += [
                f"{line.strip()} (from {here.relative_to(ROOT, walk_up=True)})"
                for script in SCRIPT.findall(line)
                if not (here / script).is_file()
            ]
    assert not missing, missing


def test_every_docs_page_is_linked_from_the_readme_or_the_docs_index():
    linked = set()
    for index in (README, ROOT / "docs" / "index.md"):
        for target in _links(index):
            linked.add((index.parent / target.partition("#")[0]).resolve())
    pages = [p for p in PAGES if p != README and p.name != "index.md"]
    orphans = [str(p.relative_to(ROOT)) for p in pages if p.resolve() not in linked]
    assert not orphans, f"not linked from README.md or docs/index.md: {orphans}"


def test_the_architecture_renders_every_layer_from_its_own_docstring():
    # The site renders `::: purejaxdrl.x` (members: false) as the module's
    # docstring: the page holds no copy of what the packages say.
    package = ROOT / "purejaxdrl"
    layers = {f"purejaxdrl.{p.parent.name}" for p in package.glob("*/__init__.py")}
    layers |= {f"purejaxdrl.{p.stem}" for p in package.glob("*.py") if p.stem[0] != "_"}
    text = (ROOT / "docs" / "architecture.md").read_text()
    rendered = set(re.findall(r"^::: (purejaxdrl[\w.]*)$", text, re.MULTILINE))
    assert sorted(layers - rendered) == []


def test_the_readme_shows_the_test_command_ci_runs():
    command = 'python -m pytest -q -n 2 -m "not slow"'
    assert command in README.read_text()
    assert command in (ROOT / ".ci" / "run").read_text()


def test_the_score_tables_are_the_ones_reproduce_writes_from_the_figures():
    reproduce = reproduce_script()
    scores = json.loads((ROOT / "docs" / "scores.json").read_text())
    assert (ROOT / "docs" / "scores.md").read_text() == reproduce.table(
        reproduce.ROWS, scores
    ), "docs/scores.md is stale: rerun python scripts/reproduce.py --retarget"
    text = README.read_text()
    start = text.index(reproduce.README_BEGIN) + len(reproduce.README_BEGIN)
    shown = text[start : text.index(reproduce.README_END, start)]
    assert shown == "\n" + reproduce.readme_table(reproduce.ROWS, scores), (
        "README.md's score table is stale: python scripts/reproduce.py rewrites it"
    )


@pytest.mark.skipif(shutil.which("git") is None, reason="needs git")
def test_the_committed_results_are_tracked_and_not_ignored():
    def git(*args):
        return subprocess.run(
            ["git", *args], cwd=ROOT, capture_output=True, text=True, check=False
        )

    if git("rev-parse", "--is-inside-work-tree").stdout.strip() != "true":
        pytest.skip("not a git checkout")
    results = ["docs/scores.md", "docs/scores.json", "docs/curves/cartpole_ppo.png"]
    ignored = git("check-ignore", "--no-index", *results).stdout.split()
    assert not ignored, f"ignored by .gitignore: {ignored}"
    tracked = git("ls-files", "--", *results).stdout.split()
    assert sorted(tracked) == sorted(results)


def test_the_algorithm_guide_gives_each_optional_record_field_its_type():
    # The guide listed keeps_replay as a yes/no (it is a function of the
    # config, and `keeps_replay=True` is refused) and left out
    # dict_observations, default_config and replay_per_env.
    guide = (ROOT / "docs" / "guide" / "adding-an-algorithm.md").read_text()
    for field in dataclasses.fields(Algorithm):
        if field.default is dataclasses.MISSING:
            continue  # a required field: the guide's example record sets it
        entry = re.search(rf"`{field.name}: ([^`]+)`", guide)
        assert entry, f"the guide gives no `{field.name}: <type>`"
        function = "Callable" in str(field.type)
        assert ("->" in entry[1]) == function, (field.name, entry[1], field.type)


def _griffe_objects(obj):
    """`obj` and every function and class below it, as griffe reads them."""
    yield obj
    for member in obj.members.values():
        if not member.is_alias and (member.is_module or member.is_class):
            yield from _griffe_objects(member)
        elif not member.is_alias and member.is_function:
            yield member


def _parsed_docstrings():
    """(object, its docstring's sections) as the site parses them.

    mkdocs.yml's docstring_options are the ones the site parses with.
    """
    griffe = pytest.importorskip("griffe")
    yaml = pytest.importorskip("yaml")
    found = re.search(
        r"^ *docstring_options: (.*)$", (ROOT / "mkdocs.yml").read_text(), re.M
    )
    options = yaml.safe_load(found[1]) if found else {}
    package = griffe.load("purejaxdrl", search_paths=[str(ROOT)])
    for obj in _griffe_objects(package):
        if obj.docstring:
            docstring = griffe.Docstring(obj.docstring.value, parent=obj)
            yield obj, docstring.parse("google", **options)


def test_every_documented_parameter_is_annotated():
    # The site's strict build stops at griffe's "No type or annotation for
    # parameter" (`env.make`'s `**options` once), and the suite does not
    # build the site: this is that check, in seconds.
    bare = [
        f"{obj.path}({item.name})"
        for obj, sections in _parsed_docstrings()
        for section in sections
        if section.kind.value == "parameters"
        for item in section.value
        if item.name.lstrip("*") in obj.parameters
        and obj.parameters[item.name.lstrip("*")].annotation is None
    ]
    assert not bare, f"documented but not annotated: {bare}"


def test_the_api_reference_renders_each_returns_section_as_one_item():
    # griffe's Google parser, by default, starts a Returns item at every line
    # of the section's indentation; the docstrings continue a sentence there,
    # so the site showed `evaluate_policy`'s Returns as two rows, each typed
    # EvalResult, each half a sentence (18 such tables).
    split, returns = [], {}
    for obj, sections in _parsed_docstrings():
        for section in sections:
            if section.kind.value == "returns":
                returns[obj.path] = section.value
                if len(section.value) > 1:
                    split.append(obj.path)
    assert not split, f"Returns split into several rows: {split}"
    (evaluated,) = returns["purejaxdrl.training.policy.evaluate.evaluate_policy"]
    assert "host arrays [episodes]" in evaluated.description


def test_the_notebooks_say_what_installs_them():
    # docs/index.md listed four notebooks to run and named neither Jupyter (in
    # no extra) nor the [render] extra 01's last cell (a GIF) needs.
    section = (ROOT / "docs" / "index.md").read_text().split("## Notebooks")[1]
    section = " ".join(section.split("\n## ")[0].split())
    assert "`pip install -e '.[render]' jupyterlab`" in section
    assert "`jupyter lab notebooks/`" in section
    notebook = json.loads((ROOT / "notebooks" / "01_quickstart.ipynb").read_text())
    first = "".join(notebook["cells"][0]["source"])
    assert "`pip install -e '.[render]' jupyterlab`" in first
    assert "the `[render]` extra" in first
