"""Loading a model's weights as its ModelSpec says (tacit.core.modelspec): `from_pretrained`
with the revision, dtype, remote code and attention kernel asked for, 8- or 4-bit weights
through bitsandbytes (CUDA GPUs only), a PEFT adapter on top, or spread over devices by
accelerate; refusing a checkpoint whose head is missing (its predictions would be random) and
naming a damaged file instead of a traceback (tacit.hub.model_files)."""

from __future__ import annotations

import copy
import inspect
import warnings
from difflib import get_close_matches
from pathlib import Path
from typing import Any, cast

import torch
from transformers import PreTrainedModel

from tacit.core.errors import TacitError, first_line, shorten
from tacit.core.modelspec import LOAD_OPTIONS, ModelSpec
from tacit.core.option_names import option
from tacit.hub.access import hub_access, remembered
from tacit.hub.model_files import check_model_source, explain_load_error, quiet_transformers

# from_pretrained's keywords that its signature does not name (it takes them as **kwargs)
FROM_PRETRAINED_KEYWORDS = (
    "subfolder",
    "variant",
    "gguf_file",
    "quantization_config",
    "device_map",
    "max_memory",
    "offload_folder",
    "offload_buffers",
    "low_cpu_mem_usage",
    "key_mapping",
    "adapter_name",
    "use_kernels",
    "tp_plan",
    "tp_size",
    "code_revision",
)


def check_quantization(spec: ModelSpec, device: torch.device) -> None:
    """8- and 4-bit weights (bitsandbytes) run on CUDA GPUs only: refused in one line on any
    other device, or without bitsandbytes installed, before anything loads."""
    if spec.quantization is None:
        return
    where = f"{option('--model')} {spec.name}: load_in_{spec.quantization}"
    if device.type != "cuda":
        raise TacitError(
            f"{where} needs a CUDA GPU (bitsandbytes' kernels); this run is on {device}: drop "
            f"load_in_{spec.quantization}, or run on a GPU"
        )
    try:
        import bitsandbytes  # noqa: F401
    except ImportError:
        raise TacitError(f"{where} needs bitsandbytes: pip install bitsandbytes") from None


def _quantized(spec: ModelSpec, dtype: Any, device: torch.device) -> dict[str, Any]:
    """from_pretrained's keywords for 8- or 4-bit weights on `device` (none for full ones)."""
    if spec.quantization is None:
        return {}
    check_quantization(spec, device)
    from transformers import BitsAndBytesConfig

    if spec.quantization == "8bit":
        config = BitsAndBytesConfig(load_in_8bit=True)
    else:  # NF4 weights, computed in the run's precision (float32 unless asked otherwise)
        compute = dtype if isinstance(dtype, torch.dtype) else torch.float32
        config = BitsAndBytesConfig(
            load_in_4bit=True, bnb_4bit_quant_type="nf4", bnb_4bit_compute_dtype=compute
        )
    return {"quantization_config": config, "device_map": {"": device.index or 0}}


def load_weights(
    auto_class: Any,
    spec: ModelSpec,
    dtype: torch.dtype | str,
    device: torch.device,
    *,
    head: str,
    **placement: Any,
) -> PreTrainedModel:
    """`auto_class.from_pretrained` as `spec` says (on `device`, or as `placement` spreads it),
    a PEFT adapter put on it, refusing a checkpoint whose `head` head is missing."""
    name = spec.name
    check_model_source(name, tokenizer=False, gguf_file=spec.gguf_file)
    quantized = _quantized(spec, dtype, device)
    extra: dict[str, Any] = {
        k: v
        for k in ("trust_remote_code", "attn_implementation", "gguf_file")
        if (v := spec.get(k)) is not None
    }
    given = passed_on(spec)
    config = read_config(spec) if spec.gguf_file is None else None
    if config is not None and set(given) <= set(config.to_dict()):
        # the config read for the run, its fields set as the options say (a keyword such as
        # subfolder, which moves the files, has transformers read the config there)
        for key, value in given.items():
            setattr(config, key, value)
        extra["config"], given = config, {}
    extra.update(given)
    try:
        with quiet_transformers(), hub_access(name) as hub:
            if hub:  # transformers looks for an adapter config without local_files_only
                extra["adapter_kwargs"] = dict(hub)
            model, info = auto_class.from_pretrained(
                name,
                revision=spec.revision,
                dtype=dtype,
                output_loading_info=True,
                **extra,
                **quantized,
                **placement,
                **hub,
            )
    except Exception as err:  # a damaged weights file: SafetensorError, torch.load's errors
        explain_load_error(name, spec.revision, err)
        raise
    prefix = model.base_model_prefix + "."
    head_missing = sorted(k for k in info["missing_keys"] if not k.startswith(prefix))
    if head_missing:
        raise TacitError(
            f"{name!r} has no trained {head} head (missing {', '.join(head_missing[:3])}"
            f"{', ...' if len(head_missing) > 3 else ''}): its predictions would be random"
        )
    if not quantized and not placement:
        model = model.to(device)
    if spec.peft is not None:
        model = with_adapter(model, spec, merge=not quantized)
    return model.eval()


def read_config(spec: ModelSpec, flag: str = "--model") -> Any:
    """The model's config (no weights are loaded; a GGUF file's is read by transformers from
    the file): read from its files once per run (tacit.hub.access.read_once), a copy each
    time, so that no reader changes another's."""
    from transformers import AutoConfig

    extra = {k: v for k in ("trust_remote_code", "gguf_file") if (v := spec.get(k)) is not None}

    def read() -> Any:
        check_model_source(spec.name, tokenizer=False, flag=flag, gguf_file=spec.gguf_file)
        try:
            with quiet_transformers(), hub_access(spec.name) as hub:
                return AutoConfig.from_pretrained(spec.name, revision=spec.revision, **extra, **hub)
        except (OSError, ValueError) as err:  # a damaged config.json named as such
            explain_load_error(spec.name, spec.revision, err, flag)
            raise

    key = ("config", spec.name, spec.revision, *sorted(extra.items()))
    return copy.deepcopy(remembered(key, read))


def random_weights(
    auto_class: Any, spec: ModelSpec, dtype: torch.dtype | str, device: torch.device
) -> PreTrainedModel:
    """A random-weight control (`spec.random_weights`: its seed): the model's own architecture,
    read from its config as loading reads it (revision, remote code, a GGUF file's header),
    every weight drawn by transformers' initialisation after `torch.manual_seed(seed)`, as
    `auto_class.from_config` does it by hand. Drawn on the CPU in a forked generator (the
    process's own random stream is left as it was, and the weights are the same on every
    device), then put in the run's precision (`auto`: float32, as there is no checkpoint's)."""
    where = f"{option('--model')} {spec.text}"
    trained = [key for key in ("peft", "load_in_8bit", "load_in_4bit") if spec.get(key)]
    if trained:
        raise TacitError(
            f"{where}: {trained[0]} puts trained or quantised weights on the model; a "
            f"random-weight control has none (drop {option('--control')}, or {trained[0]})"
        )
    config = read_config(spec)
    extra = {k: v for k in ("trust_remote_code", "attn_implementation") if (v := spec.get(k))}
    with quiet_transformers(), torch.random.fork_rng(devices=[]):
        torch.manual_seed(int(spec.random_weights))
        model = auto_class.from_config(config, **extra)
    if isinstance(dtype, torch.dtype):
        model = model.to(dtype)
    return cast(PreTrainedModel, model.to(device).eval())


def passed_on(spec: ModelSpec) -> dict[str, Any]:
    """The loading options that are not tacit's own: `from_pretrained` keywords, passed on."""
    return {k: v for k, v in spec.given().items() if k not in LOAD_OPTIONS}


def check_passed_on(spec: ModelSpec, config: Any) -> None:
    """Each option passed on must be a keyword `from_pretrained` takes or a field of the
    model's config (which it sets): anything else is a typo, refused in one line."""
    from transformers import PreTrainedModel

    named = set(inspect.signature(PreTrainedModel.from_pretrained).parameters)
    known = named | set(FROM_PRETRAINED_KEYWORDS) | set(config.to_dict())
    for key in passed_on(spec):
        if key not in known:
            close = get_close_matches(key, LOAD_OPTIONS, n=1)
            hint = f" (did you mean {close[0]}?)" if close else ""
            raise TacitError(
                f"{option('--model')} {spec.text}: {key!r} is not a loading option: neither "
                f"tacit's nor a keyword of from_pretrained or a field of the model's config"
                f"{hint}"
            )


def with_adapter(model: PreTrainedModel, spec: ModelSpec, *, merge: bool) -> PreTrainedModel:
    """The model with the PEFT adapter `spec.peft` on it: merged into its weights (what peft's
    merge_and_unload gives), or, on quantized weights that cannot take it, kept beside them."""
    adapter = str(spec.peft)
    where = f"{option('--model')} {spec.text}: peft={adapter}"
    try:
        from peft import PeftModel
    except ImportError:
        raise TacitError(f"{where} needs peft: pip install 'tacit-probe[peft]' (or peft)") from None
    path = Path(adapter).expanduser()
    if path.is_dir() and not (path / "adapter_config.json").is_file():
        raise TacitError(f"{where}: no adapter_config.json in it: not a PEFT adapter directory")
    try:
        with quiet_transformers(), hub_access(adapter) as hub, warnings.catch_warnings():
            warnings.simplefilter("ignore", FutureWarning)  # peft's about transformers' names
            wrapped = PeftModel.from_pretrained(model, adapter, is_trainable=False, **hub)
    except (OSError, ValueError, RuntimeError, KeyError) as err:  # not found, shapes differ
        raise TacitError(
            f"{where}: cannot put it on the model ({shorten(first_line(err), 200)})"
        ) from err
    merged = wrapped.merge_and_unload() if merge else wrapped.get_base_model()
    return cast(PreTrainedModel, merged)


def load_spread(
    runtime: Any,
    spec: ModelSpec,
    device_map: str,
    max_memory: str | None,
    offload_folder: str | Path | None,
) -> PreTrainedModel:
    """A model spread over devices by accelerate's big-model loading; inputs then go to the
    device of its first part (runtime.device), and accelerate's hooks move activations on."""
    from tacit.core.options import parse_max_memory

    try:
        import accelerate  # noqa: F401  (transformers needs it for a device map)
    except ImportError:
        raise TacitError(
            f"{option('--device-map')} needs accelerate: pip install 'tacit-probe[dist]' "
            "(or accelerate)"
        ) from None
    model = load_weights(
        runtime.auto_class,
        spec,
        runtime.load_dtype,
        runtime.device,
        head=runtime.head,
        device_map=device_map,
        max_memory=parse_max_memory(max_memory) if max_memory else None,
        offload_folder=str(offload_folder) if offload_folder else None,
    )
    placed: dict[str, Any] = model.hf_device_map  # type: ignore[assignment]
    first = next(iter(placed.values()))
    runtime.device = torch.device(
        f"cuda:{first}" if isinstance(first, int) else "cpu" if first == "disk" else first
    )
    return model


def placed(device_map: dict[str, Any]) -> dict[str, int]:
    """How many of a spread model's modules went to each device (the manifest's summary)."""
    counts: dict[str, int] = {}
    for device in device_map.values():
        counts[str(device)] = counts.get(str(device), 0) + 1
    return counts
