"""sparsefric: discover joint inertia, gravity and LuGre friction by sparse regression.

The method (``docs/ALGORITHM.md``; Mahmoudkhani et al. 2023), one module per step:

0. :mod:`sparsefric.preprocessing` with :mod:`sparsefric.differentiation` — TV-regularised q̇,
   q̈ and denoised τ;
1. :mod:`sparsefric.steps.static` with :mod:`sparsefric.feature_library`,
   :mod:`sparsefric.optimizers` and :mod:`sparsefric.selection` — static structure by SR3 with
   Newton updates of Ω_s and AICc selection of λ;
2–3. :mod:`sparsefric.steps.iterations` and :mod:`sparsefric.steps.refinement` — outer/inner
   iterations that refine σ0, σ1 and g(q̇);

composed by :mod:`sparsefric.identify`, with the scikit-learn estimator
:class:`sparsefric.estimator.SparseFric` on top. The names below are imported on first use,
so that ``import sparsefric`` (and the command line's start-up) stays light.
"""

from __future__ import annotations

import importlib
from typing import Any

__version__ = "0.1.0"

_LAZY = {"JointModel": "sparsefric.model", "SparseFric": "sparsefric.estimator",
         "SparsefricError": "sparsefric.errors"}

__all__ = ["JointModel", "SparseFric", "SparsefricError", "__version__"]


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'sparsefric' has no attribute {name!r}")
