"""MkDocs hooks: the pages kept outside `docs/`, the API reference, GitHub links.

The Markdown is written to be read on GitHub, relative to each file's place in
the repository; the site serves the same files:

- `README.md`, `CHANGELOG.md` and `notebooks/*.ipynb` join the site as
  `readme.md`, `changelog.md` and `notebooks/*.ipynb` (mkdocs-jupyter renders
  the notebooks without executing them);
- `api/*.md` are generated: one page per public module (the top level,
  every subpackage with an `__all__`, the modules they export and the shared
  records of `purejaxdrl.types`), each listing that `__all__` (or the
  module's public names) for mkdocstrings to render from the docstrings;
- `curves/index.md` and `notebooks/index.md` list those folders, which the
  pages link to as folders (GitHub lists a folder; a site needs a page);
- a link that points out of `docs/` (`../README.md`, `docs/guide/x.md` from the
  README, `../docs/guide/x.md` from a notebook) is rewritten to the page the
  site serves for that file.
"""

import ast
import functools
import json
import pathlib
import posixpath
import re
from collections.abc import Callable

from mkdocs.plugins import event_priority
from mkdocs.structure.files import File

ROOT = pathlib.Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "purejaxdrl"
# Repository files outside docs/ that the site serves, by their site path.
EXTRA = {"readme.md": "README.md", "changelog.md": "CHANGELOG.md"}
FENCE = re.compile(r"^(```|~~~).*?^\1", re.MULTILINE | re.DOTALL)
LINK = re.compile(r"(\]\()([^)\s]+)(\))")


def _all_names(path: pathlib.Path) -> list[str] | None:
    """The literal `__all__` of a module's source, or None where it has none."""
    for node in ast.parse(path.read_text()).body:
        targets = node.targets if isinstance(node, ast.Assign) else []
        if any(getattr(t, "id", None) == "__all__" for t in targets):
            return list(ast.literal_eval(node.value))
    return None


# Modules no public package exports that builders import from all the same:
# the records every layer passes (the env's TimeStep, the rollout's
# Transition) and the aliases of the signatures.
SHARED = ("purejaxdrl.types",)


def _module_names(path: pathlib.Path) -> list[str]:
    """A module's public functions, classes and type aliases, in source order."""
    names = []
    for node in ast.parse(path.read_text()).body:
        if isinstance(node, ast.FunctionDef | ast.ClassDef):
            names.append(node.name)
        elif (
            isinstance(node, ast.AnnAssign)
            and getattr(node.annotation, "id", None) == "TypeAlias"
        ):
            names.append(node.target.id)
    return [n for n in names if not n.startswith("_")]


def _module_level(tree: ast.Module) -> list[ast.stmt]:
    """A module's statements, with those of its `if TYPE_CHECKING:` blocks.

    The top level imports its names there, for readers (griffe, type
    checkers) only: at run time they load on first use.
    """
    out = []
    for node in tree.body:
        out.append(node)
        if (
            isinstance(node, ast.If)
            and getattr(node.test, "id", None) == "TYPE_CHECKING"
        ):
            out += node.body
    return out


def _submodule_imports(package: str) -> list[str]:
    """The submodules `package`'s `__init__.py` imports as modules.

    `from purejaxdrl.agents import ppo` binds the module; `from
    purejaxdrl.rl.vtrace import vtrace` binds a function named as its module.
    """
    init = ROOT.joinpath(*package.split("."), "__init__.py")
    return [
        alias.name
        for node in _module_level(ast.parse(init.read_text()))
        if isinstance(node, ast.ImportFrom) and node.module == package
        for alias in node.names
        if alias.asname is None
    ]


@functools.cache
def api_modules() -> dict[str, list[str]]:
    """Each public package's dotted name and its `__all__`, top level first.

    The top level and every package under it whose `__init__.py` defines
    `__all__`; modules such a package exports (`purejaxdrl.config`,
    `purejaxdrl.agents.ppo`) and the SHARED ones list their own `__all__`
    (config, parallel, types), or without one their public functions,
    classes and type aliases.
    """
    modules = {}
    for init in sorted(PACKAGE.rglob("__init__.py")):
        parts = init.parent.relative_to(ROOT).parts
        names = _all_names(init)
        if names is not None and not any(p.startswith("_") for p in parts):
            modules[".".join(parts)] = names
    exported = [
        f"{package}.{name}"
        for package in list(modules)
        for name in _submodule_imports(package)
        if name in modules[package]
    ]
    for module in [*exported, *SHARED]:
        path = ROOT.joinpath(*module.split(".")).with_suffix(".py")
        if path.exists() and module not in modules:
            modules[module] = _all_names(path) or _module_names(path)
    return modules


def shadowed_names(module: str, names: list[str]) -> list[str]:
    """Names of `module`'s `__all__` that are also its submodules' names.

    `purejaxdrl.rl.vtrace` is the function `vtrace` at run time (the package
    imports it over its module), but the module to a reader of the source as
    mkdocstrings is: listed as a member, the function would not be rendered.
    They get a block of their own, `::: module.name.name`.
    """
    folder = ROOT.joinpath(*module.split("."))
    out = []
    for name in names:
        path = folder / f"{name}.py"
        if path.exists() and any(
            isinstance(node, ast.FunctionDef | ast.ClassDef) and node.name == name
            for node in ast.parse(path.read_text()).body
        ):
            out.append(name)
    return out


def _api_page(module: str, names: list[str]) -> str:
    """A page of `::: module` listing `names` that are not modules themselves."""
    shadowed = shadowed_names(module, names)
    members = [
        n for n in names if f"{module}.{n}" not in api_modules() and n not in shadowed
    ]
    links = [
        f"- [`{module}.{n}`]({module}.{n}.md)"
        for n in names
        if f"{module}.{n}" in api_modules()
    ]
    lines = [f"# `{module}`", "", f"::: {module}", "    options:"]
    lines += ["      show_root_heading: false", "      members:"]
    lines += [f"        - {n}" for n in members]
    for name in shadowed:
        # The heading's own id is griffe's path of the function, `rl.vtrace.
        # vtrace` (mkdocstrings-python takes it from the object, with no
        # option): an anchor before it gives the `module.name` the others have.
        lines += ["", f"[](){{#{module}.{name}}}"]
        lines += ["", f"::: {module}.{name}.{name}", "    options:"]
        lines += ["      show_root_heading: true", "      heading_level: 2"]
    if links:
        lines += ["", "## Modules", "", *links]
    return "\n".join(lines) + "\n"


def _api_index() -> str:
    lines = [
        "# API reference",
        "",
        "Generated from the docstrings: one page per public package, each "
        "listing the names of its `__all__` (`tests/test_api.py` fails when "
        "one has no docstring).",
        "",
    ]
    lines += [f"- [`{m}`]({m}.md)" for m in api_modules()]
    return "\n".join(lines) + "\n"


def _notebook_title(path: pathlib.Path) -> str:
    """The first heading of a notebook's first Markdown cell."""
    for cell in json.loads(path.read_text())["cells"]:
        if cell["cell_type"] == "markdown":
            return "".join(cell["source"]).splitlines()[0].lstrip("# ")
    return path.stem


def _folder_pages() -> dict[str, str]:
    """The folder pages by site path: the curves and the notebooks."""
    curves = sorted((ROOT / "docs" / "curves").glob("*.png"))
    notebooks = sorted((ROOT / "notebooks").glob("*.ipynb"))
    return {
        "curves/index.md": "\n".join(
            ["# Learning curves", "", "Drawn by `scripts/reproduce.py`.", ""]
            + [f"## {p.stem}\n\n![{p.stem}]({p.name})\n" for p in curves]
        ),
        "notebooks/index.md": "\n".join(
            ["# Notebooks", "", "With the outputs of a run on a 2-core CPU.", ""]
            + [f"- [{_notebook_title(p)}]({p.name})" for p in notebooks]
        )
        + "\n",
    }


@event_priority(50)  # before mkdocs-jupyter turns notebooks into pages
def on_files(files, config):
    """Adds the README, the changelog, the notebooks and the API pages."""
    site = config["site_dir"]
    urls = config["use_directory_urls"]
    for uri, path in EXTRA.items():
        files.append(File.generated(config, uri, abs_src_path=str(ROOT / path)))
    for notebook in sorted((ROOT / "notebooks").glob("*.ipynb")):
        files.append(File(f"notebooks/{notebook.name}", str(ROOT), site, urls))
    for uri, content in _folder_pages().items():
        files.append(File.generated(config, uri, content=content))
    files.append(File.generated(config, "api/index.md", content=_api_index()))
    for module, names in api_modules().items():
        files.append(
            File.generated(config, f"api/{module}.md", content=_api_page(module, names))
        )
    return files


def _repository_path(src_uri: str) -> str:
    """Where the file the site serves at `src_uri` lives in the repository."""
    if src_uri in EXTRA:
        return EXTRA[src_uri]
    if src_uri.startswith("notebooks/"):
        return src_uri
    return f"docs/{src_uri}"


def _folder_index(site_path: str) -> str:
    """`site_path`, or its generated index page where it is such a folder."""
    index = f"{site_path}/index.md"
    return index if index in _folder_pages() else site_path


def _site_path(repository_path: str) -> str | None:
    """The site path of a repository file, or None where the site lacks it."""
    if repository_path.startswith("docs/"):
        return _folder_index(repository_path.removeprefix("docs/"))
    for uri, path in EXTRA.items():
        if repository_path == path:
            return uri
    if repository_path == "notebooks" or (
        repository_path.startswith("notebooks/") and repository_path.endswith(".ipynb")
    ):
        return _folder_index(repository_path)
    return None


def _relinker(
    src_uri: str, to_site: Callable[[str], str | None]
) -> Callable[[re.Match], str]:
    """A `re.sub` replacement for LINK or HREF matches on page `src_uri`.

    A link relative to the repository (`../README.md#x`) becomes
    `to_site(site path)` with its anchor; other links, and files the site
    lacks (`to_site` None), stay as written.
    """
    here = posixpath.dirname(_repository_path(src_uri))

    def link(match: re.Match) -> str:
        target = match.group(2)
        if re.match(r"[a-z][a-z0-9+.-]*:|#|/", target):
            return match.group(0)
        path, sep, anchor = target.partition("#")
        site_path = _site_path(posixpath.normpath(posixpath.join(here, path)))
        relative = to_site(site_path) if site_path is not None else None
        if relative is None:
            return match.group(0)
        return f"{match.group(1)}{relative}{sep}{anchor}{match.group(3)}"

    return link


def _rewrite(text: str, src_uri: str) -> str:
    """`text` with links relative to the repository made relative to the site."""
    link = _relinker(
        src_uri,
        lambda site: posixpath.relpath(site, posixpath.dirname(src_uri) or "."),
    )
    out, end = [], 0
    for fence in FENCE.finditer(text):  # code is left as written
        out += [LINK.sub(link, text[end : fence.start()]), fence.group(0)]
        end = fence.end()
    return "".join([*out, LINK.sub(link, text[end:])])


def on_page_markdown(markdown, page, config, files):
    """Rewrites a page's repository-relative links to the site's pages."""
    if page.file.src_uri.endswith(".md"):
        return _rewrite(markdown, page.file.src_uri)
    return markdown


HREF = re.compile(r'(href=")([^"]+)(")')
# A repository path of a page in plain text (a docstring's "More in
# docs/guide/sweeps.md."), not a link's target nor inside a longer path.
DOCS_PATH = re.compile(r'(?<![\w/.="#-])docs/[\w/-]+\.md(?:#[\w-]+)?(?![\w/"])')


def _site_url(page, files) -> Callable[[str], str | None]:
    """`page`'s relative URL of a site path, or None where the site lacks it."""

    def url(site_path: str) -> str | None:
        found = files.get_file_from_path(site_path)
        if found is None:
            return None
        relative = posixpath.relpath(found.url or ".", page.url or ".")
        return relative + ("/" if found.url.endswith("/") and relative != "." else "")

    return url


def _linked_paths(html: str, url: Callable[[str], str | None]) -> str:
    """`html` with the plain `docs/...md` paths of its text made links."""

    def link(match: re.Match) -> str:
        path, sep, anchor = match.group(0).partition("#")
        site_path = _site_path(path)
        target = url(site_path) if site_path is not None else None
        if target is None:
            return match.group(0)
        return f'<a href="{target}{sep}{anchor}">{match.group(0)}</a>'

    return DOCS_PATH.sub(link, html)


def on_page_content(html, page, config, files):
    """Makes a notebook's links and an API page's guide paths point at the site.

    A notebook's Markdown reaches mkdocs as HTML already (mkdocs-jupyter), so
    `on_page_markdown` never sees its links: `../docs/guide/sweeps.md` would
    resolve under the notebook's own URL. Here they point at the page's URL.
    The API pages are rendered from docstrings, which name a guide by its
    repository path for `help()` ("More in docs/guide/sweeps.md."): here that
    path becomes a link to the guide's page.
    """
    url = _site_url(page, files)
    if page.file.src_uri.startswith("api/"):
        return _linked_paths(html, url)
    if not page.file.src_uri.endswith(".ipynb"):
        return html
    return HREF.sub(_relinker(page.file.src_uri, url), html)
