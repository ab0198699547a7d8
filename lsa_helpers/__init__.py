"""Geometry of lightning self-attention: forward maps, symmetries, Jacobians and dimensions.

The package follows Henry, Marchetti and Kohn, *Geometry of Lightning Self-Attention:
Identifiability and Dimension* (ICLR 2025).
"""

from .architecture import *  # noqa: F401,F403
from .weights import *  # noqa: F401,F403
from .forward import *  # noqa: F401,F403
from .jacobian import *  # noqa: F401,F403
from .symmetries import *  # noqa: F401,F403
from .virtual import *  # noqa: F401,F403
from .rank import *  # noqa: F401,F403
from .formulas import *  # noqa: F401,F403
from .dimension import *  # noqa: F401,F403
from .experiments import *  # noqa: F401,F403
from .identify import *  # noqa: F401,F403
from .data import *  # noqa: F401,F403
from .softmax import *  # noqa: F401,F403
from .singularities import *  # noqa: F401,F403
from .multihead import *  # noqa: F401,F403
from .landscape import *  # noqa: F401,F403
