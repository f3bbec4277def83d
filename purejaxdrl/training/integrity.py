"""A checkpoint's integrity: a SHA-256 manifest of its files, verified on restore.

After orbax commits a step, process 0 writes the manifest (`MANIFEST`);
restoring checks it, so a truncated or corrupted checkpoint is reported and
skipped (`checkpoint.Checkpointer.restore_latest`).
"""

import hashlib
import json
import os
import pathlib

MANIFEST = "purejaxdrl.sha256"
# What `verify` says of a step without a manifest. orbax renames a step's
# folder into place once its files are complete, so such a step is whole: the
# run stopped after orbax committed it and before the manifest was written.
NO_MANIFEST = "unhashed (the run stopped before writing its manifest)"


def _digest(path: pathlib.Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def _files(step_dir: pathlib.Path) -> dict[str, pathlib.Path]:
    return {
        str(p.relative_to(step_dir)): p
        for p in sorted(step_dir.rglob("*"))
        if p.is_file() and p.name != MANIFEST
    }


def write_manifest(step_dir: pathlib.Path) -> None:
    """Writes the SHA-256 of every file of a committed checkpoint, atomically."""
    digests = {name: _digest(p) for name, p in _files(step_dir).items()}
    tmp = step_dir / f".{MANIFEST}.tmp"
    tmp.write_text(json.dumps(digests, indent=0, sort_keys=True))
    os.replace(tmp, step_dir / MANIFEST)


def verify(step_dir: pathlib.Path) -> str | None:
    """None if `step_dir` matches its manifest, else what is wrong (one line)."""
    manifest = step_dir / MANIFEST
    try:
        expected = json.loads(manifest.read_text())
    except FileNotFoundError:
        return NO_MANIFEST
    except (OSError, ValueError):
        return "its manifest is unreadable"
    found = _files(step_dir)
    for name, digest in expected.items():
        if name not in found:
            return f"file {name} is missing"
        if _digest(found[name]) != digest:
            return f"file {name} is corrupted (checksum mismatch)"
    return None


# A checkpoint folder -> its files' stats when it was last found whole.
_WHOLE: dict[pathlib.Path, tuple] = {}


def verify_once(step_dir: pathlib.Path) -> str | None:
    """`verify`, hashing a checkpoint found whole again only if its files changed.

    Opening a run reads the newest checkpoint's metadata, then its state
    (`newest_meta`, `restore_latest`, perhaps from two checkpointers): a
    replay run's holds its buffer, gigabytes to hash. A stat of each file
    (size, modification and change times), not a read, tells whether it did.
    """
    try:
        stamp = tuple(
            (name, st.st_size, st.st_mtime_ns, st.st_ctime_ns)
            for name, f in sorted(
                {**_files(step_dir), MANIFEST: step_dir / MANIFEST}.items()
            )
            for st in [f.stat()]
        )
    except OSError:  # a file went away: verify says which
        return verify(step_dir)
    if _WHOLE.get(step_dir) == stamp:
        return None
    problem = verify(step_dir)
    if problem is None:
        _WHOLE[step_dir] = stamp
    return problem
