"""``sparsefric identify``: a joint model from trajectories, by sparsefric's steps 0–3 or, with
``--method``, by a baseline (``--compare`` fits baselines beside sparsefric's model).
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path
from typing import TYPE_CHECKING

from sparsefric import recipes
from sparsefric.cli.common import (
    EXIT_WARNINGS,
    _add_data_options,
    _add_output_options,
    _add_strict_option,
    _argument_type,
    _check_angle_unit,
    _examples,
    _interactive,
    _load,
    _positive,
    _positive_list,
    _preprocessor,
    _say,
    _warn,
)
from sparsefric.errors import ModelFileError, OptionError, SparsefricError
from sparsefric.options import (
    AXES,
    DEFAULT_RESAMPLES,
    LIBRARIES,
    METHODS,
    MIN_RESAMPLES,
    UNCERTAINTY,
    integer_parser,
)

if TYPE_CHECKING:  # the numerical modules load when a command runs
    from sparsefric.model import JointModel

#: Where ``identify`` writes without ``--out``.
DEFAULT_OUT = "sparsefric-out"


def _parse_holdout(text: str) -> float:
    """A ``--holdout`` fraction: one message for every value outside the accepted range."""
    from sparsefric.data import HOLDOUT_RANGE

    try:
        value = float(text)
    except ValueError:
        raise ValueError(f"expected a number, got {text!r}") from None
    lo, hi = HOLDOUT_RANGE
    if not lo <= value <= hi:  # NaN included
        raise ValueError(f"must lie between {lo:g} and {hi:g}, got {text!r}")
    return value


def _parse_methods(text: str) -> tuple[str, ...]:
    names = tuple(p for p in text.replace(";", ",").split(",") if p.strip())
    for name in names:
        if name.strip() not in METHODS[1:]:
            raise ValueError(f"expected methods among {', '.join(METHODS[1:])} separated by "
                             f"commas, got {name.strip()!r}")
    return tuple(dict.fromkeys(n.strip() for n in names))


_holdout = _argument_type(_parse_holdout)
_methods = _argument_type(_parse_methods)


#: identify options that only sparsefric uses (their defaults come from the parser).
_SPARSEFRIC_ONLY = ("model", "static_only", "library", "offset", "omega_starts", "aic_parts",
                    "presliding_distance", "nu", "tanh_k", "compare", "uncertainty",
                    "resamples", "seed", "cve",
                    *recipes.ARGUMENTS)

_IDENTIFY_EXAMPLES = _examples(
    "sparsefric identify data/example/train_*.csv --validate data/example/validate_*.csv \\",
    "    --test data/example/test_*.csv --truth data/example/truth.json --out results/example",
    "sparsefric identify data/emps/emps_estimation.csv --axis prismatic --holdout 0.3 \\",
    "    --reference data/emps/reference.json --compare idim-ls,output-error --out results/emps",
    "sparsefric identify run.csv --time-unit ms --method idim-ls --out results/idim --force")


def add_parser(sub: argparse._SubParsersAction) -> None:
    """Add ``identify`` to the subcommands ``sub`` of the main parser."""
    p = sub.add_parser("identify", help="identify a joint model from trajectories",
                       description="Steps 0–3: differentiation, static structure by SR3 and "
                                   "AICc, then the LuGre iterations. Writes model.json, "
                                   "report.html and the tables of the fit into --out.",
                       epilog=_IDENTIFY_EXAMPLES)
    p.add_argument("train", nargs="+", help="training files (CSV, Parquet or MATLAB .mat)")
    p.add_argument("--validate", nargs="+", default=[], metavar="FILE",
                   help="validation files (AICc is scored on them with the training data)")
    p.add_argument("--test", nargs="+", default=[], metavar="FILE",
                   help="test files: the torque error quoted as the headline")
    p.add_argument("--holdout", type=_holdout, default=None, metavar="FRACTION",
                   help="hold out the last FRACTION (0.05 to 0.9, e.g. 0.3) of every training "
                        "and validation record as test data")
    p.add_argument("--axis", choices=AXES, default="revolute",
                   help="revolute joint [rad, N·m] with gravity terms, or prismatic axis "
                        "[m, N] with a constant offset (default: revolute)")
    p.add_argument("--library", default="full", choices=LIBRARIES,
                   help="candidate library (default: full)")
    p.add_argument("--offset", action="store_true",
                   help="add a constant torque offset to a revolute joint's candidates")
    p.add_argument("--static-only", action="store_true",
                   help="stop after step 1 (static friction, no LuGre state)")
    p.add_argument("--model", choices=("A", "B", "both"), default="A",
                   help="friction sign function: A = sign(q̇) (default), B = tanh(K q̇), "
                        "both = two models side by side (subfolders A/ and B/, compared in "
                        "report.html)")
    p.add_argument("--tanh-k", type=_positive, default=150.0, metavar="K",
                   help="K of model B's tanh(K q̇) [s/rad] (default: 150)")
    p.add_argument("--omega-starts", type=_positive_list, default=None, metavar="LIST",
                   help="initial Ω_s values [rad/s], comma-separated")
    p.add_argument("--sigma0-starts", type=_positive_list, default=None, metavar="LIST",
                   help="initial σ0 values [N·m/rad or N/m], comma-separated "
                   "(default: scaled from the step-1 break-away level)")
    p.add_argument("--nu", type=_positive, default=0.01, help="SR3 relaxation ν (default: 0.01)")
    p.add_argument("--aic-parts", type=_argument_type(integer_parser(10)), default=None,
                   metavar="M",
                   help="number m of validation parts of AICc (default: max(10, 4(p+2)); "
                        "paper recipe: 10)")
    recipes.add_arguments(p, _argument_type)
    p.add_argument("--presliding-distance", type=_positive, default=None, metavar="DIST",
                   help="distance [rad or m] from stops left out of the static fits "
                        "(default: chosen from the data)")
    p.add_argument("--method", choices=METHODS, default=METHODS[0],
                   help="sparsefric (default) or a baseline: idim-ls (rigid body + Coulomb + "
                        "viscous by least squares), output-error (LuGre by nonlinear least "
                        "squares from IDIM-LS), two-step (static curve from constant-velocity "
                        "moves, σ0, σ1 from --presliding)")
    p.add_argument("--compare", type=_methods, default=(), metavar="METHODS",
                   help="also fit these baselines on the same data (comma-separated: idim-ls, "
                        "output-error, two-step) and compare them in the report, with their "
                        "fit %%")
    p.add_argument("--presliding", default=None, metavar="FILE",
                   help="pre-sliding record (torque below break-away) for two-step")
    p.add_argument("--truth", default=None, metavar="MODEL",
                   help="the true model of simulated data (model.json format): its errors are "
                        "quoted beside the identified model's and it is drawn in the report")
    p.add_argument("--reference", default=None, metavar="MODEL",
                   help="a published reference model (model.json format): quoted and drawn "
                        "like --truth")
    p.add_argument("--cve", default=None, metavar="FILE",
                   help="your own constant-velocity results (CSV columns velocity [rad/s or "
                        "m/s, deg/s with --angle-unit deg], friction [N·m or N], optional "
                        "std): drawn on the friction–velocity plot and scored against the "
                        "identified static curve")
    p.add_argument("--uncertainty", choices=UNCERTAINTY, default="fast",
                   help="intervals of the parameters in model.json and the report: fast "
                        "(default, asymptotic HAC covariance, under a second), bootstrap "
                        "(reruns the identification on --resamples block resamples, with "
                        "term inclusion frequencies; minutes) or none")
    p.add_argument("--resamples", type=_argument_type(integer_parser(MIN_RESAMPLES)),
                   default=None, metavar="N",
                   help=f"block resamples of --uncertainty bootstrap, at least {MIN_RESAMPLES} "
                        f"(default: {DEFAULT_RESAMPLES}; 200 or more give stable ends of the "
                        "95%% intervals); only with --uncertainty bootstrap")
    p.add_argument("--seed", type=_argument_type(integer_parser(0)), default=None, metavar="N",
                   help="seed of the block draws of --uncertainty bootstrap, an integer ≥ 0: "
                        "the same seed gives the same intervals (default: 0); only with "
                        "--uncertainty bootstrap")
    _add_strict_option(p)
    _add_output_options(p, DEFAULT_OUT)
    p.add_argument("--json", action="store_true",
                   help="print a machine-readable summary instead of the results")
    _add_data_options(p)
    p.set_defaults(run=_run_identify, sparsefric_only={
        name: p.get_default(name) for name in _SPARSEFRIC_ONLY})


def _parameters(args: argparse.Namespace, model: str) -> dict:
    """The estimator's parameters (:data:`sparsefric.identify.DEFAULTS`) the options set."""
    return dict(axis=args.axis, model=model, tanh_k=args.tanh_k, library=args.library,
                offset=args.offset, nu=args.nu, aic_parts=args.aic_parts,
                omega_starts=args.omega_starts, **recipes.arguments(args),
                sigma0_starts=args.sigma0_starts,
                static_only=args.static_only, differentiation=args.differentiation,
                regularization=args.regularization, cutoff_hz=args.cutoff_hz,
                presliding_distance=args.presliding_distance,
                torque_timing=args.torque_timing, torque_delay=args.torque_delay,
                uncertainty=args.uncertainty,
                resamples=DEFAULT_RESAMPLES if args.resamples is None else args.resamples,
                random_state=0 if args.seed is None else args.seed,
                progress=_interactive(args))


def _model_lines(m) -> list[str]:
    """The parameters of a model with values and units, one per line."""
    return [f"  {name:<26} {value: .6g} {unit}" for name, unit, value in m.parameters()]


def _story(result, label: str) -> list[str]:
    """The final model in words: its terms, how it came about, its parameters, convergence."""
    terms = result.final_terms
    final = terms[terms["active"]]
    kind = "LuGre" if result.model.kind == "lugre" else "static"
    sign = "tanh(K q̇)" if result.model.tanh_k > 0 else "sign(q̇)"
    how = (f"step 1 kept {int(terms['step1_active'].sum())} of {len(result.terms)} candidates, "
           f"AICc on {result.sweep.validation_source} data")
    same = list(terms["active"]) == list(terms["step1_active"])
    if result.refined:
        how += "; the LuGre refinement re-selected the terms"
    elif result.model.kind == "lugre":
        how += ("; the LuGre iterations refitted them" if same else
                "; the LuGre iterations refitted them and changed the set")
    listed = "terms.csv lists both" if result.refined or kind == "LuGre" else "terms.csv"
    lines = [f"{label}final model ({kind} friction, {sign}): {len(final)} terms "
             f"{', '.join(final['term'])}" + (" + σ0, σ1" if kind == "LuGre" else ""),
             f"{label}  {how} ({listed})", *_model_lines(result.model)]
    if result.model.kind == "lugre":
        state = "converged" if result.converged else "NOT converged"
        lines.append(f"{label}{state}: {result.convergence_reason}")
    return lines


def _split_holdout(args: argparse.Namespace, train, validate, test):
    """Training, validation and test records after ``--holdout``."""
    if not args.holdout:
        return train, validate, test
    from sparsefric.data import holdout

    train, held = holdout(train, args.holdout)
    if validate:
        validate, held_val = holdout(validate, args.holdout)
        held += held_val
    return train, validate, (test or []) + held


def _data_sets(args: argparse.Namespace):
    """The training, validation and test records of ``identify``."""
    train = _load(args.train, args, "training")
    validate = _load(args.validate, args, "--validate") if args.validate else None
    test = _load(args.test, args, "--test") if args.test else None
    train, validate, test = _split_holdout(args, train, validate, test)
    return train, validate or None, test or None


def _shared_files(args: argparse.Namespace) -> list:
    """A warning (:class:`~sparsefric.data_checks.Finding`) for each file given as training
    data and as validation or test data: its scores then measure the fit, not a prediction."""
    from sparsefric.data import shared_file_findings

    return shared_file_findings(args.train, {"--validate": args.validate, "--test": args.test})


def _known_models(args: argparse.Namespace) -> dict:
    """``--truth`` and ``--reference`` models, by their label."""
    from sparsefric.model import JointModel

    out = {}
    for label in ("truth", "reference"):
        path = getattr(args, label)
        if path:
            model = JointModel.load(path)
            if model.axis != args.axis:
                raise OptionError(label, f"{path}: is a {model.axis} model, the data are "
                                  f"--axis {args.axis}")
            out[label] = model
    return out


def _cve_file(args: argparse.Namespace):
    """The ``--cve`` points (None without the option)."""
    from sparsefric.validation import load_cve

    return load_cve(args.cve, angle_unit=args.angle_unit) if args.cve else None


def _comparisons(args: argparse.Namespace, train, validate) -> tuple[dict, list[str]]:
    """The ``--compare`` baselines fitted on the same records, by method name, and the notes
    of their records (:func:`_fit_baseline`)."""
    models, notes = {}, []
    for method in args.compare:
        models[method], said = _fit_baseline(args, method, train, validate)
        notes += said
    return models, notes


def _fit_baseline(args: argparse.Namespace, method: str, train, validate
                  ) -> tuple[JointModel, list[str]]:
    """The baseline ``method`` (:data:`~sparsefric.options.METHODS`) fitted on ``train`` and
    ``validate`` with the options that apply to it, ``--presliding`` loaded where given.

    Returns
    -------
    JointModel
        The baseline's model.
    list of str
        The notes of its records (cut at jumps, pieces left out), which
        :func:`~sparsefric.baselines.fit_baseline` gives as warnings.
    """
    import warnings

    from sparsefric.baselines import fit_baseline  # with scipy.signal, ~0.2 s: only if asked
    from sparsefric.errors import FitWarning

    presliding = _load([args.presliding], args, "--presliding")[0] if args.presliding else None
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", FitWarning)
        model = fit_baseline(method, train, args.axis, validate=validate or (),
                             presliding=presliding, cutoff_hz=args.cutoff_hz,
                             sigma0_starts=args.sigma0_starts, torque_delay=args.torque_delay)
    return model, [str(w.message) for w in caught if issubclass(w.category, FitWarning)]


def _run_identify(args: argparse.Namespace) -> int:
    from sparsefric.atomic import refuse_results, staged
    from sparsefric.outputs import RESULT_NAMES, write_results
    from sparsefric.report import headline_lines, write_model_comparison

    out = Path(args.out)
    refuse_results(out, RESULT_NAMES, args.force)
    _check_method_options(args)
    _check_angle_unit(args, args.axis, f"--axis {args.axis}")
    train, validate, test = _data_sets(args)
    known = _known_models(args)
    if args.method != "sparsefric":
        return _run_baseline(args, train, validate, test, known)
    cve_file = _cve_file(args)
    fitted = _fitted(args, train, validate)
    compare, compare_notes = _comparisons(args, train, validate)
    summaries: dict[str, dict] = {}

    def work(stage: Path) -> None:
        for name, result in fitted.items():
            target = stage / name if len(fitted) > 1 else stage
            target.mkdir(exist_ok=True)
            summaries[name] = write_results(result, target, train, validate, test,
                                            known=known, compare=compare, cve_file=cve_file)
        if len(fitted) > 1:  # the two models side by side (the paper's Figs. 14 and 15)
            write_model_comparison(fitted, stage, train, validate, test, cve_file=cve_file)

    staged(out, work, RESULT_NAMES)
    if args.json:
        print(json.dumps(summaries if len(fitted) > 1 else summaries[args.model]))
    warned = _print_fits(args, fitted, compare_notes)
    _say(args, f"results written to {out}/")
    for name, summary in summaries.items():  # the headline last: what a glance reads
        label = f"[model {name}] " if len(fitted) > 1 else ""
        _say(args, "\n".join(label + line for line in headline_lines(summary)))
    return EXIT_WARNINGS if args.strict and warned else 0


def _print_fits(args: argparse.Namespace, fitted: dict, notes: list[str]) -> bool:
    """Print the warnings and the story of each fit, then the ``notes`` of the ``--compare``
    baselines' records that the fits did not give (a pre-sliding record's); whether anything
    was warned of."""
    for name, result in fitted.items():
        label = f"[model {name}] " if len(fitted) > 1 else ""
        for text in result.warnings:
            _warn(args, f"{label}{text}")
        _say(args, "\n".join(_story(result, label)))
    said = {text for result in fitted.values() for text in result.warnings}
    more = [text for text in dict.fromkeys(notes) if text not in said]
    for text in more:
        _warn(args, text)
    return bool(said or more)


def _fitted(args: argparse.Namespace, train, validate) -> dict:
    """The identification of each model of ``--model`` (A, B or both), by name; each result
    has the findings of its input files first, as they arose first."""
    from sparsefric.identify import fit_joint, settings

    models = ("A", "B") if args.model == "both" else (args.model,)
    fitted = {m: fit_joint(train, validate, settings(_parameters(args, m)))[0]
              for m in models}
    shared = _shared_files(args)
    for result in fitted.values():
        result.findings[:0] = shared
    return fitted


def _check_method_options(args: argparse.Namespace) -> None:
    """Reject options the chosen ``--method`` would silently ignore."""
    if args.method != "sparsefric":
        for name, default in args.sparsefric_only.items():
            if getattr(args, name) != default:
                raise OptionError(name, "applies to --method sparsefric only")
    uses_presliding = args.method == "two-step" or "two-step" in args.compare
    if args.presliding and not uses_presliding:
        raise OptionError("presliding", "applies to --method two-step only")
    if "two-step" in args.compare and not args.presliding:
        raise OptionError("compare", "two-step needs --presliding FILE")
    if args.sigma0_starts and args.method not in ("sparsefric", "output-error"):
        raise OptionError("sigma0_starts", "applies to --method sparsefric and output-error")
    for name in ("resamples", "seed"):  # the fast intervals and none draw nothing
        if args.uncertainty != "bootstrap" and getattr(args, name) is not None:
            raise OptionError(name, "needs --uncertainty bootstrap")


def _baseline_errors(args: argparse.Namespace, models: dict, sets: dict) -> dict:
    """‖τ − τ̂‖/‖τ‖ [-] of each model on each data set (prepared once per set)."""
    prepare = _preprocessor(args).prepare
    prepared = {role: prepare(trajs) for role, trajs in sets.items() if trajs}
    return {label: {role: p.relative_error(m) for role, p in prepared.items()}
            for label, m in models.items()}


def _run_baseline(args: argparse.Namespace, train, validate, test, known: dict) -> int:
    """``identify --method`` with a baseline: model.json and a summary of its errors."""
    from sparsefric.atomic import staged
    from sparsefric.model import JointModel
    from sparsefric.outputs import RESULT_NAMES, stamped

    out = Path(args.out)
    t0 = time.perf_counter()
    train, notes = _checked_records(args, train)
    notes[:0] = [f.message for f in _shared_files(args)]
    model, said = _fit_baseline(args, args.method, train, validate)
    notes = list(dict.fromkeys([*notes, *said]))  # the training pieces' cuts are said once
    try:  # a model file the tool cannot read back is no result
        JointModel.from_dict(model.to_dict(), source=f"the {args.method} model")
    except ModelFileError as exc:
        raise SparsefricError(f"{exc}: these data do not identify it; nothing written") \
            from None
    wall = time.perf_counter() - t0
    errors = _baseline_errors(args, {args.method: model, **known},
                              {"train": train, "validate": validate, "test": test})
    summary = {"method": args.method, "axis": args.axis, "kind": model.kind,
               "wall_time_s": wall, "relative_error": errors[args.method],
               "parameters": [{"name": n, "unit": u, "value": v}
                              for n, u, v in model.parameters()]}
    summary.update({f"{label}_relative_error": errors[label] for label in known})
    lines = [f"{args.method} ({model.kind} model), identified in {wall:.2f} s:",
             *_model_lines(model),
             *(f"  ‖τ − τ̂‖/‖τ‖ on the {role} data: {100 * err:.2f} %"
               + "".join(f" ({label} {100 * errors[label][role]:.2f} %)" for label in known)
               for role, err in errors[args.method].items())]

    def work(stage: Path) -> None:
        (stage / "summary.json").write_text(json.dumps(summary, indent=1))
        (stage / "summary.md").write_text("\n".join(lines) + "\n")
        # the delay, for predict to align its records alike (the baselines record no other)
        fit = {"torque_delay": args.torque_delay}
        stamped(model.with_(extra={**model.extra, "method": args.method, "fit": fit})).save(
            stage / "model.json")

    staged(out, work, RESULT_NAMES)
    if args.json:
        print(json.dumps(summary))
    for text in notes:
        _warn(args, text)
    _say(args, "\n".join(lines))
    _say(args, f"results written to {out}/")
    return EXIT_WARNINGS if args.strict and notes else 0


def _checked_records(args: argparse.Namespace, train: list) -> tuple[list, list[str]]:
    """The training records of a baseline cut where q or t jumps, and what the data checks of
    the sparsefric method say about them (units, sampling, the moves; an error is raised).

    The baselines fit the records as given; these checks make a time column in ms, degrees
    read as rad or a jump in q as visible to them as to the default method."""
    from sparsefric.data_checks import diagnose_prepared, errors
    from sparsefric.preprocessing import prepare

    prep = prepare(train, method="butterworth", cutoff_hz=args.cutoff_hz, denoise_torque=False)
    findings = diagnose_prepared(prep, axis=args.axis)
    if bad := errors(findings):
        raise SparsefricError(bad[0].message)
    return list(prep.pieces), [*prep.notes, *(f.message for f in findings)]
