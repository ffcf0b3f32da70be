"""Figures as inline SVG: sharp at any zoom, self-contained, and quick to write.

>>> p = Panel("t [s]", "τ [N·m]").line(t, tau, "measured")                # doctest: +SKIP
>>> svg = Figure([p], title="Torque", name="torque").svg()              # doctest: +SKIP

A :class:`Figure` is a grid of :class:`Panel` objects drawn into one ``<svg>`` element that
scales with its box (``viewBox``; the browser's zoom magnifies vectors, not pixels). Every
panel has an x and a y label (``text.xlabel``, ``text.ylabel``: the report states units there)
and the legend of the whole figure stands above the panels, never over the data. Long lines
are thinned to the minimum and maximum of each of :data:`LINE_BUCKETS` buckets, which keeps
the envelope of a noisy record. Nothing here imports matplotlib: a report of a dozen figures
is written in tens of milliseconds.
"""

from __future__ import annotations

import html
import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass, field, replace

import numpy as np
from numpy.typing import ArrayLike

from sparsefric.regimes import runs

#: Width of a figure in SVG user units (≈ CSS pixels at 100 % zoom).
WIDTH = 1100
FONT = 12
#: A line of more samples is reduced to the min and max of this many buckets.
LINE_BUCKETS = 900
#: Colour per role, shared by every figure of the report and the batch summary.
COLORS = {"measured": "#404040", "static": "#e07b00", "dynamic": "#1f63b5",
          "truth": "#2a9d3a", "reference": "#8e44ad", "cve": "#c62828", "step1": "#b0b0b0",
          "grid": "#e4e4e4", "axis": "#555555", "shade": "#f2e9c9"}
#: Colours of further series (comparisons, joints of a batch).
CYCLE = ("#1f63b5", "#e07b00", "#2a9d3a", "#c62828", "#8e44ad", "#8c564b", "#d6449b",
         "#17a2b8", "#7f7f7f", "#b5a300")
_CHAR = 0.6 * FONT  # mean advance of a character [user units]
_DISPLAYED = itertools.count(1)  # serial of figures displayed in Jupyter


# ----------------------------------------------------------------------------- scales
def _nice_step(span: float, target: int) -> float:
    """The largest step of 1, 2, 2.5 or 5 × 10^k that cuts ``span`` into ≥ ``target`` parts."""
    raw = span / max(target, 1)
    mag = 10.0 ** math.floor(math.log10(raw))
    return max(m * mag for m in (0.5, 1, 2, 2.5, 5) if m * mag <= raw * (1 + 1e-9))


def _decimals(step: float) -> int:
    """Decimals that write every multiple of ``step`` exactly (2.5 → 1, 0.25 → 2)."""
    for d in range(0, 12):
        if abs(round(step * 10**d) - step * 10**d) < 1e-6:
            return d
    return 12


def _fmt(v: float, step: float) -> str:
    if abs(v) < 1e-9 * step:
        return "0"
    text = f"{v:.{_decimals(step)}f}" if 1e-4 <= abs(step) < 1e5 else f"{v:.3g}"
    return text.replace("-", "−")


@dataclass
class Scale:
    """A map from data to pixels along one axis (linear or log10)."""

    lo: float
    hi: float
    log: bool = False

    def ticks(self, target: int = 6) -> list[tuple[float, str]]:
        """Tick positions in data units with their labels."""
        if self.log:
            a, b = math.floor(math.log10(self.lo) + 1e-9), math.ceil(math.log10(self.hi) - 1e-9)
            if b - a >= 2:
                every = max(1, math.ceil((b - a) / target))
                return [(10.0 ** k, f"{10.0 ** k:g}".replace("-", "−"))
                        for k in range(a, b + 1, every) if self.lo <= 10.0 ** k <= self.hi]
            values = [m * 10.0 ** k for k in range(a - 1, b + 1) for m in (1, 2, 5)]
            return [(v, f"{v:g}") for v in values if self.lo <= v <= self.hi]
        step = _nice_step(self.hi - self.lo, target)
        first = math.ceil(self.lo / step - 1e-9)
        count = int(math.floor(self.hi / step + 1e-9)) - first + 1
        return [((first + i) * step, _fmt((first + i) * step, step)) for i in range(count)]

    def fraction(self, x: np.ndarray) -> np.ndarray:
        """Position within [lo, hi] as 0…1."""
        x = np.asarray(x, dtype=float)
        if self.log:
            with np.errstate(divide="ignore", invalid="ignore"):
                lx = np.log10(np.where(x > 0, x, np.nan))
            return (lx - math.log10(self.lo)) / (math.log10(self.hi) - math.log10(self.lo))
        return (x - self.lo) / (self.hi - self.lo)


def _limits(values: list[np.ndarray], log: bool, given: tuple[float, float] | None
            ) -> tuple[float, float]:
    """Axis limits [data units]: ``given``, else the finite data with a 4 % margin."""
    if given is not None:
        return given
    v = np.concatenate([np.ravel(a) for a in values]) if values else np.array([])
    v = v[np.isfinite(v) & (v > 0)] if log else v[np.isfinite(v)]
    if v.size == 0:
        return (0.1, 10.0) if log else (0.0, 1.0)
    lo, hi = float(v.min()), float(v.max())
    if log:
        lo, hi = (lo / 2, hi * 2) if hi <= lo else (lo, hi)
        pad = (hi / lo) ** 0.04
        return lo / pad, hi * pad
    if hi <= lo:
        half = abs(lo) * 0.1 or 1.0
        return lo - half, hi + half
    pad = 0.04 * (hi - lo)
    return lo - pad, hi + pad


def thin(x: np.ndarray, y: np.ndarray, buckets: int = LINE_BUCKETS
         ) -> tuple[np.ndarray, np.ndarray]:
    """``(x, y)`` with at most ``2·buckets`` points: the min and max of ``y`` per bucket, in
    their order (the envelope of a noisy signal survives; its peaks are not cut)."""
    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    n = len(y)
    if n <= 2 * buckets:
        return x, y
    if not np.all(np.isfinite(y)):  # a line with gaps: every k-th sample keeps the gaps
        step = int(np.ceil(n / (2 * buckets)))
        return x[::step], y[::step]
    size = n // buckets
    m = size * buckets
    blocks = y[:m].reshape(buckets, size)
    lo, hi = np.nanargmin(blocks, axis=1), np.nanargmax(blocks, axis=1)
    base = np.arange(buckets) * size
    idx = np.sort(np.concatenate([base + np.minimum(lo, hi), base + np.maximum(lo, hi)]))
    idx = np.concatenate([idx, np.arange(m, n)[-1:]]) if m < n else idx
    return x[idx], y[idx]


# ----------------------------------------------------------------------------- panels
@dataclass
class _Series:
    kind: str  # line, points, errorbar, hbar, band
    x: np.ndarray
    y: np.ndarray
    label: str | None
    color: str
    dash: str | None = None
    width: float = 1.4
    err: np.ndarray | None = None
    upper: np.ndarray | None = None  # band: y is its lower edge
    cap: str = "round"  # points and errorbar: round dots or squares


@dataclass
class Panel:
    """One set of axes: labels with units, series, reference lines.

    Parameters
    ----------
    xlabel, ylabel : str
        Axis labels, with the unit in brackets (``"t [s]"``).
    title : str
        Shown above the panel.
    xlog, ylog : bool
        Logarithmic axes.
    xlim, ylim : (float, float), optional
        Axis limits in data units (default: the data with a small margin).
    categories : sequence of str, optional
        Names of the rows of a horizontal bar chart (see :meth:`hbars`); they replace the
        numeric y axis.
    """

    xlabel: str
    ylabel: str
    title: str = ""
    xlog: bool = False
    ylog: bool = False
    xlim: tuple[float, float] | None = None
    ylim: tuple[float, float] | None = None
    categories: Sequence[str] | None = None
    series: list[_Series] = field(default_factory=list)
    rules: list[tuple[str, float, str, str | None]] = field(default_factory=list)
    spans: list[tuple[float, float]] = field(default_factory=list)

    def line(self, x: ArrayLike, y: ArrayLike, label: str | None = None,
             color: str = COLORS["measured"], dash: str | None = None,
             width: float = 1.4) -> Panel:
        """A line through (x, y), thinned when long (:func:`thin`)."""
        x, y = thin(np.asarray(x, dtype=float), np.asarray(y, dtype=float))
        self.series.append(_Series("line", x, y, label, color, dash, width))
        return self

    def points(self, x: ArrayLike, y: ArrayLike, label: str | None = None,
               color: str = COLORS["measured"], size: float = 3.0) -> Panel:
        """Dots of diameter ``size`` [user units]."""
        self.series.append(_Series("points", np.asarray(x, dtype=float),
                                   np.asarray(y, dtype=float), label, color, width=size))
        return self

    def band(self, x: ArrayLike, lower: ArrayLike, upper: ArrayLike, label: str | None = None,
             color: str = COLORS["dynamic"]) -> Panel:
        """A translucent area between ``lower`` and ``upper`` (a confidence band), behind the
        lines."""
        self.series.insert(0, _Series("band", np.asarray(x, dtype=float),
                                      np.asarray(lower, dtype=float), label, color,
                                      upper=np.asarray(upper, dtype=float)))
        return self

    def errorbar(self, x: ArrayLike, y: ArrayLike, err: ArrayLike, label: str | None = None,
                 color: str = COLORS["cve"], square: bool = False) -> Panel:
        """Dots (squares with ``square``) with vertical bars ± ``err``."""
        self.series.append(_Series("errorbar", np.asarray(x, dtype=float),
                                   np.asarray(y, dtype=float), label, color, width=5.0,
                                   err=np.asarray(err, dtype=float),
                                   cap="square" if square else "round"))
        return self

    def hbars(self, values: ArrayLike, label: str, color: str, slot: int = 0,
              slots: int = 1) -> Panel:
        """Horizontal bars, one per category; ``slot`` of ``slots`` bars side by side."""
        x = np.asarray(values, dtype=float)
        y = np.arange(len(x)) + (slot + 0.5) / slots - 0.5
        self.series.append(_Series("hbar", x, y, label, color, width=0.8 / slots))
        return self

    def vline(self, x: float, color: str = COLORS["axis"], dash: str = "4 3",
              label: str | None = None) -> Panel:
        """A vertical rule at ``x`` (a selected value, a restart)."""
        self.rules.append(("v", float(x), color, label))
        self.series.append(_Series("rule", np.array([]), np.array([]), label, color, dash))
        return self

    def hline(self, y: float, color: str = COLORS["axis"], dash: str = "2 3") -> Panel:
        """A horizontal rule at ``y``."""
        self.rules.append(("h", float(y), color, None))
        return self

    def span(self, x0: float, x1: float) -> Panel:
        """A shaded band x0…x1 behind the data (where a zoom below looks)."""
        self.spans.append((float(x0), float(x1)))
        return self

    # -------------------------------------------------------------- layout
    def _scales(self) -> tuple[Scale, Scale]:
        xs, ys = [], []
        for s in self.series:
            if s.kind == "hbar":
                xs.append(s.x)
            elif s.kind == "errorbar":
                xs.append(s.x)
                ys += [s.y - s.err, s.y + s.err]
            elif s.kind == "band":
                xs.append(s.x)
                ys += [s.y, s.upper]
            elif s.kind != "rule":
                xs.append(s.x)
                ys.append(s.y)
        if self.categories is not None:
            ylim = (len(self.categories) - 0.5, -0.5)
        else:
            ylim = _limits(ys, self.ylog, self.ylim)
        return (Scale(*_limits(xs, self.xlog, self.xlim), log=self.xlog),
                Scale(*ylim, log=self.ylog))

    def _left(self, ys: Scale) -> float:
        labels = self.categories if self.categories is not None else [t for _, t in ys.ticks()]
        return 30 + _CHAR * max((len(t) for t in labels), default=1)


def _path(px: np.ndarray, py: np.ndarray) -> str:
    """Path data through the points, broken where a coordinate is not finite."""
    ok = np.isfinite(px) & np.isfinite(py)
    out = []
    for a, b in runs(ok):
        xy = np.column_stack([px[a:b], py[a:b]]).ravel().tolist()
        out.append("M" + ("%.1f %.1f " * (b - a)) % tuple(xy))
    return "".join(out)


def _area(px: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> str:
    """One closed path per run of finite points: along ``hi``, back along ``lo``."""
    ok = np.isfinite(px) & np.isfinite(lo) & np.isfinite(hi)
    out = []
    for a, b in runs(ok):
        xs = np.r_[px[a:b], px[a:b][::-1]]
        ys = np.r_[hi[a:b], lo[a:b][::-1]]
        out.append("M" + "L".join(f"{x:.1f} {y:.1f}" for x, y in zip(xs.tolist(), ys.tolist(),
                                                                    strict=True)) + "Z")
    return "".join(out)


def _dots(px: np.ndarray, py: np.ndarray) -> str:
    """Path data of a zero-length stroke at each point (a dot with round caps)."""
    ok = np.isfinite(px) & np.isfinite(py)
    xy = np.column_stack([px[ok], py[ok]]).ravel().tolist()
    return ("M%.1f %.1fh0" * int(ok.sum())) % tuple(xy)


@dataclass
class _Box:
    x0: float
    y0: float
    w: float
    h: float


@dataclass
class _Map:
    """Data → user units inside a panel's data area ``b``."""

    xs: Scale
    ys: Scale
    b: _Box

    def x(self, v) -> np.ndarray:
        return self.b.x0 + self.b.w * self.xs.fraction(v)

    def y(self, v) -> np.ndarray:
        return self.b.y0 + self.b.h * (1 - self.ys.fraction(v))


def _esc(text: str) -> str:
    return html.escape(text, quote=True)


def _panel_svg(p: Panel, box: _Box, clip: str) -> str:
    xs, ys = p._scales()
    left = p._left(ys)
    top = box.y0 + (20 if p.title else 8)
    b = _Box(box.x0 + left, top, box.w - left - 12, box.y0 + box.h - 40 - top)
    m = _Map(xs, ys, b)
    kind = "panel categorical" if p.categories is not None else "panel"
    out = [f'<g class="{kind}"><clipPath id="{clip}"><rect x="{b.x0:.1f}" y="{b.y0:.1f}" '
           f'width="{b.w:.1f}" height="{b.h:.1f}"/></clipPath>', *_frame(p, m),
           f'<g clip-path="url(#{clip})">', *(_series_svg(s, m) for s in p.series), "</g>"]
    cx, ly = b.x0 + b.w / 2, b.y0 + b.h / 2
    out.append(f'<text class="xlabel" x="{cx:.1f}" y="{box.y0 + box.h - 8:.1f}" '
               f'text-anchor="middle">{_esc(p.xlabel)}</text>')
    out.append(f'<text class="ylabel" x="{box.x0 + 12:.1f}" y="{ly:.1f}" text-anchor="middle" '
               f'transform="rotate(-90 {box.x0 + 12:.1f} {ly:.1f})">{_esc(p.ylabel)}</text>')
    if p.title:
        out.append(f'<text class="ptitle" x="{cx:.1f}" y="{box.y0 + 13:.1f}" '
                   f'text-anchor="middle">{_esc(p.title)}</text>')
    out.append("</g>")
    return "".join(out)


def _frame(p: Panel, m: _Map) -> list[str]:
    """Shaded spans, grid, ticks with labels, the reference rules and the frame."""
    b = m.b
    out = [f'<rect x="{m.x(a):.1f}" y="{b.y0:.1f}" width="{m.x(c) - m.x(a):.1f}" '
           f'height="{b.h:.1f}" fill="{COLORS["shade"]}"/>' for a, c in p.spans]
    for v, text in m.xs.ticks(max(3, int(b.w / 90))):
        x = float(m.x(v))
        out.append(f'<path d="M{x:.1f} {b.y0:.1f}V{b.y0 + b.h:.1f}" class="grid"/>'
                   f'<text x="{x:.1f}" y="{b.y0 + b.h + 15:.1f}" text-anchor="middle">'
                   f"{text}</text>")
    if p.categories is not None:
        yticks = [(i, _esc(c)) for i, c in enumerate(p.categories)]
    else:
        yticks = m.ys.ticks(max(3, int(b.h / 45)))
    for v, text in yticks:
        y = float(m.y(v))
        out.append(f'<path d="M{b.x0:.1f} {y:.1f}H{b.x0 + b.w:.1f}" class="grid"/>'
                   f'<text x="{b.x0 - 5:.1f}" y="{y + 4:.1f}" text-anchor="end">{text}</text>')
    for kind, v, color, _ in p.rules:
        d = (f"M{float(m.x(v)):.1f} {b.y0:.1f}V{b.y0 + b.h:.1f}" if kind == "v" else
             f"M{b.x0:.1f} {float(m.y(v)):.1f}H{b.x0 + b.w:.1f}")
        out.append(f'<path d="{d}" stroke="{color}" stroke-dasharray="4 3" fill="none"/>')
    out.append(f'<rect x="{b.x0:.1f}" y="{b.y0:.1f}" width="{b.w:.1f}" height="{b.h:.1f}" '
               'class="frame"/>')
    return out


def _series_svg(s: _Series, m: _Map) -> str:
    tip = f"<title>{_esc(s.label)}</title>" if s.label else ""
    if s.kind == "rule":
        return ""
    if s.kind == "line":
        dash = f' stroke-dasharray="{s.dash}"' if s.dash else ""
        return (f'<path d="{_path(m.x(s.x), m.y(s.y))}" stroke="{s.color}" stroke-width='
                f'"{s.width}" fill="none" stroke-linejoin="round"{dash}>{tip}</path>')
    if s.kind == "points":
        return (f'<path d="{_dots(m.x(s.x), m.y(s.y))}" stroke="{s.color}" '
                f'stroke-width="{s.width}" stroke-linecap="round" fill="none">{tip}</path>')
    if s.kind == "band":
        px, lo, hi = m.x(s.x), m.y(s.y), m.y(s.upper)
        return (f'<path d="{_area(px, lo, hi)}" fill="{s.color}" fill-opacity="0.18" '
                f'stroke="none">{tip}</path>')
    if s.kind == "errorbar":
        px, lo, hi = m.x(s.x), m.y(s.y - s.err), m.y(s.y + s.err)
        bars = "".join(f"M{x:.1f} {a:.1f}V{c:.1f}" for x, a, c in zip(
            px.tolist(), lo.tolist(), hi.tolist(), strict=True) if math.isfinite(a + c + x))
        return (f'<g>{tip}<path d="{bars}" stroke="{s.color}" fill="none"/><path d="'
                f'{_dots(px, m.y(s.y))}" stroke="{s.color}" stroke-width="{s.width}" '
                f'stroke-linecap="{s.cap}" fill="none"/></g>')
    return _hbars(s, m)


def _hbars(s: _Series, m: _Map) -> str:
    """Bars from the axis origin (the left edge of a log axis) to each value."""
    x0 = m.b.x0 if m.xs.log else float(m.x(0.0))
    h = s.width * abs(float(m.y(1.0)) - float(m.y(0.0)))  # a share of one category
    rects = [f'<rect x="{min(x0, v):.1f}" y="{y - h / 2:.1f}" width="{abs(v - x0):.1f}" '
             f'height="{h:.1f}"/>' for v, y in zip(m.x(s.x).tolist(), m.y(s.y).tolist(),
                                                   strict=True) if math.isfinite(v)]
    tip = f"<title>{_esc(s.label)}</title>" if s.label else ""
    return f'<g fill="{s.color}">{tip}{"".join(rects)}</g>'


# ----------------------------------------------------------------------------- figures
def _legend(panels: Sequence[Panel], y0: float) -> tuple[str, float]:
    """The legend entries of all panels (first of each label) in rows; returns (svg, height)."""
    seen: dict[str, _Series] = {}
    for p in panels:
        for s in p.series:
            if s.label and s.label not in seen:
                seen[s.label] = s
    x, y, out = 10.0, y0 + 10, []
    for label, s in seen.items():
        w = 34 + _CHAR * len(label)
        if x + w > WIDTH - 10 and x > 10:
            x, y = 10.0, y + 18
        out.append(_legend_entry(s, x, y, label))
        x += w + 12
    return "".join(out), (y - y0 + 12) if seen else 0.0


def _legend_entry(s: _Series, x: float, y: float, label: str) -> str:
    if s.kind in ("points", "errorbar"):
        mark = (f'<path d="M{x + 12:.1f} {y:.1f}h0" stroke="{s.color}" stroke-width="6" '
                f'stroke-linecap="{s.cap}"/>')
    elif s.kind == "hbar":
        mark = f'<rect x="{x:.1f}" y="{y - 5:.1f}" width="24" height="10" fill="{s.color}"/>'
    elif s.kind == "band":
        mark = (f'<rect x="{x:.1f}" y="{y - 5:.1f}" width="24" height="10" fill="{s.color}" '
                'fill-opacity="0.18"/>')
    else:
        dash = f' stroke-dasharray="{s.dash}"' if s.dash else ""
        mark = (f'<path d="M{x:.1f} {y:.1f}h24" stroke="{s.color}" stroke-width="2"'
                f"{dash}/>")
    return f'{mark}<text x="{x + 30:.1f}" y="{y + 4:.1f}">{_esc(label)}</text>'


@dataclass
class Figure:
    """Panels in a grid under a title and one legend.

    Parameters
    ----------
    panels : list of Panel
    title : str
    name : str
        A short identifier, unique in the page (ids of the clip paths, the figure's id).
    cols : int
        Panels per row.
    height : float
        Height of one row of panels [user units].
    """

    panels: list[Panel]
    title: str
    name: str
    cols: int = 2
    height: float = 250.0

    def svg(self) -> str:
        """The figure as one ``<svg>`` element (no XML declaration: for inline HTML)."""
        top = 24.0 if self.title else 4.0
        legend, lh = _legend(self.panels, top)
        rows = math.ceil(len(self.panels) / self.cols)
        total = top + lh + rows * self.height + 4
        w = WIDTH / self.cols
        body = []
        for i, p in enumerate(self.panels):
            r, c = divmod(i, self.cols)
            box = _Box(c * w, top + lh + r * self.height, w, self.height)
            body.append(_panel_svg(p, box, f"{self.name}-c{i}"))
        title = (f'<text class="ftitle" x="{WIDTH / 2}" y="17" text-anchor="middle">'
                 f"{_esc(self.title)}</text>") if self.title else ""
        return (f'<svg class="figure" id="fig-{self.name}" viewBox="0 0 {WIDTH} {total:.0f}" '
                f'role="img" aria-label="{_esc(self.title)}">'
                f"<title>{_esc(self.title)}</title>{title}{legend}{''.join(body)}</svg>")

    def _repr_html_(self) -> str:
        """Jupyter: a notebook is one page for all its outputs, so each display gets ids of
        its own (two figures of the same name would share clip paths)."""
        shown = replace(self, name=f"{self.name}-{next(_DISPLAYED)}")
        return f"<style>{CSS}</style>{shown.svg()}"


#: CSS of the figures (to include once in the page).
CSS = (
    "svg.figure{width:100%;height:auto;display:block;margin:0.6em 0;font-family:sans-serif;"
    f"font-size:{FONT}px;fill:#222}}"
    "svg.figure .grid{stroke:" + COLORS["grid"] + ";fill:none}"
    "svg.figure .frame{fill:none;stroke:" + COLORS["axis"] + "}"
    "svg.figure .ftitle{font-size:15px;font-weight:bold}"
    "svg.figure .ptitle{font-size:12px;font-weight:bold}"
)
