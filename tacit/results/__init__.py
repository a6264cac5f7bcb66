"""Per-prompt metrics, summaries and the run directory."""

from tacit.results.metrics import mean_reciprocal_rank, reciprocal_rank
from tacit.results.summary import format_retrieval_summary, summarize_retrieval

__all__ = [
    "format_retrieval_summary",
    "mean_reciprocal_rank",
    "reciprocal_rank",
    "summarize_retrieval",
]
