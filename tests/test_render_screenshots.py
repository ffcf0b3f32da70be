"""``python -m sparsefric.screenshots``: what it does without Chromium or without a report
(the screenshots themselves are checked in ``tests/test_report_render.py``)."""

from __future__ import annotations

from sparsefric import screenshots


def test_without_chromium_it_says_so_and_writes_nothing(tmp_path, monkeypatch, capsys):
    report = tmp_path / "report.html"
    report.write_text("<html><body><section id='status'></section></body></html>")
    monkeypatch.setattr(screenshots, "find_chromium", lambda: None)
    assert screenshots.main([str(report), "--out", str(tmp_path / "shots")]) == 0
    assert "screenshots skipped: chromium is not installed" in capsys.readouterr().err
    assert not (tmp_path / "shots").exists()


def test_a_missing_report_is_a_one_line_error(tmp_path, capsys):
    assert screenshots.main([str(tmp_path / "nowhere.html")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "nowhere.html: no such report" in err


def test_a_browser_that_fails_is_a_one_line_error(tmp_path, capsys, monkeypatch):
    report = tmp_path / "report.html"
    report.write_text("<html><body><section id='status'></section></body></html>")
    broken = tmp_path / "chromium"
    broken.write_text("#!/bin/sh\nexit 3\n")
    broken.chmod(0o755)
    monkeypatch.setattr(screenshots, "find_chromium", lambda: str(broken))
    assert screenshots.main([str(report)]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "report.html: chromium failed" in err
    assert not (tmp_path / "screenshots").exists()
