"""Your own cloze items: a text with one blank, its candidate answers and the right ones, each
candidate scored as a span in the blank (any length, masked or causal models, the exact scores
and normalisations of `--candidates`), reported as accuracy (P@1), MRR and P@k per group and
overall. Minimal pairs in the style of COMPS ("[Y] has fur." with "A bear" against "A table")
and multiple-choice knowledge items in the style of BEAR fit the format. The package: options,
reading (the file), scoring (scores, summary, report); the probe itself (the Probe contract,
tacit.probes.base) is in `probe.py`.

"""
