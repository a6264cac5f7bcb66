"""Property elicitation: ask for a concept's properties and score the answers against people's.

"Everyone knows that a bear has <mask>." is scored against the answers people wrote for bear
(fur, claws, ...), weighted by production frequency: over the shared vocabulary (one-word
answers, the paper's) or over candidate spans (answers of any length). The package: options,
prompts (and gold answers), scoring, summary, report; the probe itself (the Probe contract,
tacit.probes.base) is in `probe.py`.

"""
