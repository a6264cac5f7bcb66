"""A model's text and its loading options (tacit.core.modelspec): read, written, merged with
the run's, refused in one line when wrong; the same value on the command line, in Python and
in sweep files."""

from __future__ import annotations

import pytest

from tacit.core.errors import TacitError
from tacit.core.modelspec import ModelSpec, model_text, parse_model_args
from tacit.core.option_names import from_command_line
from tacit.core.options import RunOptions


def test_a_model_text_reads_its_options_and_writes_them_back():
    spec = ModelSpec.parse("EleutherAI/pythia-160m,revision=step1000,dtype=bfloat16")
    assert (spec.name, spec.revision, spec.dtype) == (
        "EleutherAI/pythia-160m",
        "step1000",
        "bfloat16",
    )
    assert spec.text == "EleutherAI/pythia-160m,revision=step1000,dtype=bfloat16"
    flags = ModelSpec.parse("m, trust_remote_code=True ,load_in_4bit=1,attn_implementation=eager")
    assert flags.trust_remote_code is True and flags.load_in_4bit is True
    assert flags.quantization == "4bit"
    assert flags.text == "m,trust_remote_code=true,attn_implementation=eager,load_in_4bit=true"
    assert ModelSpec.parse("roberta-base") == ModelSpec("roberta-base")
    assert ModelSpec.parse(flags.text) == flags


def test_an_existing_path_is_a_name_whatever_it_holds(tmp_path):
    odd = tmp_path / "run,lr=3"
    odd.mkdir()
    assert ModelSpec.parse(str(odd)).name == str(odd)
    assert ModelSpec.parse(f"{odd},revision=x").name == str(odd)  # options after it still read


def test_the_api_takes_a_spec_a_mapping_or_text():
    spec = ModelSpec("gpt2", revision="main")
    assert model_text(spec) == "gpt2,revision=main"
    assert model_text({"name": "gpt2", "revision": "main"}) == "gpt2,revision=main"
    assert model_text("gpt2,revision=main") == "gpt2,revision=main"
    with pytest.raises(TacitError, match="expected `name` and its loading options"):
        model_text({"model": "gpt2"})


def test_the_runs_options_fill_what_a_model_leaves_out():
    run = RunOptions(revision="r1", dtype="float16", model_args="attn_implementation=eager")
    one = run.model_spec("a,revision=r2")
    assert (one.revision, one.dtype, one.attn_implementation) == ("r2", "float16", "eager")
    assert run.model_spec("b").revision == "r1"
    assert RunOptions(model_args={"trust_remote_code": "yes"}).model_args == {
        "trust_remote_code": True
    }


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("m,revision=x,oops", "'oops' is not a loading option"),
        ("m,2x=y", "'2x=y' is not a loading option"),
        ("m,revision=", "revision needs a value"),
        ("m,revision=a,revision=b", "revision is given twice"),
        ("m,dtype=float8", "dtype 'float8': expected one of float32, float16, bfloat16, auto"),
        ("m,trust_remote_code=maybe", "trust_remote_code=maybe: expected true or false"),
        ("m,load_in_8bit=true,load_in_4bit=true", "load_in_8bit and load_in_4bit: pick one"),
    ],
)
def test_a_wrong_option_is_one_line_naming_it(text, message):
    with pytest.raises(TacitError, match=message) as api:
        ModelSpec.parse(text)
    assert str(api.value).startswith("models ")
    with from_command_line(), pytest.raises(TacitError) as cli:
        ModelSpec.parse(text)
    assert str(cli.value).startswith("--model ")


def test_run_wide_model_args_are_checked_as_a_models_own():
    assert parse_model_args("trust_remote_code=true,peft=adapter") == {
        "trust_remote_code": True,
        "peft": "adapter",
    }
    with pytest.raises(TacitError, match="model_args.*'foo' is not a loading option"):
        RunOptions(model_args="foo")
    with pytest.raises(TacitError, match="revision has its own option"):
        RunOptions(model_args={"revision": "main"})
    with pytest.raises(TacitError, match="batch_size 'big': expected a whole number or auto"):
        RunOptions(batch_size="big")  # type: ignore[arg-type]
    assert RunOptions(batch_size="auto").recorded()["batch_size"] == "auto"


def test_any_other_option_is_read_typed_for_the_family_to_check():
    """Options beyond tacit's own are kept (the in-process family passes them on to
    from_pretrained, and refuses a typo when the model's config is read), their values typed:
    booleans and numbers as such, tacit's own text options as text."""
    spec = ModelSpec.parse("gpt2,subfolder=step1,low_cpu_mem_usage=true,top_k=5,revision=1000")
    assert spec.given() == {
        "revision": "1000",
        "subfolder": "step1",
        "low_cpu_mem_usage": True,
        "top_k": 5,
    }
    assert spec.text == "gpt2,revision=1000,subfolder=step1,low_cpu_mem_usage=true,top_k=5"
    assert ModelSpec.parse(spec.text) == spec
    assert ModelSpec.of({"name": "gpt2", "variant": "fp16"}).get("variant") == "fp16"
