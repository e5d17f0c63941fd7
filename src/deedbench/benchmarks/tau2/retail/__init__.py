"""τ²'s retail domain on deedbench's τ² framework.

- `schema`: deedbench's copy of τ²'s database model (`RetailDB` and its records).
- `tools`: `RetailTools`, the desk's tools, following τ²'s code path call for call.
- `domain`: `RETAIL`, the domain's declaration, with its procedure rules.
"""

from deedbench.benchmarks.tau2.retail.domain import RETAIL, RETAIL_PROCEDURE
from deedbench.benchmarks.tau2.retail.schema import RetailDB
from deedbench.benchmarks.tau2.retail.tools import RetailTools

__all__ = ["RETAIL", "RETAIL_PROCEDURE", "RetailDB", "RetailTools"]
