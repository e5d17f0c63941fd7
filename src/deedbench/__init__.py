"""deedbench: judge AI agents by what they do, not what they say."""

__version__ = "0.1.0"

__all__ = ["__version__"]
