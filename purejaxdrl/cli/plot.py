"""`purejaxdrl plot`: learning curves of run, sweep and PBT directories as a PNG."""

import os
import pathlib
from collections.abc import Sequence

from purejaxdrl.cli.args import Parser, UsageError


def _check_format(text: str, out: pathlib.Path) -> None:
    """A UsageError for a file name whose suffix matplotlib cannot write."""
    from matplotlib.backend_bases import FigureCanvasBase

    formats = FigureCanvasBase.get_supported_filetypes()
    if out.suffix[1:].lower() not in formats:
        raise UsageError(
            f"--out {text}: matplotlib writes no {out.suffix!r} files; end the "
            f"name with one of {', '.join('.' + f for f in sorted(formats))}, "
            "e.g. curves.png."
        )


def check_out_folder(flag: str, text: str, out: pathlib.Path) -> None:
    """A UsageError, before any work, when the folder of `out` cannot take it.

    Shared by every flag naming a file to write (plot's --out, eval's
    --render), so each says alike whether the folder is missing, is a file or
    is not writable.

    Args:
      flag: the flag, e.g. "--out".
      text: its value as given.
      out: the file it names.

    """
    folder = out.parent
    if not folder.is_dir():
        what = "is a file" if folder.exists() else "does not exist"
        fix = "write elsewhere" if folder.exists() else "create it or write elsewhere"
    elif not os.access(folder, os.W_OK | os.X_OK):
        what, fix = "is not writable", "write elsewhere"
    else:
        return
    raise UsageError(f"{flag} {text}: folder {str(folder)!r} {what}; {fix}.")


def plot_command(argv: Sequence[str]) -> int:
    """`purejaxdrl plot RUN_DIR ... --out a.png`; returns the exit status."""
    parser = Parser(
        prog="purejaxdrl plot",
        description="Draw learning curves (return, or another metric, vs env "
        "steps and vs training time) of run, sweep and PBT directories into one "
        "figure (a PNG unless --out names another format). Runs that differ "
        "only in their seed, a sweep's seeds and a PBT run's members are drawn "
        "as a mean with a band.",
        allow_abbrev=False,
    )
    parser.add_argument(
        "run_dirs",
        nargs="+",
        metavar="RUN_DIR",
        help="run, sweep or PBT directories (one or more), as written by "
        "purejaxdrl train, sweep or pbt",
    )
    parser.add_argument(
        "--out",
        default="curves.png",
        help="the figure's file; its extension picks the format: .png, .pdf, "
        ".svg, ...; a file there is replaced (default: %(default)s, in the "
        "current folder)",
    )
    parser.add_argument("--title", default="", help="figure title")
    parser.add_argument("--target", type=float, help="draw this score as a line")
    parser.add_argument(
        "--metric",
        default="episode/mean_return",
        help="a key of the runs' metrics.jsonl records: eval/mean_return, "
        "loss/value, an environment's env/<name> (default: %(default)s)",
    )
    args = parser.parse_args(argv)
    out = pathlib.Path(args.out)
    if out.is_dir():  # a folder: the default name inside it
        out = out / "curves.png"
    if not out.suffix:  # what matplotlib would write, said as written
        out = out.with_suffix(".png")
    check_out_folder("--out", args.out, out)
    _check_format(args.out, out)
    from purejaxdrl.observe.plots import (
        check_metric,
        drawn_curves,
        has_values,
        load_curves,
        plot_curves,
    )

    replaced = " (replaced)" if out.exists() else ""  # as export, not silently
    curves = load_curves(args.run_dirs)
    check_metric(curves, args.metric)
    try:
        n = drawn_curves(
            plot_curves(
                curves, out, title=args.title, target=args.target, metric=args.metric
            )
        )
    except (OSError, RuntimeError) as e:  # a folder of that name; .pgf: no LaTeX
        raise UsageError(
            f"--out {args.out}: matplotlib could not write {out} ("
            + " ".join(str(e).split())[:160]
            + "); write a .png elsewhere."
        ) from None
    print(f"wrote {out}{replaced}: {n} curve(s) from {len(args.run_dirs)} folder(s)")
    without = [c.label for c in curves if not has_values(c, args.metric)]
    if without:
        print(f"  without {args.metric}, left out: {'; '.join(without)}")
    return 0
