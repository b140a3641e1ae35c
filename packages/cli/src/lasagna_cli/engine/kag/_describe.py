"""The exact setup of a sweep task, as recorded with every result file."""

from __future__ import annotations

from typing import Any

from lasagna_cli.engine.config._config import Setup


def describe_setup(setup: Setup) -> dict[str, Any]:
    """The exact setup, as recorded with every result: names of key variables only."""
    datasets = list(setup.datasets) if setup.datasets is not None else None
    if setup.system is not None:
        return {
            "name": setup.name,
            "system": setup.system.describe(),
            "prompt": setup.prompt.user,
            "datasets": datasets,
        }
    model = setup.generator
    assert model is not None and model.provider is not None
    provider = model.provider.describe()
    if provider["base_url"] is None and model.endpoint is not None:
        provider["base_url"] = model.endpoint  # a built-in provider's server, as used
    return {
        "name": setup.name,
        "provider": provider,
        "model": model.name.partition("/")[2],
        "model_id": model.name,
        "temperature": model.temperature,
        "tokens": model.max_tokens,
        "system_prompt": setup.prompt.system,
        "prompt": setup.prompt.user,
        "datasets": datasets,
        "retriever": _describe_retriever(setup),
        "database": setup.database.describe() if setup.database else None,
    }


def _describe_retriever(setup: Setup) -> dict[str, Any] | None:
    spec = setup.retriever
    if spec is None:
        return None
    described = {"name": setup.retriever_name, "type": spec.kind, "top_k": spec.top_k}
    if spec.uses_vectors:
        described.update({k: v for k, v in spec.to_dict().items() if k not in ("kind", "top_k")})
    return described
