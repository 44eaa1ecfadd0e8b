"""Write a notebook from a plain-text cell list (cells split on lines `# %% [markdown]` / `# %%`).

    python tools/make_notebook.py CELLS.py notebooks/NN_name.ipynb

The numbered notebooks are committed as .ipynb only (edit them in JupyterLab and strip outputs);
this turns a cell list written as plain text into a new one.

The first code cell is tagged `parameters` (papermill). Output has no outputs/execution counts.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

import nbformat


def build(source: str) -> nbformat.NotebookNode:
    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nb.metadata["language_info"] = {"name": "python"}
    chunks = re.split(r"^# %%(.*)$", source, flags=re.M)
    first_code = True
    for i in range(1, len(chunks), 2):
        kind, body = chunks[i].strip(), chunks[i + 1].strip("\n")
        if kind == "[markdown]":
            text = "\n".join(line[2:] if line.startswith("# ") else line.lstrip("#") for line in body.splitlines())
            nb.cells.append(nbformat.v4.new_markdown_cell(text))
        else:
            cell = nbformat.v4.new_code_cell(body)
            if first_code:
                cell.metadata["tags"] = ["parameters"]
                first_code = False
            nb.cells.append(cell)
    for j, cell in enumerate(nb.cells):
        cell["id"] = f"cell-{j:02d}"
    return nb


def main(src: str, dst: str) -> None:
    nb = build(Path(src).read_text())
    nbformat.validate(nb)
    Path(dst).write_text(nbformat.writes(nb) + "\n")


if __name__ == "__main__":
    main(*sys.argv[1:3])
