"""`reproduce.py`'s parts: the score table's rows, and its tables as text.

- `rows`: the records: every preset x algorithm row, its seeds, its anchor
  (the published figure it is measured against), and why it may not run.
- `tables`: `docs/scores.md` and README.md's compact table as text, from the
  rows and `docs/scores.json`'s figures.

`reproduce.py` trains the rows and writes the files.
"""
