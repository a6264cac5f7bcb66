"""Concept retrieval: name the concept from a growing list of its properties.

"A <mask> has fur, is big, and has claws." ranks the concept ("bear") at the blank, among the
shared vocabulary (the paper's) or among candidate spans ("A bear", "An aardvark", ...). The
package: options (the declaration), prompts, scoring, summary, report, figures; the probe
itself (the Probe contract, tacit.probes.base) is in `probe.py`.

"""
