"""Bad input files for tests/test_fuzz.py (see make_corpus.py)."""
