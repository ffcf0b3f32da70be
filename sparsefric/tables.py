"""Tables as HTML and Markdown text, for the report, the notebook display and the batch summary.

One formatting of numbers for every table the tool writes: floats with ``digits`` significant
digits, non-finite ones empty, booleans as "yes"/"".
"""

from __future__ import annotations

import html
import math
from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np

#: CSS of the tables shown in Jupyter (the ``sparsefric`` class), as one inline style element.
NOTEBOOK_STYLE = (
    "<style>.sparsefric table{border-collapse:collapse;font-size:0.9em;margin:0.3em 0}"
    ".sparsefric td,.sparsefric th{border:1px solid #ccc;padding:1px 6px;text-align:right}"
    ".sparsefric th{background:#f4f4f4}.sparsefric td:first-child{text-align:left}"
    ".sparsefric .ok{color:#060;font-weight:bold}.sparsefric .bad{color:#a00;"
    "font-weight:bold}</style>")


def fmt(value: Any, digits: int = 5) -> str:
    """A table cell as text: floats with ``digits`` significant digits, ±inf as ±∞ (an open
    interval end), NaN empty."""
    if isinstance(value, bool | np.bool_):
        return "yes" if value else ""
    if isinstance(value, float | np.floating):
        if math.isinf(value):
            return "∞" if value > 0 else "−∞"
        return "" if math.isnan(value) else f"{value:.{digits}g}"
    return str(value)


def html_table(header: Sequence[Any], rows: Iterable[Sequence[Any]],
               highlight: Sequence[bool] | None = None, digits: int = 5) -> str:
    """An HTML table; rows where ``highlight`` is true get ``class="sel"``."""
    head = "".join(f"<th>{html.escape(str(h))}</th>" for h in header)
    body = []
    for i, row in enumerate(rows):
        cls = ' class="sel"' if highlight is not None and highlight[i] else ""
        cells = "".join(f"<td>{html.escape(fmt(v, digits))}</td>" for v in row)
        body.append(f"<tr{cls}>{cells}</tr>")
    return f"<table><thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table>"


def markdown_table(header: Sequence[Any], rows: Iterable[Sequence[Any]], digits: int = 5) -> str:
    """A Markdown table (``_(none)_`` when there are no rows)."""
    rows = list(rows)
    if not rows:
        return "_(none)_\n"
    lines = ["| " + " | ".join(str(c) for c in header) + " |",
             "|" + "|".join("---" for _ in header) + "|"]
    lines += ["| " + " | ".join(fmt(v, digits).replace("|", "\\|") for v in row) + " |"
              for row in rows]
    return "\n".join(lines) + "\n"
