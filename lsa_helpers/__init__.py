"""Geometry of lightning self-attention: forward maps, symmetries, Jacobians and dimensions.

The package follows Henry, Marchetti and Kohn, *Geometry of Lightning Self-Attention:
Identifiability and Dimension* (ICLR 2025).
"""

from .architecture import *
from .weights import *
from .network import *
from .differential import *
from .symmetries import *
from .virtual import *
from .rank import *
from .formulas import *
from .function_space import *
from .experiments import *
from .identify import *
from .atlas import *
from .tables import *
from .softmax import *
from .singularities import *
from .multihead import *
from .landscape import *
