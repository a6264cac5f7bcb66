"""Per-prompt metrics, summaries, reports, figures and the run directory.

Nothing is imported here, so that light modules (the run result, the run directory) can be
imported without numpy, pandas or torch.
"""
