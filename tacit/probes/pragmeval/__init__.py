"""PragmEval (Sileo et al. 2022) on frozen models: 11 pragmatics tasks in 20 configurations, as
linear probes on cached features or zero-shot cloze, averaged into the paper's tasks. The
package: options, frozen (features, cache, linear probes, cloze), run (configurations and one
model's pass), report; the probe itself (the Probe contract, tacit.probes.base) is in probe.py.

"""
