"""sparsefric: discover joint inertia, gravity and LuGre friction by sparse regression.

The pipeline (see ``ALGORITHM.md`` of the project and Mahmoudkhani et al. 2023):

1. :mod:`sparsefric.differentiation` — TV-regularised q̇, q̈ and denoised τ;
2. :mod:`sparsefric.feature_library` + :mod:`sparsefric.optimizers` + :mod:`sparsefric.selection`
   — static structure by SR3 with Newton updates of Ω_s and AICc selection of λ;
3. :mod:`sparsefric.identify` — outer/inner iterations that refine σ0, σ1 and g(q̇).
"""

__version__ = "0.1.0"

from sparsefric.errors import SparsefricError  # noqa: E402
from sparsefric.model import JointModel  # noqa: E402

__all__ = ["JointModel", "SparsefricError", "__version__"]
