"""The steps of the method after differentiation, one module each (``docs/ALGORITHM.md``):

* :mod:`.static` — step 1, the static structure by SR3 and AICc;
* :mod:`.iterations` — steps 2–3, the outer/inner LuGre iterations from several σ0 starts;
* :mod:`.refinement` — re-selection of the friction terms with the dynamic columns;
* :mod:`.powers` — the viscous powers the data do not determine, dropped;
* :mod:`.prediction` — the LuGre model's nonlinear parameters at the minimum of its prediction
  error.

:func:`sparsefric.identify.identify` composes them.
"""
