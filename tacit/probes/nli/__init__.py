"""Pragmatic inference as NLI: the suites IMPPRES, NOPE and IMPLI (tacit.pragmatics), asked of
masked or causal LMs (cloze), of NLI classifiers, or read from released predictions, and
reported in each paper's own breakdowns. The package: options, predict (the three ways of
predicting), items (matching predictions to items), report, figures; the probe itself (the Probe
contract, tacit.probes.base) is in probe.py.
"""
