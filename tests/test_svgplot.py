"""SVG figures: ticks, thinning that keeps peaks, labels on every axis, legend outside the data,
and the views of the report built from plain arrays."""

from __future__ import annotations

import re

import numpy as np
import pandas as pd
import pytest

from sparsefric.figures import reversals, selection, term_survival, zoom_windows
from sparsefric.model import units
from sparsefric.svgplot import Figure, Panel, Scale, thin


@pytest.mark.parametrize("lo, hi, target, expected", [
    (-0.658, 0.907, 3, ["−0.5", "0", "0.5"]),
    (-0.39, 10.2, 4, ["0", "2.5", "5.0", "7.5", "10.0"]),
    (14700, 15200, 4, ["14800", "14900", "15000", "15100", "15200"]),
])
def test_linear_ticks_are_round_and_written_exactly(lo, hi, target, expected):
    ticks = Scale(lo, hi).ticks(target)
    assert [text for _, text in ticks][-len(expected):] == expected or \
        [text for _, text in ticks] == expected
    assert all(lo <= v <= hi for v, _ in ticks) and len(ticks) >= 3


def test_log_ticks_are_decades():
    assert [t for _, t in Scale(1e-4, 2.0, log=True).ticks(6)] == [
        "0.0001", "0.001", "0.01", "0.1", "1"]


def test_thinning_keeps_the_extremes_of_a_noisy_record():
    rng = np.random.default_rng(1)
    t = np.linspace(0, 25, 25_000)
    y = np.sin(t) + 0.1 * rng.standard_normal(t.size)
    y[12_345] = 9.0  # one spike
    tx, ty = thin(t, y, buckets=500)
    assert len(tx) <= 1001 and ty.max() == 9.0 and ty.min() == y.min()
    assert np.all(np.diff(tx) >= 0)


def test_every_panel_has_labelled_axes_and_the_legend_stands_above_the_data():
    x = np.linspace(0, 1, 50)
    a = Panel("t [s]", "τ [N·m]", "one").line(x, x, "measured").points(x, x ** 2, "dots")
    b = Panel("q̇ [rad/s]", "τ_f [N·m]", xlog=True).line(x + 0.1, x, "curve").vline(0.5)
    svg = Figure([a, b], "Two panels", "two").svg()
    assert svg.startswith('<svg class="figure" id="fig-two" viewBox="0 0 1100 ')
    assert re.findall(r'class="xlabel"[^>]*>([^<]*)<', svg) == ["t [s]", "q̇ [rad/s]"]
    assert re.findall(r'class="ylabel"[^>]*>([^<]*)<', svg) == ["τ [N·m]", "τ_f [N·m]"]
    legend_y = [float(v) for v in re.findall(r'<text x="[\d.]+" y="([\d.]+)">(?:measured|'
                                             r'dots|curve)<', svg)]
    frame_y = [float(v) for v in re.findall(r'<rect x="[\d.]+" y="([\d.]+)" width="[\d.]+" '
                                            r'height="[\d.]+" class="frame"', svg)]
    assert len(legend_y) == 3 and max(legend_y) < min(frame_y)
    assert "http" not in svg and "<script" not in svg


def test_a_line_with_gaps_is_drawn_in_pieces():
    p = Panel("x [m]", "y [N]").line([0, 1, np.nan, 3, 4], [0, 1, 2, 3, 4])
    path = re.search(r'<path d="(M[^"]*)" stroke="#404040"', Figure([p], "", "g").svg())[1]
    assert path.count("M") == 2


def _back_and_forth(n_moves=6, dt=1e-3, hold=200, ramp=600):
    v = np.concatenate([np.r_[np.zeros(hold), np.full(ramp, s)] for s in
                        np.resize([1.0, -1.0], n_moves)])
    t = np.arange(v.size) * dt
    return t, v


def test_reversals_and_zoom_windows_of_a_long_record():
    t, qd = _back_and_forth(n_moves=14)
    revs = reversals(qd)
    assert len(revs) == 13
    assert np.all(np.abs(qd[revs]) < 1e-12)  # at the stops between the moves
    short = t < 5.0
    assert zoom_windows(t[short], qd[short], np.zeros(short.sum())) == []
    resid = np.zeros_like(t)
    resid[9000:9100] = 5.0
    windows = zoom_windows(t, qd, resid)
    assert [w[2] for w in windows] == ["a reversal of a typical move", "the largest torque error"]
    t0, t1, _ = windows[1]
    assert t0 <= t[9050] <= t1 and 0 < t1 - t0 < (t[-1] - t[0]) / 5


def test_each_display_in_jupyter_has_ids_of_its_own():
    fig = Figure([Panel("t [s]", "τ [N·m]").line([0, 1], [0, 1], "measured")], "Torque", "torque")
    first, second = fig._repr_html_(), fig._repr_html_()
    ids = [re.findall(r'id="([^"]+)"', h) for h in (first, second)]
    assert ids[0] and not set(ids[0]) & set(ids[1])
    assert re.sub(r'(id="|url\(#)[^"\)]+', "", first) == re.sub(r'(id="|url\(#)[^"\)]+', "",
                                                                  second)
    assert 'id="fig-torque"' in fig.svg()  # the report's ids are unchanged


def test_term_survival_marks_each_term_where_it_is_active():
    table = pd.DataFrame({"threshold": [0.1, 1.0, 10.0], "selected": [False, True, False],
                          "qd": [2.0, 1.5, 0.0], "qd^3": [0.1, 0.0, 0.0],
                          "sign(qd)": [5.0, 5.0, 5.0]})
    terms = pd.DataFrame({"term": ["qd", "qd^3", "sign(qd)"]})
    svg = term_survival(table, terms, units("revolute")).svg()
    # one dot per (threshold, active term), and one in the legend
    assert len(re.findall(r'h0(?=[M"])', svg)) == 2 + 1 + 3 + 1
    assert "SR3 threshold (RMS torque of a term) [N·m]" in svg
    for name in ("qd", "qd^3", "sign(qd)"):
        assert f">{name}</text>" in svg


def test_selection_figure_labels_each_kind_of_variant_apart_from_the_path():
    table = pd.DataFrame({"threshold": [0.1, 1.0, 1.0, 1.0, 1.0, 2.0, 1.0],
                          "aic_r": [3.0, 1.0, 2.0, 0.0, 4.0, 5.0, 6.0],
                          "n_eliminated": [2, 3, 3, 3, 2, 2, 4],
                          "selected": [False, False, False, True, False, False, False],
                          "variant": ["", "", "linear viscous", "exponent", "viscous added",
                                      "stribeck added", "linear viscous, exponent"]})
    a = selection(table, units("revolute")).panels[0]
    labelled = {s.label: s.x.tolist() for s in a.series if s.kind == "points" and s.label}
    assert labelled == {"the same support, viscous q̇ only": [1.0],
                        "the selected support, another Stribeck δ": [1.0],
                        "the selected support, a Stribeck term added": [2.0],
                        "the selected support, viscous q̇ added": [1.0],
                        "the selected support, viscous q̇ only and another Stribeck δ": [1.0]}
    path = [s for s in a.series if s.kind == "line"][0]
    assert path.x.tolist() == [0.1, 1.0]
