"""The Ask stage: how a probe's blank is asked of a model (the shared vocabulary, candidate
spans, or answers in words), between ranking and the probes."""
