"""`probe vocab`: the shared vocabulary of models' tokenizers, and its coverage."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from tacit.cli.common import Models, Revision, VocabFile, VocabWordsOption, user_errors
from tacit.core.errors import TacitError
from tacit.core.options import REVISION, VOCAB_FILE, VOCAB_WORDS_PARAM


@user_errors
def command(
    model: Models,
    vocab_file: VocabFile = VOCAB_FILE.default,
    vocab_words: VocabWordsOption = VOCAB_WORDS_PARAM.default,
    revision: Revision = REVISION.default,
    out: Annotated[Path | None, typer.Option("--out", "-o", help="Write the words here.")] = None,
) -> None:
    """Build the shared vocabulary of the models' tokenizers and report its coverage.

    A word is in it when every tokenizer encodes it, after a space, as one whole-word token
    (RoBERTa's leading-space form; no WordPiece ## pieces, no special tokens), and, with
    --vocab-file, when the file lists it (and with --vocab-words, when it is a word of letters).
    """
    from tacit.ask.vocabulary import vocabulary_for
    from tacit.core.files import write_atomic

    shared = vocabulary_for(model, vocab_file=vocab_file, revision=revision, words=vocab_words)
    typer.echo(shared.coverage.to_string(index=False))
    for warning in shared.warnings():
        typer.echo(f"warning: {warning}", err=True)
    if shared.words_filter != "all":
        typer.echo(
            f"--vocab-words {shared.words_filter}: {shared.filtered_out} shared words left out"
        )
    typer.echo(f"shared vocabulary: {len(shared)} words (sha256 {shared.sha256[:12]})")
    if out is not None:
        try:
            out.parent.mkdir(parents=True, exist_ok=True)
            write_atomic(out, shared.text())
        except OSError as err:
            raise TacitError(f"--out {out}: cannot write there ({err.strerror})") from None
        typer.echo(f"written to {out}")
