"""metaheur: hybrid metaheuristics for QAP and TSP on CPU cores, GPUs and Dask clusters.

The package is imported lazily: ``import metaheur`` costs little, and the problem layer
(``metaheur.problems``), the kernel engine (``metaheur.engine``) and the searches load on use.
"""

from metaheur._version import __version__
from metaheur.errors import MetaheurError

__all__ = ["MetaheurError", "__version__"]
