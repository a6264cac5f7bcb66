"""The structure probe: does a model's knowledge of concepts have the shape of people's?

A concept x feature matrix made of a model's answers (by scoring: each feature's
log-probability at elicitation's blanks, one pass per prompt; by generation: how many draws of
the norming task named it) or of a second norm set (`--against`), compared with people's by
every analysis of tacit.structure. docs/probes/structure.md says what each number is.
"""
