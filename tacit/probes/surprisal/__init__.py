"""Surprisal: every token (or word) of your texts with its log-probability under each model, in
nats and bits, as psycholinguists use it (minicons' `token_score` and `word_score_tokenized`,
and equal to them): causal models read left to right from their start token, masked models
give each token's pseudo-log-likelihood (`--pll original | within_word_l2r`). The package:
options, reading (the texts), words (tokens joined into words), scoring (rows, summary,
tables); the probe itself (the Probe contract, tacit.probes.base) is in probe.py.

"""
