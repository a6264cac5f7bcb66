"""Batch-invariant linear layers: a prompt's scores the same, bit for bit, in any batch.

A CPU's matrix-product kernel sums in an order that follows the product's shape, so the same
prompt differs in its last bits across batches (why the tie rule settles near ties alone).
Here every linear layer multiplies its rows in tiles of TILE_ROWS in one batched product, and
every text is padded to its `padded_length` (a multiple of LENGTH_STEP) alone as in a batch:
a prompt's scores are then those of the prompt alone, which MaskedLMScorer relies on (checked
on its first batch). About a fifth more time per batch on a 2-core CPU, far less than settling
alone (bench/bench_retrieve.py; docs/reproducibility.md).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import torch

# rows per tile: a batch's tiles long enough for the kernel to run near its batched pace (336
# rows of [768 x 3072] in tiles of 64: 12.6 ms, against 11.9 untiled); the layers that see one
# row per prompt (the mask rows: the LM head, and the last layer's feed-forward block where the
# rows are cut before it) take short tiles, so a batch of a dozen prompts pads little there
TILE_ROWS = 64
FEW_ROWS = 8
# a text's tokens are padded to a multiple of this: batches of 4 lengths each are fuller
# than of one (18.0-18.8 s against 20.6-22.2 s for the 504 texts of bench_retrieve.py), for
# at most 3 padding tokens a text
LENGTH_STEP = 4


def padded_length(tokens: int) -> int:
    """The length a text of `tokens` tokens is padded to, alone or in a batch."""
    return -(-tokens // LENGTH_STEP) * LENGTH_STEP


def tiled_linear(layer: torch.nn.Linear, x: torch.Tensor, tile: int = TILE_ROWS) -> torch.Tensor:
    """`layer(x)` computed in tiles of `tile` rows, each row the same whatever its tile."""
    rows = x.reshape(-1, x.shape[-1])
    n = rows.shape[0]
    if n % tile:
        rows = torch.cat([rows, rows.new_zeros(tile - n % tile, rows.shape[1])])
    tiles = rows.view(-1, tile, rows.shape[1])
    weight = layer.weight.t().expand(tiles.shape[0], -1, -1)
    if layer.bias is None:
        out = torch.bmm(tiles, weight)
    else:
        out = torch.baddbmm(layer.bias, tiles, weight)
    return out.reshape(-1, out.shape[-1])[:n].reshape(*x.shape[:-1], out.shape[-1])


def tile_linears(
    model: torch.nn.Module, few_rows: Sequence[torch.nn.Module] = ()
) -> Callable[[], None]:
    """Put tiled_linear in place of every `torch.nn.Linear` of `model` (those inside the
    `few_rows` modules: FEW_ROWS a tile); returns what puts them back."""
    few = {id(m) for part in few_rows for m in part.modules()}
    layers = [m for m in model.modules() if type(m) is torch.nn.Linear]
    for layer in layers:
        layer.forward = _bound(layer, FEW_ROWS if id(layer) in few else TILE_ROWS)  # type: ignore[method-assign]

    def untile() -> None:
        for layer in layers:
            del layer.forward

    return untile


def _bound(layer: torch.nn.Linear, tile: int):  # noqa: ANN202 (a forward)
    return lambda x: tiled_linear(layer, x, tile)
