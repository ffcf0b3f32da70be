"""Sparse regression with a nonlinear parameter: SR3 + Newton updates of Ω_s."""

from sparsefric.optimizers.sr3 import SR3Newton, SR3Result, sr3_gram

__all__ = ["SR3Newton", "SR3Result", "sr3_gram"]
