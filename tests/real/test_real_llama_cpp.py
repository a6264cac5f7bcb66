"""llama-cpp-python's OpenAI-compatible server on the real SmolLM2 GGUF file (issue 40).

llama-cpp-python 0.3's `create_completion(echo=True, logprobs=1)` pairs each prompt token with
the distribution read at its own position, not at the one before it: the numbers it returns
are not the tokens' log-probabilities. tacit's start check (tacit.models.server.connect)
compares a server's prompt log-probabilities with its own next-token answers, so this server
is refused in one line, before any probe runs; these tests start the real server and check
that, and that llama.cpp's quantised kernels themselves agree with the dequantised weights
tacit scores in process (read through llama-cpp-python's own API, at the right positions).

llama-cpp-python builds from source (slow on 2 cores, so CI does not install it):
`CMAKE_ARGS="-DGGML_NATIVE=OFF" pip install "llama-cpp-python[server]"`. The server may run in
another environment: $TACIT_LLAMA_CPP_PYTHON names its Python (default: this one, where it has
llama_cpp).
"""

from __future__ import annotations

import importlib.util
import json
import os
import socket
import subprocess
import sys
import time
from urllib.request import urlopen

import numpy as np
import pytest
from support import causal_logprobs, plain_causal

from tacit.core.errors import TacitError
from tacit.core.options import RunOptions
from tacit.models import load_scorer

pytestmark = pytest.mark.real

PYTHON_ENV = "TACIT_LLAMA_CPP_PYTHON"
SENTENCE = "Everyone knows that a bear has fur."


def server_python() -> str:
    given = os.environ.get(PYTHON_ENV)
    if given:
        return given
    if importlib.util.find_spec("llama_cpp") is None:
        pytest.skip(
            "llama-cpp-python is not installed (CMAKE_ARGS=-DGGML_NATIVE=OFF pip install "
            f"'llama-cpp-python[server]', or {PYTHON_ENV}=a Python that has it)"
        )
    return sys.executable


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def llama_server(smollm2):
    """llama-cpp-python's server on 127.0.0.1 serving SmolLM2's GGUF file as `smollm2`."""
    python, port = server_python(), free_port()
    argv = [python, "-m", "llama_cpp.server", "--model", str(smollm2.gguf)]
    argv += ["--model_alias", "smollm2", "--host", "127.0.0.1", "--port", str(port)]
    argv += ["--logits_all", "true", "--n_threads", "1", "--n_ctx", "256", "--verbose", "false"]
    server = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    url = f"http://127.0.0.1:{port}/v1"
    try:
        for _ in range(240):
            if server.poll() is not None:
                pytest.fail(f"llama_cpp.server exited: {server.stderr.read()[-2000:]}")
            try:
                urlopen(url + "/models", timeout=1).read()
                break
            except OSError:
                time.sleep(0.5)
        else:
            pytest.fail("llama_cpp.server did not answer in 120 s")
        yield url
    finally:
        server.kill()
        server.wait()


@pytest.mark.parametrize("start", ["", ",start_token=Hello"])
def test_it_is_refused_for_scoring_at_its_first_answer(llama_server, smollm2, start):
    """Its known limits named in the first line, from its FastAPI title (issue 57: it took
    three runs of 20-50 s, one limit each); the limits themselves, each seen by a check of its
    own when the engine is not recognised, are tests/models/test_server.py's."""
    spec = f"smollm2,base_url={llama_server},tokenizer={smollm2.directory}{start}"
    with pytest.raises(TacitError) as raised:
        load_scorer(spec, RunOptions(device="cpu", quiet=True))
    said = str(raised.value)
    assert "\n" not in said
    assert said.startswith(f"{llama_server} (smollm2) is llama-cpp-python's server"), said
    assert "off by one" in said and "drops special tokens" in said and "--by generation" in said


def test_llama_cpps_own_kernels_agree_with_the_dequantised_weights(smollm2):
    """The quantised kernels read at the right positions (logits before each token), against
    tacit's in-process reference on the dequantised float32 weights: close, not equal (Q4_1
    arithmetic), and nearly the same order of the sentence's tokens' surprisal."""
    python = server_python()
    model, tokenizer = plain_causal(smollm2.directory)
    start = tokenizer.convert_tokens_to_ids("<|endoftext|>")  # tacit's rule for SmolLM2
    code = (
        "import json, sys, numpy as np; from llama_cpp import Llama; "
        "m = Llama(model_path=sys.argv[1], logits_all=True, n_ctx=256, n_threads=1, "
        "verbose=False); ids = m.tokenize(sys.argv[2].encode(), add_bos=False, special=True); "
        "m.eval([int(sys.argv[3])] + ids); s = np.asarray(m.scores[: len(ids) + 1]); "
        "lp = s - np.logaddexp.reduce(s, axis=1, keepdims=True); "
        "print(json.dumps([ids, [float(lp[i, t]) for i, t in enumerate(ids)]]))"
    )
    done = subprocess.run(
        [python, "-c", code, str(smollm2.gguf), SENTENCE, str(start)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    ids, quantised = json.loads(done.stdout.strip().splitlines()[-1])
    assert ids == tokenizer(SENTENCE, add_special_tokens=False)["input_ids"]
    (plain,) = causal_logprobs(model, tokenizer, [SENTENCE], start=start)
    gap = np.abs(np.asarray(quantised) - np.asarray(plain))
    print(f"llama.cpp Q4_1 against dequantised float32, per token: {np.round(gap, 4).tolist()}")
    assert gap.max() < 0.5, (quantised, plain)
    ranks = [np.argsort(np.argsort(values)) for values in (quantised, plain)]
    assert np.corrcoef(*ranks)[0, 1] > 0.9, (quantised, plain)
