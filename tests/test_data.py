"""The data contract: loading, conversion and one-line errors for bad files."""

from __future__ import annotations

import gzip
import re

import numpy as np
import pandas as pd
import pytest

from sparsefric.data import Columns, Trajectory, load_trajectories, save_trajectory, unwrap_angle
from sparsefric.differentiation import differentiate
from sparsefric.errors import DataError


def _write(tmp_path, name="d.csv", n=200, **cols):
    t = np.arange(n) * 1e-3
    data = {"t": t, "q": np.sin(2 * np.pi * t), "tau": np.cos(2 * np.pi * t)}
    data.update(cols)
    path = tmp_path / name
    pd.DataFrame(data).to_csv(path, index=False)
    return path


def test_loads_contract_and_keeps_truth_apart(tmp_path):
    path = _write(tmp_path, qd_true=np.ones(200))
    (traj,) = load_trajectories(path)
    assert len(traj) == 200 and traj.dt == pytest.approx(1e-3)
    assert traj.qd is None and "qd_true" in traj.truth


def test_degrees_are_converted_and_columns_renamed(tmp_path):
    t = np.arange(100) * 0.01
    pd.DataFrame({"time": t, "angle": 90 * t, "torque": t}).to_csv(tmp_path / "d.csv",
                                                                   index=False)
    (traj,) = load_trajectories(tmp_path / "d.csv", Columns("time", "angle", "torque"),
                                angle_unit="deg")
    np.testing.assert_allclose(traj.q, np.pi / 2 * t)


@pytest.mark.parametrize("unit, turn", [("rad", 2 * np.pi), ("deg", 360.0)])
def test_an_angle_wrapped_at_a_half_turn_is_unwrapped(tmp_path, unit, turn):
    """An absolute encoder logs the angle modulo a turn: back-and-forth moves across ±π come
    back continuous (up to whole turns) with a note saying so."""
    t = np.arange(3000) * 1e-3
    angle = (0.9 + 0.2 * np.sin(2 * np.pi * t)) * turn / 2  # crosses the half turn 6 times
    wrapped = (angle + turn / 2) % turn - turn / 2
    pd.DataFrame({"t": t, "q": wrapped, "tau": np.cos(t)}).to_csv(tmp_path / "w.csv",
                                                                    index=False)
    (traj,) = load_trajectories(tmp_path / "w.csv", angle_unit=unit)
    shift = traj.q - angle * 2 * np.pi / turn
    np.testing.assert_allclose(shift, shift[0], atol=1e-9)
    assert shift[0] / (2 * np.pi) == pytest.approx(round(shift[0] / (2 * np.pi)), abs=1e-9)
    (note,) = traj.notes
    assert "w.csv" in note and "'q'" in note and "6 jumps" in note


def test_a_glitch_is_not_taken_for_a_wrap():
    q = np.linspace(0.0, 0.5, 400)
    glitch = q.copy()
    glitch[200] += 4.0  # one bad sample: jumps of ±4 rad, not a turn
    assert unwrap_angle(glitch)[1] == 0 and unwrap_angle(q)[1] == 0
    np.testing.assert_array_equal(unwrap_angle(glitch)[0], glitch)


def test_semicolon_and_tab_separated_files(tmp_path):
    """Spreadsheet exports with ';' and decimal commas, and tab-separated logs, read as the
    comma-separated original (they were one column named 't;q;tau')."""
    path = _write(tmp_path)
    text = path.read_text()
    (tmp_path / "semi.csv").write_text(text.replace(",", ";").replace(".", ","))
    (tmp_path / "tab.txt").write_text(text.replace(",", "\t"))
    (ref,) = load_trajectories(path)
    for name in ("semi.csv", "tab.txt"):
        (traj,) = load_trajectories(tmp_path / name)
        np.testing.assert_array_equal(traj.q, ref.q)
        np.testing.assert_array_equal(traj.tau, ref.tau)


@pytest.mark.parametrize("suffix", [".gz", ".bz2", ".xz"])
def test_compressed_files_are_read_in_their_dialect(tmp_path, suffix):
    """pandas reads a compressed CSV by its suffix; the separator was sniffed from its raw
    bytes, and a byte that happened to be ';' made the whole header one column."""
    import bz2
    import gzip
    import lzma

    path = _write(tmp_path)
    text = path.read_text()
    opener = {".gz": gzip.open, ".bz2": bz2.open, ".xz": lzma.open}[suffix]
    (ref,) = load_trajectories(path)
    for name, body in (("comma.csv", text), ("semi.csv", text.replace(",", ";").replace(".", ","))):
        with opener(tmp_path / (name + suffix), "wt") as fh:
            fh.write(body)
        (traj,) = load_trajectories(tmp_path / (name + suffix))
        np.testing.assert_array_equal(traj.q, ref.q)


def _rows(n: int = 200, sep: str = ",", decimal: str = ".") -> tuple[str, np.ndarray]:
    """``n`` rows of t, q, tau as a CSV body, and q."""
    t = np.arange(1, n + 1) * 1e-3
    q, tau = np.sin(2 * np.pi * t), np.cos(2 * np.pi * t)
    body = "".join(sep.join(f"{x:.9g}".replace(".", decimal) for x in row) + "\n"
                   for row in zip(t, q, tau, strict=True))
    return body, q


@pytest.mark.parametrize("suffix", ["", ".gz"])
def test_a_windows_spreadsheet_export_is_read_in_its_encoding(tmp_path, suffix):
    """Excel on Windows saves "CSV" in Windows-1252: '°' and '·' are single bytes that are not
    UTF-8, and the file was refused with "'utf-8' codec can't decode byte 0xb0"."""
    body, q = _rows(sep=";", decimal=",")
    raw = ("Zeit [s];Position [°];Moment [N·m]\n" + body).encode("cp1252")
    path = tmp_path / f"excel.csv{suffix}"
    path.write_bytes(gzip.compress(raw) if suffix else raw)
    (traj,) = load_trajectories(path, Columns("Zeit [s]", "Position [°]", "Moment [N·m]"))
    np.testing.assert_allclose(traj.q, np.radians(q), rtol=1e-8)  # the header's degrees
    assert traj.notes == (f"{path} (its header) gives column 'Position [°]' in °: read in deg",)


def test_a_latin_1_comment_and_excel_unicode_text_are_read(tmp_path):
    """A Latin-1 '°' in a logger's comment, and Excel's "Unicode text" (UTF-16, tabs)."""
    body, q = _rows()
    (tmp_path / "latin.csv").write_bytes(("# q in °\nt,q,tau\n" + body).encode("latin-1"))
    (tmp_path / "unicode.txt").write_bytes(("t\tq\ttau\n" + body.replace(",", "\t"))
                                           .encode("utf-16"))
    for name in ("latin.csv", "unicode.txt"):
        (traj,) = load_trajectories(tmp_path / name)
        np.testing.assert_allclose(traj.q, q, rtol=1e-8)


def test_a_binary_file_is_one_line_saying_it_is_not_text(tmp_path):
    path = tmp_path / "book.xlsx"
    path.write_bytes(bytes(range(256)) * 4)
    with pytest.raises(DataError, match=rf"^{path}: not a text file \(in UTF-8, UTF-16 or "
                       r"Windows-1252 encoding\); save it as CSV$"):
        load_trajectories(path)


@pytest.mark.parametrize("suffix", ["", ".gz"])
def test_comment_lines_of_a_logger_are_skipped(tmp_path, suffix):
    """Lines starting with '#' (a preamble, a note between the rows, Windows line breaks)
    were read as the header or as a row of text; a '#' inside a column name stays."""
    body, q = _rows()
    rows = body.splitlines(keepends=True)
    text = ("# logger 4.2; joint 3\r\n  # 1 kHz\n\nt,q#1,tau\n# s, rad, N·m\n"
            + "".join(rows[:100]) + "#pause\n" + "".join(rows[100:]))
    path = tmp_path / f"log.csv{suffix}"
    path.write_bytes(gzip.compress(text.encode()) if suffix else text.encode())
    (traj,) = load_trajectories(path, Columns(position="q#1"))
    np.testing.assert_allclose(traj.q, q, rtol=1e-8)


def test_line_numbers_count_the_comment_and_blank_lines(tmp_path):
    """Messages name the line as an editor shows it: pandas skipped blank lines without
    counting them."""
    body, _ = _rows()
    rows = body.splitlines(keepends=True)
    t, _, tau = rows[150].split(",")
    rows[150] = f"{t},x,{tau}"
    path = tmp_path / "log.csv"
    path.write_text("# preamble\n\nt,q,tau\n" + "".join(rows[:100]) + "# note\n\n"
                    + "".join(rows[100:]))
    with pytest.raises(DataError, match=rf"^{path}: column 'q', line 156: non-numeric value 'x'$"):
        load_trajectories(path)
    path.write_text("# preamble\nt,q,tau,trajectory\n" + "".join(
        row.rstrip() + ",a\n" for row in rows[:100]) + "# b\n" + "".join(
        row.rstrip() + ",b\n" for row in rows[100:]))
    with pytest.raises(DataError, match=rf"^{path}: column 'q', line 154: non-numeric"):
        load_trajectories(path)


@pytest.mark.parametrize("row, message", [("1,2,3,4", "Expected 3 fields in line 6, saw 4"),
                                          ('"1,2', "EOF inside string starting at line 6")])
def test_the_parser_names_the_line_in_the_file(tmp_path, row, message):
    """The CSV parser counts the lines it is given, without the comment and blank lines."""
    path = tmp_path / "log.csv"
    path.write_text("# logger 4.2\n\nt,q,tau\n0,0,0\n# moving\n" + row + "\n0,0,0\n")
    with pytest.raises(DataError, match=rf"^{path}: cannot be read as a table \(.*{message}\)$"):
        load_trajectories(path)

def test_separators_ending_every_row_are_dropped_and_surplus_fields_refused(tmp_path):
    """Rows of more fields than the header had their first fields taken for row labels by
    pandas: every column shifted by one, t read from q, q from tau."""
    body, q = _rows(sep=";", decimal=",")
    path = tmp_path / "log.csv"
    path.write_text("t;q;tau\n" + body.replace("\n", ";;\n"))
    (traj,) = load_trajectories(path)
    np.testing.assert_allclose(traj.q, q, rtol=1e-8)
    path.write_text("# logger\nt;q;tau\n" + body.replace("\n", ";7\n"))
    with pytest.raises(DataError, match=rf"^{path}: line 3: 4 fields, but the header names 3 "
                       "columns; name every column in the header$"):
        load_trajectories(path)

def test_a_file_of_only_comments_is_empty(tmp_path):
    (tmp_path / "c.csv").write_text("# logger 4.2\n\n# no data\n")
    with pytest.raises(DataError, match="the file is empty"):
        load_trajectories(tmp_path / "c.csv")


def test_a_decimal_comma_is_seen_below_a_first_row_of_whole_numbers(tmp_path):
    """A record that starts at rest, '0;0;0', was read with decimal points and refused at
    its second row ('0,001' not a number); a comma elsewhere, as in a note, is no decimal mark."""
    body, q = _rows(sep=";", decimal=",")
    (tmp_path / "rest.csv").write_text("t;q;tau\n0;0;0\n" + body)
    (traj,) = load_trajectories(tmp_path / "rest.csv")
    np.testing.assert_allclose(traj.q[1:], q, rtol=1e-8)
    body, q = _rows(sep=";")
    (tmp_path / "note.csv").write_text("t;q;tau;note\n" + body.replace("\n", ";ok, moving\n"))
    (traj,) = load_trajectories(tmp_path / "note.csv")
    np.testing.assert_allclose(traj.q, q, rtol=1e-8)


@pytest.mark.parametrize("header, line", [("", 1), ("# t,q,tau\n", 2)])
def test_a_file_without_a_header_line_says_so(tmp_path, header, line):
    """A header written as a comment (or none): the first row of numbers was taken for the
    column names, and the message spoke of duplicate columns '0'."""
    path = tmp_path / "bare.csv"
    path.write_text(header + "0,0,0\n" + _rows()[0])
    with pytest.raises(DataError, match=rf"^{path}: line {line} holds numbers, not column names: "
                       "the file needs a header line that names its columns"):
        load_trajectories(path)


def test_trajectory_column_splits_a_file(tmp_path):
    path = _write(tmp_path, n=200, trajectory=np.repeat(["a", "b"], 100))
    df = pd.read_csv(path)
    df.loc[100:, "t"] = np.arange(100) * 1e-3  # each trajectory has its own clock
    df.to_csv(path, index=False)
    trajs = load_trajectories(path)
    assert [t.name.split("#")[1] for t in trajs] == ["a", "b"]
    assert all(len(t) == 100 for t in trajs)


def test_resampling_interpolates_irregular_time(tmp_path):
    t = np.arange(300) * 1e-3
    t[150:] += 0.5e-3
    pd.DataFrame({"t": t, "q": t, "tau": t}).to_csv(tmp_path / "d.csv", index=False)
    with pytest.raises(DataError, match=r"irregular sampling.*--resample \(resample=True\)"):
        load_trajectories(tmp_path / "d.csv")
    (traj,) = load_trajectories(tmp_path / "d.csv", resample=True)
    assert np.ptp(np.diff(traj.t)) < 1e-9


def test_resampling_keeps_a_pause_of_the_recording_for_the_cut(tmp_path):
    """A 0.5 s pause in a jittered 1 kHz log: --resample drew a straight line across it (500
    invented samples); it now resamples each stretch, and the preprocessing cuts at the pause."""
    from sparsefric.preprocessing import prepare

    t = np.arange(4000) * 1e-3 + np.random.default_rng(1).uniform(-2e-4, 2e-4, 4000)
    t[0] = 0.0
    t[2000:] += 0.5
    table = pd.DataFrame({"t": t, "q": np.sin(2 * np.pi * t), "tau": np.cos(2 * np.pi * t)})
    table.to_csv(tmp_path / "p.csv", index=False)
    (traj,) = load_trajectories(tmp_path / "p.csv", resample=True)
    steps = np.diff(traj.t)
    assert np.sum(steps > 2e-3) == 1 and steps.max() == pytest.approx(0.501, abs=1e-3)
    assert not ((traj.t > t[1999] + 1e-3) & (traj.t < t[2000] - 1e-3)).any()
    assert len(prepare([traj]).pieces) == 2


def _jittered(tmp_path, jitter: float, name: str = "jitter.csv"):
    """A 1 kHz record whose time stamps are off by up to ±``jitter`` [s]."""
    n = 2000
    t = np.arange(n) * 1e-3 + np.random.default_rng(0).uniform(-jitter, jitter, n)
    t[0] = 0.0
    q = np.sin(2 * np.pi * 0.5 * t)
    path = tmp_path / name
    pd.DataFrame({"t": t, "q": q, "tau": np.cos(2 * np.pi * 0.5 * t)}).to_csv(path,
                                                                              index=False)
    return path


def test_time_stamps_beyond_the_tolerance_are_refused_when_loaded(tmp_path):
    """±20 µs at 1 kHz (up to 4 % off) used to pass the loader's 5 % and fail in the
    differentiation without the file's name; the loader now holds the differentiation's 1 %."""
    path = _jittered(tmp_path, 20e-6)
    with pytest.raises(DataError, match=rf"^{path}: irregular sampling: .* off, tolerance 1 %\); "
                       r"use --resample \(resample=True\) to interpolate onto a uniform grid$"):
        load_trajectories(path)
    (traj,) = load_trajectories(path, resample=True)
    differentiate(traj.t, traj.q, traj.tau, method="butterworth")


def test_time_stamps_within_the_tolerance_are_differentiated(tmp_path):
    (traj,) = load_trajectories(_jittered(tmp_path, 4e-6))  # at most 0.8 % off
    differentiate(traj.t, traj.q, traj.tau, method="butterworth")


def _clock_jitter(tmp_path, drop: tuple[int, ...] = ()):
    """A 1 kHz record taken on a regular clock and stamped with up to ±0.3 ms of jitter (a PC's
    clock), the samples ``drop`` missing; also the positions on the clock."""
    slots = np.arange(3000) * 1e-3
    q = np.sin(2 * np.pi * 0.5 * slots)
    t = slots + np.random.default_rng(1).uniform(-3e-4, 3e-4, slots.size)
    keep = np.ones(slots.size, dtype=bool)
    keep[list(drop)] = False
    path = tmp_path / "clock.csv"
    pd.DataFrame({"t": t[keep], "q": q[keep], "tau": np.cos(q[keep])}).to_csv(path, index=False)
    return path, q


def test_regular_samples_with_jittering_stamps_are_placed_on_their_clock(tmp_path):
    """Taken at such stamps and interpolated onto a grid (--resample), every position moved by
    v·jitter, and a joint's inertia came out −100 %; the positions show the samples regular, so
    they are placed on the clock, the dropped ones filled in, and a note says so. Samples truly
    taken at jittering stamps (``_jittered``) are still refused."""
    path, q = _clock_jitter(tmp_path, drop=(700, 1500, 1501))
    (traj,) = load_trajectories(path)
    assert len(traj) == 3000
    assert np.ptp(np.diff(traj.t)) < 1e-12 and traj.dt == pytest.approx(1e-3, rel=1e-4)
    keep = np.setdiff1d(np.arange(3000), [700, 1500, 1501])
    np.testing.assert_allclose(traj.q[keep], q[keep], atol=1e-12)
    assert np.max(np.abs(traj.q[[700, 1500, 1501]] - q[[700, 1500, 1501]])) < 1e-5
    (note,) = traj.notes
    assert "jitter about a regular clock of 0.001 s" in note
    assert note.endswith("3 missing samples filled in by interpolation")
    with pytest.raises(DataError, match="irregular sampling"):
        load_trajectories(_jittered(tmp_path, 3e-4))


def test_save_and_load_round_trip(tmp_path, example):
    traj = example["test"][0]
    save_trajectory(tmp_path / "x.csv", traj)
    (back,) = load_trajectories(tmp_path / "x.csv")
    np.testing.assert_allclose(back.q, traj.q, rtol=1e-8, atol=1e-12)


BAD = {
    "missing file": (None, "no such file"),
    "missing column": ({"q": None}, "no column 'q' \\(columns: t, tau\\)"),
    "non-numeric": ({"tau": ["x"] + [1.0] * 199}, "column 'tau', line 2: non-numeric"),
    "nan": ({"q": [0.0] * 10 + [np.nan] + [1.0] * 189}, "column 'q', line 12: missing, NaN"),
    "inf": ({"tau": [0.0] * 5 + [np.inf] + [1.0] * 194}, "column 'tau', line 7"),
    "time backwards": ({"t": np.r_[np.arange(100), np.arange(94, 194)] * 1e-3},
                       "not strictly increasing at line 102"),  # 5 periods: no restart
    "no motion": ({"q": np.full(200, 0.3)}, "no motion at all"),
}


@pytest.mark.parametrize("case", sorted(BAD))
def test_bad_files_give_one_line_errors(tmp_path, case):
    change, pattern = BAD[case]
    if change is None:
        path = tmp_path / "absent.csv"
    else:
        t = np.arange(200) * 1e-3
        data = {"t": t, "q": np.sin(t), "tau": np.cos(t)}
        for key, value in change.items():
            if value is None:
                data.pop(key)
            else:
                data[key] = value
        path = tmp_path / "bad.csv"
        pd.DataFrame(data).to_csv(path, index=False)
    with pytest.raises(DataError, match=pattern) as info:
        load_trajectories(path)
    assert "\n" not in str(info.value) and str(path) in str(info.value)


@pytest.mark.parametrize("suffix, t, held, since", [
    (".csv", lambda td: td.astype(str), "durations such as '0 days 00:00:00.0", "their total"),
    (".csv", lambda td: td.astype(str).str.slice(7), "durations such as '00:00:00.0", "their"),
    (".csv", lambda td: (pd.Timestamp("2024-01-01 12:00") + td).astype(str),
     "dates and times such as '2024-01-01 12:00:00.0", "the seconds since the first, 2024-01-01"),
    (".parquet", lambda td: td + pd.Timedelta(5, "s"), "durations", "their total seconds"),
    (".parquet", lambda td: pd.Timestamp("2024-01-01") + td, "dates and times", "the seconds"),
])
def test_a_time_column_of_durations_or_dates_is_read_in_seconds(tmp_path, suffix, t, held,
                                                                   since):
    """Loggers stamp rows with a clock. Read as numbers, a typed column gave nanoseconds (and
    was refused for a sampling period of 1e6 s); text was a mere non-numeric value."""
    time = np.arange(200) * 1e-3
    path = tmp_path / f"clock{suffix}"
    frame = pd.DataFrame({"t": t(pd.Series(pd.to_timedelta(time, unit="s"))), "q": np.sin(time),
                          "tau": np.cos(time)})
    frame.to_csv(path, index=False) if suffix == ".csv" else frame.to_parquet(path)
    (traj,) = load_trajectories(path)
    np.testing.assert_allclose(traj.t - traj.t[0], time, atol=1e-9)
    assert traj.notes[0].startswith(f"{path}: column 't' holds {held}")
    assert f": read as {since}" in traj.notes[0]
    frame.loc[7, "t"] = None  # an empty cell among the stamps names its line
    frame.to_csv(path, index=False) if suffix == ".csv" else frame.to_parquet(path)
    with pytest.raises(DataError, match=rf"^{path}: column 't', line 9: .* is not one of the"):
        load_trajectories(path)


@pytest.mark.parametrize("text", ["1 234", "now", "today"])
def test_text_that_is_no_clock_is_not_called_a_duration_or_a_date(tmp_path, text):
    """pandas reads "1 234" as a duration and "now" as a date; neither was written by a
    clock, and the error says only that the value is not a number."""
    path = tmp_path / "odd.csv"
    time = np.arange(200) * 1e-3
    frame = pd.DataFrame({"t": time.astype(object), "q": np.sin(time), "tau": np.cos(time)})
    frame.loc[5, "t"] = text
    frame.to_csv(path, index=False)
    with pytest.raises(DataError) as info:
        load_trajectories(path)
    assert "durations" not in str(info.value) and "dates" not in str(info.value)
    assert text in str(info.value) and "\n" not in str(info.value)


def test_too_few_samples(tmp_path):
    with pytest.raises(DataError, match="only 20 samples"):
        load_trajectories(_write(tmp_path, n=20))


def test_empty_file(tmp_path):
    (tmp_path / "e.csv").write_text("")
    with pytest.raises(DataError, match="empty"):
        load_trajectories(tmp_path / "e.csv")


def test_duplicate_column_names_are_an_error_naming_them(tmp_path):
    path = tmp_path / "twice.csv"
    path.write_text("t,q,tau,tau,x,x\n" + "".join(f"{i * 1e-3},{i},{i % 7},{i % 5},0,0\n"
                                                  for i in range(100)))
    with pytest.raises(DataError) as info:
        load_trajectories(path)
    message = str(info.value)
    assert "twice.csv" in message and "'tau' in columns 3, 4" in message
    assert "'x' in columns 5, 6" in message and "\n" not in message


@pytest.mark.parametrize("unit, factor", [("ms", 1e3), ("us", 1e6)])
def test_a_time_column_in_ms_or_us_is_read_in_seconds(tmp_path, unit, factor):
    seconds = load_trajectories(_write(tmp_path, "s.csv"))[0]
    t = np.arange(200) * 1e-3 * factor
    path = tmp_path / f"{unit}.csv"
    pd.DataFrame({"t": t, "q": seconds.q, "tau": seconds.tau}).to_csv(path, index=False)
    (traj,) = load_trajectories(path, time_unit=unit)
    np.testing.assert_allclose(traj.t, seconds.t, rtol=1e-12, atol=1e-15)
    assert traj.dt == pytest.approx(1e-3)


def test_a_file_without_time_stamps_takes_its_times_from_the_sample_rate(tmp_path):
    stamped = load_trajectories(_write(tmp_path, "s.csv"))[0]
    path = tmp_path / "rows.csv"
    pd.DataFrame({"q": stamped.q, "tau": stamped.tau}).to_csv(path, index=False)
    (traj,) = load_trajectories(path, sample_rate=1000)
    np.testing.assert_allclose(traj.t, stamped.t, rtol=0, atol=1e-15)
    np.testing.assert_array_equal(traj.q, stamped.q)
    assert traj.notes == () and traj.columns.time is None
    # a time column beside the rate is not read, and a note says so
    (ruled,) = load_trajectories(_write(tmp_path, "jit.csv", t=np.arange(200) * 2e-3),
                                 sample_rate=500)
    assert ruled.dt == pytest.approx(2e-3)
    assert ruled.notes == (f"{tmp_path / 'jit.csv'}: column 't' not read: the times are "
                           "those of `sample_rate=500` Hz",)
    # each record of a trajectory column starts at 0
    split = _write(tmp_path, "two.csv", trajectory=np.repeat(["a", "b"], 100))
    a, b = load_trajectories(split, sample_rate=100)
    assert (a.t[-1], b.t[0], b.t[-1]) == pytest.approx((0.99, 0.0, 0.99))


def test_a_matlab_file_of_vectors_is_read_as_its_columns(tmp_path):
    from scipy.io import savemat
    plain = load_trajectories(_write(tmp_path, "plain.csv"))[0]
    # column vectors and row vectors alike; a scalar, a text and a shorter vector left out
    savemat(tmp_path / "run.mat", {"t": plain.t[:, None], "q": plain.q, "tau": plain.tau,
                                   "gain": 2.5, "note": "bench 3", "ref": plain.q[:10]})
    (traj,) = load_trajectories(tmp_path / "run.mat")
    for name in ("t", "q", "tau"):
        np.testing.assert_array_equal(getattr(traj, name), getattr(plain, name))
    with pytest.raises(DataError, match=r"run.mat: no column 'ref' \(columns: t, q, tau; left "
                                        r"out: vectors not of length 200: ref \(10\)\)"):
        load_trajectories(tmp_path / "run.mat", Columns(position="ref"))


def test_a_matlab_file_that_is_not_read_is_one_line_saying_why(tmp_path):
    from scipy.io import savemat
    savemat(tmp_path / "matrix.mat", {"data": np.ones((200, 3))})
    v73 = tmp_path / "v73.mat"  # the header of an HDF5-based file (save -v7.3)
    v73.write_bytes(b"MATLAB 7.3 MAT-file".ljust(116) + bytes(8) + b"\x00\x02IM" + bytes(512))
    (tmp_path / "junk.mat").write_bytes(b"not a MATLAB file " * 20)
    for name, problem in (("matrix.mat", "no variable is a vector of numbers; save the time, "
                                         "position and torque as vectors"),
                          ("v73.mat", "a MATLAB v7.3 (HDF5) file, which is not read: save it "
                                      "with save(..., '-v7') or as CSV"),
                          ("junk.mat", "cannot be read as a MATLAB file")):
        with pytest.raises(DataError) as info:
            load_trajectories(tmp_path / name)
        assert str(info.value).startswith(f"{tmp_path / name}: {problem}")
        assert "\n" not in str(info.value)


def test_records_written_one_after_another_are_read_as_separate_records(tmp_path):
    """``cat a.csv b.csv`` repeats the header; a logger whose clock restarts for each record
    runs its time back: both were refused ("non-numeric value 't'", "time not strictly
    increasing") though each record in them is whole."""
    a = _write(tmp_path, "a.csv", n=200)
    b = _write(tmp_path, "b.csv", n=300)
    first, second = load_trajectories([a, b])
    joined = tmp_path / "joined.csv"
    joined.write_text(a.read_text() + "# the next run\n\n" + b.read_text())
    restarted = tmp_path / "restarted.csv"
    restarted.write_text(a.read_text() + b.read_text().split("\n", 1)[1])
    for path, line in ((joined, 205), (restarted, 202)):
        x, y = load_trajectories(path)
        for got, want in ((x, first), (y, second)):
            np.testing.assert_array_equal(got.t, want.t)
            np.testing.assert_array_equal(got.q, want.q)
        assert (x.name, y.name) == (f"{path}[0:200]", f"{path}[200:500]")
        assert x.notes == (f"{path}: 2 records one after another (the header repeated or the "
                           f"time restarting before line {line}): read as separate records",)
    # a units row under each header goes too; a stamp a little early is no restart
    units = tmp_path / "units.csv"
    units.write_text("".join(p.read_text().replace("t,q,tau\n", "t,q,tau\ns,rad,Nm\n")
                             for p in (a, b)))
    assert [len(tr) for tr in load_trajectories(units)] == [200, 300]
    early = _write(tmp_path, "early.csv", t=np.r_[0.0, 2e-3, 1e-3, np.arange(3, 200) * 1e-3])
    with pytest.raises(DataError, match="time not strictly increasing at line 4"):
        load_trajectories(early)


@pytest.mark.parametrize("sep, decimal, end", [(";", ",", ""), (",", ".", ",")])
def test_joined_files_split_with_decimal_commas_or_a_separator_ending_each_line(
        tmp_path, sep, decimal, end):
    """The repeated header made every column text: decimal commas were then no numbers, and
    the empty column a separator ending each line leaves never matched the header."""
    text = "".join(pd.read_csv(_write(tmp_path, name, n=n)).to_csv(sep=sep, decimal=decimal,
                                                                     index=False)
                   .replace("\n", end + "\n") for name, n in (("a.csv", 200), ("b.csv", 300)))
    (tmp_path / "joined.csv").write_text(text)
    x, y = load_trajectories(tmp_path / "joined.csv")
    assert (len(x), len(y)) == (200, 300) and y.t[0] == 0.0 and y.dt == pytest.approx(1e-3)


def test_what_the_new_readings_leave_an_error_names(tmp_path):
    """A first row short a field, one stamp out of place, and a prismatic joint's positions
    stated in degrees are each one line naming the file (and the line)."""
    short = tmp_path / "short.csv"
    short.write_text("t,q,tau\n0,0\n" + "".join(f"{k * 1e-3},{k},1\n" for k in range(1, 200)))
    with pytest.raises(DataError, match=r"short.csv: column 'tau', line 2: missing"):
        load_trajectories(short)
    t = np.arange(200) * 1e-3
    t[100] = 0.0  # one stamp reset: not a clock restarted for a new record
    with pytest.raises(DataError, match="time not strictly increasing at line 102"):
        load_trajectories(_write(tmp_path, "stamp.csv", t=t))
    linear = _with_units(tmp_path, "linear.csv", "s,deg,N")
    with pytest.raises(DataError, match=r"linear.csv \(line 2\) gives column 'q' in deg, an "
                                        r"angle, but the axis is prismatic \(positions in m\)"):
        load_trajectories(linear, axis="prismatic")
    assert len(load_trajectories(linear, axis="revolute")) == 1


def test_a_typed_table_states_units_in_its_names_and_a_sample_rate_is_a_real_number(tmp_path):
    plain = load_trajectories(_write(tmp_path, "plain.csv"))[0]
    frame = pd.DataFrame({"t": plain.t, "q [deg]": np.degrees(plain.q), "tau": plain.tau})
    frame.to_parquet(tmp_path / "deg.parquet")
    (traj,) = load_trajectories(tmp_path / "deg.parquet", Columns(position="q [deg]"))
    np.testing.assert_allclose(traj.q, plain.q, rtol=1e-12)
    assert traj.notes == (f"{tmp_path / 'deg.parquet'} (its header) gives column 'q [deg]' in "
                          "deg: read in deg",)
    rows = tmp_path / "rows.csv"
    pd.DataFrame({"q": plain.q, "tau": plain.tau}).to_csv(rows, index=False)
    assert load_trajectories(rows, sample_rate=np.int64(1000))[0].dt == pytest.approx(1e-3)
    from sparsefric.errors import OptionError
    with pytest.raises(OptionError, match="sample_rate must be a finite number > 0, got True"):
        load_trajectories(rows, sample_rate=True)


def test_matlab_files_that_are_odd_are_read_or_refused_in_one_line(tmp_path):
    from scipy.io import savemat
    plain = load_trajectories(_write(tmp_path, "plain.csv"))[0]
    # parameter vectors beside the record, more of them than its columns: the record is read
    savemat(tmp_path / "params.mat", {"t": plain.t, "q": plain.q, "tau": plain.tau,
                                      **{f"k{i}": np.ones(3) for i in range(4)}})
    assert len(load_trajectories(tmp_path / "params.mat")[0]) == 200
    savemat(tmp_path / "complex.mat", {"t": plain.t, "q": plain.q, "tau": plain.tau + 1j})
    (tmp_path / "empty.mat").write_bytes(b"")
    (tmp_path / "short.mat").write_bytes(b"MATLAB 5.0 MAT-file")
    for name, problem in (("complex.mat", "variable 'tau' holds complex numbers"),
                          ("empty.mat", "cannot be read as a MATLAB file"),
                          ("short.mat", "cannot be read as a MATLAB file")):
        with pytest.raises(DataError, match=rf"^{re.escape(str(tmp_path / name))}: {problem}"):
            load_trajectories(tmp_path / name)


def _with_units(tmp_path, name, units, **changes):
    """A CSV of :func:`_write`'s trajectory with a row of ``units`` under its header, the
    columns changed by ``changes`` (column → factor)."""
    df = pd.read_csv(_write(tmp_path, "plain.csv"))
    for col, factor in changes.items():
        df[col] *= factor
    path = tmp_path / name
    path.write_text("t,q,tau\n" + units + "\n" + df.to_csv(header=False, index=False))
    return path


def test_a_row_of_units_under_the_header_is_read_as_units_not_data(tmp_path):
    plain = load_trajectories(_write(tmp_path, "plain.csv"))[0]
    (traj,) = load_trajectories(_with_units(tmp_path, "si.csv", "s,rad,N·m"))
    np.testing.assert_array_equal(traj.q, plain.q)
    np.testing.assert_array_equal(traj.t, plain.t)
    assert traj.notes == ()
    # degrees and milliseconds the row states are read so, each with a note
    path = _with_units(tmp_path, "deg_ms.csv", "[ms],[deg],[Nm]", t=1e3, q=180 / np.pi)
    (traj,) = load_trajectories(path)
    np.testing.assert_allclose(traj.q, plain.q, rtol=1e-9, atol=1e-12)
    assert traj.dt == pytest.approx(plain.dt)
    assert traj.notes == (f"{path} (line 2) gives column 't' in ms: read in ms",
                          f"{path} (line 2) gives column 'q' in deg: read in deg")
    # an option given wins, and the note says the file differs
    (traj,) = load_trajectories(path, angle_unit="rad", time_unit="ms")
    np.testing.assert_allclose(traj.q, plain.q * 180 / np.pi, rtol=1e-9)
    assert traj.notes == (f"{path} (line 2) gives column 'q' in deg, but it is read in rad, "
                          "as `angle_unit='rad'` says",)
    # lines counted in the file: the units row is line 2, the first row of data line 3
    bad = _with_units(tmp_path, "bad.csv", "s,rad,A")
    lines = bad.read_text().splitlines()
    bad.write_text("\n".join([*lines[:3], "x,1,2", *lines[3:]]) + "\n")
    with pytest.raises(DataError, match=r"bad.csv: column 't', line 4: non-numeric value 'x'"):
        load_trajectories(bad)


@pytest.mark.parametrize("units, note", [
    ("s,counts,Nm", "gives column 'q' in counts, which no option reads: it is read in rad (m "
                    "for a prismatic axis); convert it"),
    ("s,mm,N", "gives column 'q' in mm, which no option reads"),
    ("s,rad,A", "gives column 'tau' in A, a motor current: the model's torques and friction "
                "are in A (times the torque constant: N·m)"),
])
def test_units_no_option_reads_get_a_note(tmp_path, units, note):
    (traj,) = load_trajectories(_with_units(tmp_path, "u.csv", units))
    assert len(traj.notes) == 1 and note in traj.notes[0]


@pytest.mark.parametrize("row, below, units", [
    (["s", "rad", "Nm"], ["0", "0.1", "2"], True),
    (["s", "", "Nm"], ["0", "0.1", "2"], True),  # a column without a unit
    (["0", "0.1", "2"], ["0.001", "0.1", "2"], False),  # data
    (["ERR", "0.1", "2"], ["0.001", "0.1", "2"], False),  # a bad cell among numbers: data
    (["", "", ""], ["0", "0.1", "2"], False),
    (["s", "rad", "Nm"], ["a", "b", "c"], False),  # no numbers below: not a table of data
])
def test_a_units_row_is_text_in_every_cell_above_numbers(row, below, units):
    from sparsefric.stated_units import is_units_row
    assert is_units_row(row, below) is units


@pytest.mark.parametrize("columns, options, problem", [
    (Columns(time=None), {}, "sample_rate is needed without a time column"),
    (Columns(), {"sample_rate": 0.0}, "sample_rate must be a finite number > 0, got 0.0"),
    (Columns(), {"sample_rate": float("nan")}, "sample_rate must be a finite number > 0, got nan"),
    (Columns(), {"sample_rate": 1e3, "time_unit": "ms"}, "`time_unit='ms'` (the unit of a"),
])
def test_a_sample_rate_is_refused_where_it_cannot_give_the_times(tmp_path, columns, options,
                                                                  problem):
    from sparsefric.errors import OptionError
    with pytest.raises(OptionError, match=re.escape(problem)):
        load_trajectories(_write(tmp_path), columns, **options)


def test_holdout_keeps_the_last_part_of_every_record_apart(tmp_path):
    from sparsefric.data import holdout
    from sparsefric.errors import OptionError

    trajs = load_trajectories([_write(tmp_path, "a.csv", n=1000, qd_true=np.ones(1000)),
                               _write(tmp_path, "b.csv", n=400)])
    kept, held = holdout(trajs, 0.3)
    assert [len(k) for k in kept] == [700, 280] and [len(h) for h in held] == [300, 120]
    for whole, k, h in zip(trajs, kept, held, strict=True):
        np.testing.assert_array_equal(np.r_[k.tau, h.tau], whole.tau)
        assert h.t[0] > k.t[-1] and k.name == whole.name and "last 30 %" in h.name
    assert len(held[0].truth["qd_true"]) == 300
    with pytest.raises(DataError, match="cannot be split"):
        holdout(trajs, 0.9)  # 40 samples of b.csv would be left for training
    with pytest.raises(OptionError, match="between"):
        holdout(trajs, 0.95)


def test_part_cuts_every_channel_alike():
    t = np.arange(10) * 0.01
    traj = Trajectory(t=t, q=t * 2, tau=t * 3, qd=t * 4, qdd=None, name="r",
                      truth={"z_true": t * 5}, notes=("unwrapped",))
    part = traj.part(slice(2, 6))
    np.testing.assert_array_equal(part.t, t[2:6])
    np.testing.assert_array_equal(part.qd, t[2:6] * 4)
    np.testing.assert_array_equal(part.truth["z_true"], t[2:6] * 5)
    assert part.qdd is None and part.name == "r" and part.notes == ("unwrapped",)
    assert traj.part(slice(6, None), "r (rest)").name == "r (rest)"


def _logged(tau_of_t, n: int = 1000, h: float = 1e-3) -> Trajectory:
    """A record whose torque column is ``tau_of_t`` of its time, every other channel given."""
    t = np.arange(n) * h
    return Trajectory(t=t, q=np.sin(t), tau=tau_of_t(t), qd=np.cos(t), qdd=-np.sin(t),
                      name="r", truth={"z_true": 5 * t})


def test_align_torque_recovers_a_shift_between_samples():
    """A torque logged 2.37 samples early is put back where the motion shows it: exactly on a
    ramp, within linear interpolation's h²/8·max|τ''| on a sine; the 3 samples at the start
    that the shift would take before the record are dropped."""
    from sparsefric.data import align_torque

    lead, h = 2.37e-3, 1e-3
    for torque, tol in ((lambda t: 2.0 + 30.0 * t, 1e-12),
                        (lambda t: np.sin(2 * np.pi * 3 * t), h**2 / 8 * (2 * np.pi * 3) ** 2)):
        record = _logged(lambda t, f=torque: f(t + lead))
        aligned = align_torque(record, -lead)
        np.testing.assert_array_equal(aligned.t, record.t[3:])
        assert np.max(np.abs(aligned.tau - torque(aligned.t))) <= tol
        assert np.max(np.abs(record.tau[3:] - torque(record.t[3:]))) > 100 * tol  # was off


@pytest.mark.parametrize("samples", [3, -3])
def test_align_torque_drops_the_samples_the_shift_takes_beyond_the_record(samples):
    """A whole-sample delay moves the torque by whole samples, nothing interpolated or
    extrapolated; position, velocity, acceleration and truth are cut alike."""
    from sparsefric.data import align_torque

    record = _logged(lambda t: np.cos(7 * t))
    aligned = align_torque(record, samples * 1e-3)
    kept = slice(None, -3) if samples > 0 else slice(3, None)
    shifted = slice(3, None) if samples > 0 else slice(None, -3)
    np.testing.assert_allclose(aligned.tau, record.tau[shifted], rtol=0, atol=1e-12)
    for name in ("t", "q", "qd", "qdd"):
        np.testing.assert_array_equal(getattr(aligned, name), getattr(record, name)[kept])
    np.testing.assert_array_equal(aligned.truth["z_true"], record.truth["z_true"][kept])
    assert aligned.name == record.name and len(aligned) == len(record) - 3


def test_align_torque_by_zero_is_the_record_itself_and_bad_delays_are_named():
    """A delay of any size is taken as long as the shift leaves the samples a record needs
    (its bound against whole records is the options' check); not a number, it is named."""
    from sparsefric.data import MIN_SAMPLES, align_torque
    from sparsefric.errors import DataError, OptionError

    record = _logged(np.cos)  # 1000 samples, 0.999 s long
    assert align_torque(record, 0.0) is record
    for bad in (float("nan"), float("inf"), "0.003", True):
        with pytest.raises(OptionError, match=r"^torque_delay must be a finite number"):
            align_torque(record, bad)
    assert len(align_torque(record, 0.0998)) == len(record) - 100
    assert len(align_torque(record, -0.95)) == MIN_SAMPLES
    with pytest.raises(DataError, match=r"^r: the torque delay -0.951 s leaves 49 of its 1000 "
                                        r"samples, at least 50 are needed$"):
        align_torque(record, -0.951)


def test_spaces_around_header_names_are_not_part_of_them(tmp_path):
    """A header ` t , q , tau ` kept the spaces after each name: "no column 't' (columns:
    t , q , tau )"."""
    path = _write(tmp_path)
    lines = path.read_text().splitlines()
    path.write_text("\n".join([" t , q , tau ", *lines[1:]]) + "\n")
    (traj,) = load_trajectories(path)
    assert len(traj) == 200


def test_a_trajectory_column_that_is_not_in_the_file_is_named(tmp_path):
    """``--trajectory-column foo`` on a file without it was ignored; the default name
    ``trajectory`` still splits only the files that have it."""
    path = _write(tmp_path)
    with pytest.raises(DataError, match=rf"^{path}: no column 'foo' \(columns: t, q, tau\): "
                                        r"name the trajectory column with --trajectory-column "
                                        r"NAME \(Columns\(trajectory=…\) in Python\)$"):
        load_trajectories(path, Columns(trajectory="foo"))
    assert len(load_trajectories(path)) == 1


@pytest.mark.parametrize(("headers", "columns", "hint"), [
    (("time", "position", "torque"), Columns(), ": name the time column with --time NAME "
     r"\(Columns\(time=…\) in Python\), here perhaps --time time$"),
    (("t", "Angle [rad]", "tau"), Columns(), r"here perhaps --position 'Angle \[rad\]'$"),
    (("time", "q", "tau_meas"), Columns(time="time"), "here perhaps --torque tau_meas$"),
    (("t", "pos_motor", "pos_link", "tau"), Columns(), r"\(Columns\(position=…\) in Python\)$"),
    (("t", "q", "tau_true"), Columns(), r"\(Columns\(torque=…\) in Python\)$"),
])
def test_a_missing_column_names_its_option_and_a_header_that_looks_like_it(
        tmp_path, headers, columns, hint):
    """A user's file with its own headers stopped at "no column 't' (columns: time, position,
    torque)". The error names the option and, where one header looks like the column, it;
    two candidates (a motor and a link encoder) or a simulator's truth column get no guess."""
    t = np.arange(200) * 1e-3
    values = [t, np.sin(t), np.cos(t), np.cos(2 * t)][:len(headers)]
    path = tmp_path / "own.csv"
    pd.DataFrame(dict(zip(headers, values, strict=True))).to_csv(path, index=False)
    with pytest.raises(DataError, match=rf"^{path}: no column '\w+' \(columns: .*{hint}"):
        load_trajectories(path, columns)
