"""Probes: each turns norms into a table of prompts and scores them."""
