"""`purejaxdrl export`: a run's trained policy as a folder `load_policy` reads."""

from collections.abc import Sequence

from purejaxdrl.cli.eval import CHECKPOINT_HELP
from purejaxdrl.cli.parser import run_dir_parser


def export_command(argv: Sequence[str]) -> int:
    """`purejaxdrl export RUN_DIR --out DIR`; returns the exit status."""
    parser = run_dir_parser(
        "export",
        "Write a run's trained policy (network description and parameters) to a "
        "folder; load it with purejaxdrl.load_policy(DIR).",
    )
    out = parser.add_argument(
        "--out", required=True, metavar="DIR", help="output folder"
    )
    out.example = "policy/"  # for Parser's error when it is missing
    parser.add_argument(
        "--overwrite",
        action="store_true",
        help="replace a policy already exported to --out (refused otherwise)",
    )
    parser.add_argument(
        "--checkpoint",
        default="latest",
        metavar="latest|best|N",
        help=CHECKPOINT_HELP.format(verb="export"),
    )
    args = parser.parse_args(argv)
    import pathlib

    from purejaxdrl.training.policy.exported import check_policy_folder, export_policy

    # Checked here first so that a refusal names the flag, not export_policy's
    # Python parameter.
    check_policy_folder(pathlib.Path(args.out), args.overwrite)
    out = export_policy(
        args.run_dir, args.out, overwrite=args.overwrite, step=args.checkpoint
    )
    print(
        f"exported the policy of {args.run_dir} to {out}; load it with "
        f"purejaxdrl.load_policy({str(out)!r})"
    )
    return 0
