"""The engine that runs a probe's work over models: the runner (one loop over models), its
checkpoint, and data-parallel runs."""
