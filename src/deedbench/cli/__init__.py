"""The command-line interface (``deedbench``)."""

__all__: list[str] = []
