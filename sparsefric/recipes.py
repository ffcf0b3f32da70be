"""Recipes: named sets of defaults for the options where sparsefric departs from the paper.

``SparseFric(recipe="paper")`` (``identify --recipe paper``) runs the algorithm as Mahmoudkhani
et al. (2023) publish it; ``recipe="sparsefric"`` (the default) adds what ``docs/DESIGN.md``
justifies. A recipe only fills the options the user left at ``None``: an explicit option always
wins, so each addition can be switched on or off alone (``benchmarks/ablation.py`` does that).

=================  ====================  ==============================  =================
option             sparsefric            paper                           DESIGN.md
=================  ====================  ==============================  =================
refine             True                  False                           §9
polish             True                  False                           §14
sliding_window     True                  False (every moving sample)     §4
scale_columns      True                  False (λ on raw coefficients)   §2
lambdas            automatic             1 … 1e5, 350 among them         §2
aic_parts          max(10, 4(p + 2))     10                              §1
aic_data           training+validation   validation                      §15
aic_domain         guarded               literal                         §27
omega_starts       0.002 … 0.2 rad/s     0.01 rad/s                      §5
sigma0_starts      g(0)/z_ss (scaled)    1e3, 5e3, 1e4, 5e4, 1e5         §13
refit_rigid        True                  False (frozen after step 2.1)   §24
inner_rule         search                paper (eq. 18–19 applied)       §27, §47, §69
outer_stop         sigma0+g              sigma0                          §7, §27
omega_step         newton (ξ fixed)      newton (ξ fixed)                §28
tv_weight          automatic κ           1000 (TVRegDiff's α)            §27
validation_share   0.2                   0 (no validation file: none)    §26
=================  ====================  ==============================  =================

ν = 0.01 in both. This module imports nothing heavy: the CLI reads it at start-up.
"""

from __future__ import annotations

import argparse
from collections.abc import Mapping

from sparsefric.options import (
    AIC_DATA,
    AIC_DOMAINS,
    INNER_RULES,
    OMEGA_STEPS,
    OUTER_STOPS,
    RECIPES,
    check_choice,
    parse_positive,
    parse_positive_list,
    parse_share,
)

#: Initial Ω_s [rad/s] of sparsefric's multi-start: five values like the main paper's, log-spaced
#: over its range 0.002–0.02 widened upwards by one decade (other joints' Stribeck velocities
#: differ).
DEFAULT_OMEGA_STARTS = (0.002, 0.0063, 0.02, 0.063, 0.2)
#: The paper's σ0 starts [N·m/rad] (section 7.2).
PAPER_SIGMA0_STARTS = (1e3, 5e3, 1e4, 5e4, 1e5)
#: λ grid of the paper recipe: half decades from 1 to 1e5, so that the paper's selected λ = 350
#: is on it (its Fig. 4 prints no grid).
PAPER_LAMBDAS = (1.0, 3.5, 10.0, 35.0, 100.0, 350.0, 1e3, 3.5e3, 1e4, 3.5e4, 1e5)

#: The options each recipe sets, by :class:`~sparsefric.estimator.SparseFric` parameter name.
RECIPE_OPTIONS: dict[str, dict[str, object]] = {
    "sparsefric": {
        "refine": True, "polish": True, "sliding_window": True, "scale_columns": True,
        "lambdas": None, "aic_parts": None, "aic_data": "training+validation",
        "aic_domain": "guarded", "omega_starts": DEFAULT_OMEGA_STARTS, "sigma0_starts": None,
        "refit_rigid": True, "inner_rule": "search", "outer_stop": "sigma0+g", "tv_weight": None,
        "validation_share": 0.2, "omega_step": "newton",
    },
    "paper": {
        "refine": False, "polish": False, "sliding_window": False, "scale_columns": False,
        "lambdas": PAPER_LAMBDAS, "aic_parts": 10, "aic_data": "validation",
        "aic_domain": "literal", "omega_starts": (0.01,), "sigma0_starts": PAPER_SIGMA0_STARTS,
        "refit_rigid": False, "inner_rule": "paper", "outer_stop": "sigma0", "tv_weight": 1000.0,
        "validation_share": 0.0, "omega_step": "newton",
    },
}


#: The value that asks for sparsefric's automatic choice of an option whose sparsefric default
#: is automatic (None), also under another recipe: ``SparseFric(recipe="paper",
#: sigma0_starts="auto")``.
AUTO = "auto"
#: The options that accept :data:`AUTO`.
AUTOMATIC = ("lambdas", "aic_parts", "sigma0_starts", "tv_weight")


def resolve(recipe: str, params: Mapping[str, object]) -> dict[str, object]:
    """``params`` with every option the user left at None taken from ``recipe``, and
    :data:`AUTO` replaced by None (automatic).

    An explicit ``regularization`` (κ) replaces the recipe's ``tv_weight``: both set the TV
    weight, and the user's choice wins. Raises :class:`~sparsefric.errors.OptionError` naming
    ``recipe`` if it is not one of :data:`~sparsefric.options.RECIPES`.
    """
    defaults = RECIPE_OPTIONS[check_choice("recipe", recipe, RECIPES)]
    out = dict(params)
    for name, value in defaults.items():
        if out.get(name) is None:
            out[name] = value
        elif isinstance(out[name], str) and out[name] == AUTO and name in AUTOMATIC:
            out[name] = None
    if params.get("regularization") is not None and params.get("tv_weight") is None:
        out["tv_weight"] = None
    return out


#: The command-line options of the recipe's switches (``identify``), each defaulting to None so
#: that the recipe decides: (parameter, argparse keywords).
_SWITCHES: tuple[tuple[str, dict], ...] = (
    ("refine", {"action": argparse.BooleanOptionalAction,
                "help": "re-select the friction terms with the dynamic columns (DESIGN §9)"}),
    ("polish", {"action": argparse.BooleanOptionalAction,
                "help": "finish every LuGre run with a 1-D search of σ0 (DESIGN §14)"}),
    ("sliding_window", {"action": argparse.BooleanOptionalAction,
                        "help": "leave the samples near stops out of the static fits (§4)"}),
    ("scale_columns", {"action": argparse.BooleanOptionalAction,
                       "help": "threshold coefficients of unit-RMS columns (§2); off: λ acts "
                               "on physical coefficients, as in the paper"}),
    ("refit_rigid", {"action": argparse.BooleanOptionalAction,
                     "help": "re-estimate I, gravity, offset in every inner loop (§24)"}),
    ("validation_share", {"metavar": "FRACTION", "help": "without --validate, the share of the "
                          "training samples held out in blocks to score the selection, 0 to 0.5 "
                          "(§26; 0: none)"}),
    ("lambdas", {"metavar": "LIST", "help": "λ grid of step 1, comma-separated "
                                            "(paper recipe: 1 … 1e5)"}),
    ("aic_data", {"choices": AIC_DATA, "help": "samples AICc scores step 1 on (§15)"}),
    ("aic_domain", {"choices": AIC_DOMAINS,
                    "help": "AICc where m − k − 2 < 0: +∞ (guarded) or as printed (§27)"}),
    ("inner_rule", {"choices": INNER_RULES, "help": "what an inner loop returns: best walks σ0 "
                    "by eq. 18 while the error falls, search (default) finds where that walk "
                    "ends by a line search, paper as published (§27, §47, §69)"}),
    ("outer_stop", {"choices": OUTER_STOPS, "help": "when the outer loop stops (§7, §27)"}),
    ("omega_step", {"choices": OMEGA_STEPS, "help": "how Ω_s moves between SR3 solves: Newton "
                    "with the coefficients fixed (default), or the profile's minimum (§28)"}),
    ("tv_weight", {"metavar": "ALPHA", "help": "TV weight in the paper's units (TVRegDiff's "
                                               "α; paper recipe: 1000); replaces "
                                               "--regularization"}),
)
#: Parameters of :data:`_SWITCHES` that take a number or a list.
_PARSERS = {"lambdas": parse_positive_list, "tv_weight": parse_positive,
            "validation_share": parse_share}


def add_arguments(parser: argparse.ArgumentParser, type_of) -> None:
    """``--recipe`` and one option per switch of the recipes on ``parser``; ``type_of(parse)``
    wraps a text parser as an argparse type (the CLI's error messages)."""
    g = parser.add_argument_group("recipe (docs/DESIGN.md §27)")
    g.add_argument("--recipe", choices=RECIPES, default=RECIPES[0],
                   help="sparsefric's defaults, or the algorithm as the paper publishes it; "
                        "the options below override it (default: sparsefric)")
    for name, kwargs in _SWITCHES:
        extra = {"type": type_of(_PARSERS[name])} if name in _PARSERS else {}
        g.add_argument("--" + name.replace("_", "-"), default=None, **kwargs, **extra)


def arguments(args: argparse.Namespace) -> dict[str, object]:
    """The estimator keywords of the options :func:`add_arguments` added."""
    return {"recipe": args.recipe, **{name: getattr(args, name) for name, _ in _SWITCHES}}


#: Names of those options (the CLI rejects them with a baseline method).
ARGUMENTS: tuple[str, ...] = ("recipe", *(name for name, _ in _SWITCHES))
