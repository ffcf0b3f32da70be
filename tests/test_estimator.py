"""SparseFric as a scikit-learn estimator: DataFrames in, one torque per row out, clone and
cross-validation over trajectories, and scikit-learn's own estimator checks."""

from __future__ import annotations

import functools
import re

import numpy as np
import pandas as pd
import pytest
from sklearn.base import clone
from sklearn.exceptions import NotFittedError
from sklearn.model_selection import GridSearchCV, GroupKFold
from sklearn.utils.estimator_checks import estimator_checks_generator

from sparsefric.data import load_trajectories
from sparsefric.errors import DataError, FitWarning, OptionError
from sparsefric.estimator import SparseFric
from sparsefric.validity import OutsideValidityWarning

from .conftest import EXAMPLE, imported_by

#: Fast settings: Butterworth derivatives and the static structure of a small library.
FAST = {"differentiation": "butterworth", "static_only": True, "library": "coulomb-viscous"}


@functools.cache
def _frame() -> pd.DataFrame:
    """Every data/example record in one table, labelled by a trajectory column."""
    return pd.concat([pd.read_csv(f).assign(trajectory=f.stem)
                      for f in sorted(EXAMPLE.glob("*_v*.csv"))], ignore_index=True)


def _role(role: str) -> pd.DataFrame:
    df = _frame()
    return df[df["trajectory"].str.startswith(role)]


@pytest.fixture(scope="module")
def fast_fit() -> SparseFric:
    return SparseFric(**FAST).fit(_role("train"))


def _coefficients(est: SparseFric) -> np.ndarray:
    return np.array([v for _, _, v in est.model_.parameters()])


def test_clone_and_params_round_trip():
    est = SparseFric(model="B", omega_starts=(0.05,), thresholds=np.array([0.1, 1.0]))
    copy = clone(est)
    assert copy is not est and copy.get_params()["model"] == "B"
    np.testing.assert_array_equal(copy.thresholds, est.thresholds)
    assert copy.set_params(tol=1e-4).tol == 1e-4 and est.tol == 1e-3


def test_the_estimator_parameters_are_the_identifications_and_default_alike():
    from sparsefric.identify import DEFAULTS, settings

    assert SparseFric().get_params() == DEFAULTS
    assert settings({}) == SparseFric().settings()
    with pytest.raises(OptionError, match="^tolerance is not a parameter"):
        settings({"tolerance": 1e-3})


@pytest.mark.parametrize("params, message", [
    ({"static_only": "False"}, "static_only must be True or False, got 'False'"),
    ({"offset": "no"}, "offset must be True or False, got 'no'"),
    ({"refine": 1}, "refine must be True or False, got 1"),
    ({"deltas": 1.5}, "deltas must be a sequence of positive numbers, got 1.5"),
    ({"deltas": (0.0,)}, "deltas must be a finite number > 0, got 0.0"),
    ({"deltas": (-1.0,)}, "deltas must be a finite number > 0, got -1.0"),
    ({"deltas": (1.0, 1.5, 1.0)}, "deltas holds 1 more than once"),
])
def test_flags_and_exponents_are_checked_not_coerced(params, message):
    """``bool("False")`` fitted a static model; δ = −1 fitted one that JointModel.load refused,
    δ = 0 ended in a ZeroDivisionError."""
    with pytest.raises(OptionError, match=f"^{re.escape(message)}$"):
        SparseFric(**params).settings()
    assert SparseFric(static_only=np.True_).settings().static_only is True


def test_the_command_line_identifies_and_reports_without_scikit_learn(tmp_path):
    """The estimator's scikit-learn, and scipy.stats and scipy.signal (which it and a second
    differentiation for the report's CVE points loaded), cost ~1 s of every identify."""
    files = [str(p) for p in sorted(EXAMPLE.glob("train_*.csv"))]
    run = (f"sparsefric.cli.main(['identify', *{files!r}, '--static-only', '--uncertainty', "
           f"'none', '--out', {str(tmp_path / 'out')!r}, '--quiet'])")
    watched = ("sklearn", "sparsefric.estimator", "scipy.stats", "scipy.signal")
    assert imported_by("sparsefric.cli", watched, run) == []
    assert (tmp_path / "out" / "report.html").is_file()


def test_a_dataframe_fits_as_the_files_do(fast_fit):
    from_files = SparseFric(**FAST).fit(load_trajectories(sorted(EXAMPLE.glob("train_*.csv"))))
    np.testing.assert_allclose(_coefficients(fast_fit), _coefficients(from_files), rtol=1e-12)
    parts = [g for _, g in _role("train").groupby("trajectory", sort=False)]
    as_list = SparseFric(**FAST).fit([p.drop(columns="trajectory") for p in parts])
    np.testing.assert_allclose(_coefficients(as_list), _coefficients(fast_fit), rtol=1e-12)


def test_validation_data_take_the_same_forms(fast_fit):
    validate = _role("validate")
    with_frame = SparseFric(**FAST).fit(_role("train"), validate=validate)
    parts = [g for _, g in validate.groupby("trajectory", sort=False)]
    with_list = SparseFric(**FAST).fit(_role("train"), validate=parts)
    np.testing.assert_array_equal(_coefficients(with_frame), _coefficients(with_list))
    assert with_frame.result_.sweep.validation_source == "training + validation"
    empty = SparseFric(**FAST).fit(_role("train"), validate=[])  # no validation data
    np.testing.assert_array_equal(_coefficients(empty), _coefficients(fast_fit))


def test_the_torque_can_be_the_target_y(fast_fit):
    train = _role("train")
    by_y = SparseFric(**FAST).fit(train.drop(columns="tau"), train["tau"].to_numpy())
    np.testing.assert_allclose(_coefficients(by_y), _coefficients(fast_fit), rtol=1e-12)
    with pytest.raises(OptionError, match="y differs from the column 'tau' of X"):
        SparseFric(**FAST).fit(train, train["tau"] + 1.0)
    with pytest.raises(OptionError, match=r"y must hold one torque per row of X \(21759\)"):
        SparseFric(**FAST).fit(train.drop(columns="tau"), np.ones(5))


def test_predict_gives_one_torque_per_row(fast_fit):
    test = _role("test")
    tau_hat = fast_fit.predict(test)
    assert tau_hat.shape == (len(test),)
    per_trajectory = fast_fit.predict_trajectories(test)
    assert [len(p) for p in per_trajectory] == list(test.groupby("trajectory").size())
    np.testing.assert_array_equal(np.concatenate(per_trajectory), tau_hat)
    # the measured torque is not needed to predict
    np.testing.assert_allclose(fast_fit.predict(test.drop(columns="tau")), tau_hat, rtol=1e-12)
    error = np.linalg.norm(test["tau"] - tau_hat) / np.linalg.norm(test["tau"])
    assert error == pytest.approx(fast_fit.relative_error(test), rel=1e-12)
    assert error < 0.35  # Coulomb + viscous without Stribeck term or dynamics


def test_a_piece_too_short_between_jumps_is_predicted_as_nan_with_a_warning(fast_fit):
    """Left out by the preparation, it shortened the prediction with no word, and a record cut
    at a jump gave one array per piece instead of one per trajectory."""
    test = _role("test")
    first = test["trajectory"] == test["trajectory"].iloc[0]
    rows = np.flatnonzero(first)[1000:1030]
    jumped = test.assign(q=test["q"].where(~np.isin(np.arange(len(test)), rows),
                                           test["q"] + 0.5))
    with pytest.warns(UserWarning, match=rf"^30 of the {len(test)} rows are not predicted "
                      r"\(NaN\): in .*, pieces between jumps") as record:
        per_trajectory = fast_fit.predict_trajectories(jumped)
    assert [w.filename for w in record if "not predicted" in str(w.message)] == [__file__]
    assert [len(p) for p in per_trajectory] == list(test.groupby("trajectory", sort=False).size())
    tau_hat = np.concatenate(per_trajectory)
    np.testing.assert_array_equal(np.flatnonzero(np.isnan(tau_hat)), rows)
    whole = fast_fit.predict(test)
    far = np.abs(np.arange(len(test)) - rows[0]) > 200  # beyond the filter's edge effects
    np.testing.assert_allclose(tau_hat[far], whole[far], rtol=0, atol=0.01)  # τ up to 80 N·m


def test_score_is_r2_of_the_measured_torque(fast_fit):
    test = _role("test")
    tau = test["tau"].to_numpy()
    residual = tau - fast_fit.predict(test)
    r2 = 1 - residual @ residual / np.sum((tau - tau.mean()) ** 2)
    assert fast_fit.score(test) == pytest.approx(r2, rel=1e-12)
    assert fast_fit.score(test.drop(columns="tau"), tau) == pytest.approx(r2, rel=1e-12)
    assert 0.8 < r2 < 1


def test_an_array_is_one_trajectory(fast_fit):
    test = _role("test")
    first = test[test["trajectory"] == test["trajectory"].iloc[0]]
    tau_hat = fast_fit.predict(first[["t", "q"]].to_numpy())
    np.testing.assert_allclose(tau_hat, fast_fit.predict(first), rtol=1e-12)
    with pytest.raises(OptionError, match="got 4 columns"):
        fast_fit.predict(np.ones((60, 4)))


@pytest.mark.parametrize("X, error, message", [
    ("not data", OptionError, "X must be a DataFrame with columns t, q, tau"),
    ([pd.DataFrame(), 3], OptionError, r"X\[1\] must be a DataFrame or a Trajectory, got int"),
    ([], OptionError, "X holds no trajectory"),
    (pd.DataFrame({"t": np.arange(60.0), "tau": np.arange(60.0)}), DataError,
     "X: no column 'q'"),
])
def test_bad_inputs_are_named(X, error, message):
    with pytest.raises(error, match=message):
        SparseFric(**FAST).fit(X)


def test_a_cutoff_that_would_take_away_the_moves_is_refused_before_the_fit(monkeypatch):
    monkeypatch.setattr("sparsefric.estimator.fit_joint", lambda *a, **k: pytest.fail("fitted"))
    est = SparseFric(differentiation="butterworth", cutoff_hz=0.1)
    with pytest.raises(OptionError, match=r"^cutoff_hz 0.1 is below 0.323 Hz, 2/T of "
                                          r"X#train_v2p13 \(T = 6.194 s\)"):
        est.fit(_role("train"))


def test_a_record_given_twice_is_refused(example):
    """fit([tr, tr]) counted its samples twice, where the command line refuses the file."""
    tr = example["train"][0]
    with pytest.raises(OptionError, match=rf"^X holds the same record twice \({re.escape(tr.name)} "
                                          "and"):
        SparseFric(**FAST).fit([tr, *example["train"], tr.with_(name="copy")])
    with pytest.raises(OptionError, match="^validate holds the same record twice"):
        SparseFric(**FAST).fit(example["train"], validate=[example["validate"][0]] * 2)


def test_a_torque_delay_is_checked_by_fit_and_aligns_what_is_scored():
    """Set in __init__, checked by fit: not a number, or not below a tenth of a record's
    duration, is named before any work. Fitted, the model records it; predict gives a value
    for every row (scikit-learn's rule), while score and relative_error compare with the
    torque aligned: 3 samples fewer in each record at 1 kHz, which sample_weight weighs."""
    train, test = _role("train"), _role("test")
    with pytest.raises(OptionError, match=r"^torque_delay must be a finite number of "
                                          r"seconds, got nan$"):
        SparseFric(**FAST, torque_delay=float("nan")).fit(train)
    with pytest.raises(OptionError, match=r"^torque_delay 0.7 s is not below 0.1 of the "
                                          r"duration of X#train_v2p13 \(6.194 s\)"):
        SparseFric(**FAST, torque_delay=0.7).fit(train)
    est = SparseFric(**FAST, torque_delay=-3e-3).fit(train)
    assert est.model_.extra["fit"]["torque_delay"] == -3e-3
    assert len(est.predict(test)) == len(test)
    assert [len(tau) for tau in est.predict_trajectories(test)] == \
        test.groupby("trajectory", sort=False).size().tolist()
    aligned = len(test) - 3 * test["trajectory"].nunique()
    assert 0.5 < est.score(test) == est.score(test, sample_weight=np.ones(aligned)) < 1
    assert 0 < est.relative_error(test) < 0.5


def test_trajectory_rows_must_be_contiguous():
    train = _role("train")
    shuffled = pd.concat([train.iloc[:100], train.iloc[-100:], train.iloc[100:-100]])
    with pytest.raises(DataError, match="the rows of trajectory 'train_v0p127' are not "
                                        "contiguous"):
        SparseFric(**FAST).fit(shuffled)


def test_unfitted_estimator_says_so():
    with pytest.raises(NotFittedError):
        SparseFric().predict(_role("test"))
    with pytest.raises(NotFittedError):
        SparseFric().equations()
    with pytest.raises(NotFittedError):
        SparseFric().simulate(np.zeros(10), q0=0.0)


@pytest.mark.parametrize("kwargs, message", [
    ({"tau": np.r_[1.0, np.nan]}, "tau must be a 1-D array of finite torques"),
    ({"tau": np.zeros((3, 2))}, "tau must be a 1-D array of finite torques"),
    ({"dt": -1e-3}, "dt must be a finite number > 0, got -0.001"),
    ({"q0": np.inf}, "q0 must be a finite number, got inf"),
])
def test_a_free_run_refuses_what_it_cannot_integrate(fast_fit, kwargs, message):
    """A negative dt or a NaN torque gave an all-NaN run without a word (checked in
    ``simulate.free_run``, which the free-run comparison of the report calls too)."""
    args = {"tau": np.zeros(100), "q0": 0.0, **kwargs}
    with pytest.raises(OptionError, match=f"^{re.escape(message)}$"):
        fast_fit.simulate(**args)


def test_a_free_run_beyond_the_identified_speeds_warns(fast_fit):
    with pytest.warns(OutsideValidityWarning, match=r"velocity .* \(the model extrapolates\)"):
        fast_fit.simulate(np.full(2000, 500.0), q0=0.0)


def test_a_prediction_beyond_the_identified_range_warns_once_at_the_callers_line(fast_fit):
    """The warning pointed at the package's loop over the records, once per record."""
    test = _role("test").assign(q=lambda df: 3 * df["q"])
    for call in (fast_fit.predict, fast_fit.predict_trajectories, fast_fit.score,
                 fast_fit.relative_error):
        with pytest.warns(OutsideValidityWarning, match=r"velocity .* \(the model extrapolates\)"
                          ) as record:
            call(test)
        outside = [w for w in record if w.category is OutsideValidityWarning]
        assert len(outside) == 1 and outside[0].filename == __file__, call.__name__


def test_the_fits_warnings_are_python_warnings_and_shown_in_a_notebook():
    """A time column in ms was fitted with the warning in ``warnings_`` only: no Python
    warning, nothing in the notebook's display."""
    df = _role("train_v2p13")[["t", "q", "tau"]]
    with pytest.warns(FitWarning, match=r"is the time column in seconds\?") as record:
        est = SparseFric(**FAST).fit(df.assign(t=df["t"] * 1000))
    assert [str(w.message) for w in record if w.category is FitWarning] == est.warnings_
    assert record[0].filename == __file__  # attributed to the caller's line
    page = est._repr_html_()
    assert f"<b>Warnings</b> ({len(est.warnings_)})" in page
    assert "is the time column in seconds?" in page


def test_print_model_writes_the_equation_with_units(fast_fit, capsys):
    fast_fit.print_model()
    printed = capsys.readouterr().out.splitlines()
    assert printed == fast_fit.equations()
    assert printed[0].startswith("τ = ") and "kg·m² q̈" in printed[0]
    assert "sign(q̇) g(q̇)" in printed[0] and printed[1].startswith("g(q̇) = ")
    plain = fast_fit.equations(precision=4, unicode=False)
    assert all(line.isascii() for line in plain) and plain[0].startswith("tau = ")


def test_grid_search_over_trajectories():
    df = _frame()
    cv = GroupKFold(n_splits=3)
    search = GridSearchCV(SparseFric(**FAST), {"model": ["A", "B"]}, cv=cv,
                          error_score="raise").fit(df, groups=df["trajectory"])
    scores = search.cv_results_["mean_test_score"]
    assert np.all((scores > 0.8) & (scores < 1))
    assert search.best_params_ == {"model": ["A", "B"][int(np.argmax(scores))]}
    # each fold: fitted on whole trajectories, scored on the others' rows
    train, test = next(cv.split(df, groups=df["trajectory"]))
    assert not set(df["trajectory"].iloc[train]) & set(df["trajectory"].iloc[test])
    by_hand = SparseFric(**FAST, model="B").fit(df.iloc[train]).score(df.iloc[test])
    assert search.cv_results_["split0_test_score"][1] == pytest.approx(by_hand, rel=1e-12)
    assert len(search.best_estimator_.predict(df)) == len(df)


# ------------------------------------------------------------------ scikit-learn's checks
_RANDOM_ROWS = ("fits random i.i.d. rows; a trajectory is a time series: uniformly sampled, "
                "at least 50 samples, columns (t, q[, tau])")
#: The checks of ``sklearn.utils.estimator_checks`` that cannot apply, and why. Every other
#: check runs and passes.
NOT_APPLICABLE = {
    **{name: _RANDOM_ROWS for name in (
        "check_fit_score_takes_y", "check_estimators_overwrite_params",
        "check_dont_overwrite_parameters", "check_estimators_fit_returns_self",
        "check_readonly_memmap_input", "check_n_features_in_after_fitting",
        "check_estimators_dtypes", "check_dtype_object", "check_pipeline_consistency",
        "check_estimators_nan_inf", "check_estimators_pickle",
        "check_f_contiguous_array_estimator", "check_regressors_train",
        "check_regressor_data_not_an_array", "check_regressors_no_decision_function",
        "check_supervised_y_2d", "check_regressors_int", "check_dict_unchanged",
        "check_fit_idempotent", "check_fit_check_is_fitted", "check_n_features_in",
        "check_fit2d_predict1d", "check_positive_only_tag_during_fit")},
    "check_methods_sample_order_invariance": "rows are samples of a time series: their order "
                                             "is the signal (q̇, q̈ and z come from it)",
    "check_methods_subset_invariance": "a torque prediction depends on the neighbouring "
                                       "samples (differentiation, the LuGre state z)",
    "check_array_api_input": "the fit runs on numpy (compiled kernels), not the array API",
}


def _name(check) -> str:
    check = getattr(check, "__wrapped__", check)
    return getattr(check, "func", check).__name__


_CHECKS = list(estimator_checks_generator(SparseFric(), expected_failed_checks=NOT_APPLICABLE,
                                          mark="skip"))


def test_the_skip_list_names_real_checks():
    assert set(NOT_APPLICABLE) <= {_name(check) for _, check in _CHECKS}


@pytest.mark.filterwarnings("ignore")
@pytest.mark.parametrize("estimator, check", _CHECKS,
                         ids=[f"{i}-{_name(c)}" for i, (_, c) in enumerate(_CHECKS)])
def test_scikit_learn_check(estimator, check):
    check(estimator)


def test_numpy_numbers_are_numbers_and_booleans_are_not():
    """A seed or a delay computed with numpy (np.int64, np.float32) is taken as the number it
    is; True stays no number."""
    s = SparseFric(random_state=np.int64(3), resamples=np.int32(20), tanh_k=np.float32(150),
                   torque_delay=np.float32(-0.003)).settings()
    assert (s.random_state, s.resamples) == (3, 20)
    assert s.preprocessor.torque_delay == pytest.approx(-0.003)
    with pytest.raises(OptionError, match="^random_state must be an integer"):
        SparseFric(random_state=True).settings()


def test_fit_checks_the_delay_against_every_record_before_any_work(monkeypatch):
    """As the command line and batch do (:func:`~sparsefric.options.check_records`): a delay
    a record cannot take is named before the fit starts, not by the alignment within it."""
    import sparsefric.estimator as estimator_module

    def no_fit(*args, **kwargs):
        raise AssertionError("the fit started")

    monkeypatch.setattr(estimator_module, "fit_joint", no_fit)
    with pytest.raises(OptionError, match=r"^torque_delay 0.7 s is not below 0.1 of the "
                                          r"duration of X#train_v2p13 \(6.194 s\)"):
        SparseFric(**FAST, torque_delay=0.7).fit(_role("train"))
