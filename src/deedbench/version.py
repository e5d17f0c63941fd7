"""deedbench's version, in a module of its own so that every layer can name it without
loading the Python face (`deedbench/__init__.py`) that stands on all of them."""

__version__ = "0.1.0"

__all__ = ["__version__"]
