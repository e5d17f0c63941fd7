"""Every tool schema of every benchmark is valid JSON Schema with every ``$ref`` resolved,
as a strict provider checks a request's tools: deedbench's own tools (each defined in any
benchmark's modules, listed or not, whoever's side), what each benchmark's episodes show
the models, and τ²'s tools as deedbench reads them from τ²'s source."""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import jsonschema
import pytest

import _shared
import deedbench.benchmarks
from deedbench.agents import FunctionAgent
from deedbench.benchmarks import BUILTIN, load_benchmark
from deedbench.benchmarks.tau2.benchmark import Tau2Benchmark
from deedbench.engine import Tool
from deedbench.records import Message

SHARED = Path(__file__).resolve().parents[2].parent / "shared"
DATA = {
    "tau2-airline": SHARED / "tau2",
    "tau2-retail": SHARED / "tau2",
    "tau2-telecom": SHARED / "tau2",
    "tau2-banking": SHARED / "tau2",
    "taubench-retail": SHARED / "taubench" / "retail",
    "taubench-airline": SHARED / "taubench" / "airline",
}


def _defined_tools() -> Iterator[tuple[str, Tool[..., Any]]]:
    """Every tool defined in deedbench's benchmark modules: module-level ones, those in
    lists, and those of every class (toolkits, their mixins)."""
    seen: set[int] = set()
    prefix = deedbench.benchmarks.__name__ + "."
    for info in pkgutil.walk_packages(deedbench.benchmarks.__path__, prefix):
        module = importlib.import_module(info.name)
        for name, value in vars(module).items():
            found: list[Any] = [value]
            if isinstance(value, list | tuple):
                found = list(value)
            elif isinstance(value, type):
                found = list(vars(value).values())
            for item in found:
                if isinstance(item, Tool) and id(item) not in seen:
                    seen.add(id(item))
                    yield f"{info.name}.{name}:{item.name}", item


def _pointer(schema: dict[str, Any], ref: str) -> Any:
    assert ref.startswith("#/"), f"a $ref outside the schema: {ref}"
    node: Any = schema
    for part in ref[2:].split("/"):
        part = part.replace("~1", "/").replace("~0", "~")
        assert isinstance(node, dict) and part in node, f"{ref} points to nothing"
        node = node[part]
    return node


def _refs(node: Any) -> Iterator[str]:
    if isinstance(node, dict):
        for key, value in node.items():
            if key == "$ref" and isinstance(value, str):
                yield value
            else:
                yield from _refs(value)
    elif isinstance(node, list):
        for item in node:
            yield from _refs(item)


def check_spec(spec: dict[str, Any]) -> int:
    """Assert the spec's parameters are valid JSON Schema whose $refs all resolve; how many
    $refs there were."""
    parameters = spec["function"]["parameters"]
    jsonschema.Draft202012Validator.check_schema(parameters)
    refs = list(_refs(parameters))
    for ref in refs:
        _pointer(parameters, ref)
    return len(refs)


def test_every_tool_deedbench_defines_has_a_valid_schema() -> None:
    tools = dict(_defined_tools())
    assert len(tools) > 150  # the desks', TAC's and every τ² toolkit's, discoverable ones too
    refs = sum(check_spec(t.spec) for t in tools.values())
    assert refs >= 5  # airline's book/update reservations, telecom's network mode and APN


def test_a_valid_call_of_a_tool_with_nested_models_validates() -> None:
    """The bug: deedbench's schema pointed to $defs it did not carry, so a valid call failed
    to validate (PointerToNowhere: '/$defs/Passenger') and the model never saw Passenger."""
    from deedbench.benchmarks.tau2.airline.tools import AirlineTools

    tools = {t.name: t for t in AirlineTools.tools()}
    parameters = tools["update_reservation_passengers"].spec["function"]["parameters"]
    assert "Passenger" in parameters["$defs"]
    call = {
        "reservation_id": "ZFA04Y",
        "passengers": [{"first_name": "Sara", "last_name": "Doe", "dob": "1990-04-05"}],
    }
    jsonschema.Draft202012Validator(parameters).validate(call)
    assert set(parameters["$defs"]["Passenger"]["properties"]) == {"first_name", "last_name", "dob"}


def _unused(*_: Any) -> Message:
    raise AssertionError("no model is asked here")


def _shown(name: str, options: dict[str, str]) -> Iterator[dict[str, Any]]:
    """The specs each side of the benchmark's first episodes is shown."""
    given = {"data": str(DATA[name])} if name in DATA else {}
    bench = load_benchmark(name, given | options)
    if isinstance(bench, Tau2Benchmark):
        bench.use_user_model(FunctionAgent(_unused))
    for sample in bench.samples()[:3]:
        setup = bench.setup(sample, bench.conditions[0], 0)
        yield from setup.toolbox.specs()
        users = setup.half_duplex.user_tools if setup.half_duplex is not None else None
        if users is not None:
            yield from users.specs()


CASES = [(name, {}) for name in BUILTIN] + [
    ("tau2-telecom", {"mode": "solo"}),
    ("tau2-airline", {"source": "none"}),
    ("tau2-banking", {"retrieval": "bm25_grep"}),
]


@pytest.mark.parametrize(("name", "options"), CASES)
def test_what_every_benchmark_shows_the_models_is_valid_json_schema(
    name: str, options: dict[str, str]
) -> None:
    if name in DATA:
        _shared.need("tau2" if name.startswith("tau2") else "taubench")
    specs = list(_shown(name, options))
    assert specs
    for spec in specs:
        check_spec(spec)
