"""τ²'s own texts, read from the user's τ² source, never executed, never copied here.

What a τ² run shows its models that is τ²'s prose (the tools' descriptions and
parameter schemas, the agent's and the solo agent's instructions, the greeting, the
NL judge's prompt) lives in τ²'s Python source. These modules find that source and
read it as text:

- ``locate.py``: `find_source`, the user's τ² (``-T source``, the checkout holding the
  data, an installed ``tau2`` package found on disk) as a `Tau2Source`.
- ``tree.py``: `SourceTree`, its modules parsed with ``ast``, names followed through
  imports, literal values read.
- ``docstrings.py``: `parse_docstring`, a docstring read as τ²'s ``docstring_parser`` reads it.
- ``annotations.py``: `TypeMaker`, the types τ²'s annotations name, made again (τ²'s
  models and enums with their fields, descriptions and configuration).
- ``toolkits.py``: `ToolkitReader`, a toolkit's tools in τ²'s order and each as τ²'s
  ``openai_schema`` builds it.
- ``prompts.py``: `Tau2Prompts`, τ²'s prompts (`read_prompts`), and `OWN_PROMPTS`,
  deedbench's own wording used without a source.
- ``texts.py``: `Tau2Texts`, all of it for one run, with what the run records of it.
"""

from deedbench.benchmarks.tau2.source.locate import NO_SOURCE, Tau2Source, find_source
from deedbench.benchmarks.tau2.source.prompts import OWN_PROMPTS, Tau2Prompts, read_prompts
from deedbench.benchmarks.tau2.source.texts import (
    OWN_WORDING,
    TEXTS_KEY,
    Tau2Texts,
    load_texts,
    recorded_origin,
)

__all__ = [
    "NO_SOURCE",
    "OWN_PROMPTS",
    "OWN_WORDING",
    "TEXTS_KEY",
    "Tau2Prompts",
    "Tau2Source",
    "Tau2Texts",
    "find_source",
    "load_texts",
    "read_prompts",
    "recorded_origin",
]
