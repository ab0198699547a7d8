"""Geometry of lightning self-attention: forward maps, symmetries, Jacobians and dimensions.

The package follows Henry, Marchetti and Kohn, *Geometry of Lightning Self-Attention:
Identifiability and Dimension* (ICLR 2025). Its public names are those of the modules below,
each loaded from its module on first use (PEP 562): ``lsa_helpers.architecture`` and
``lsa_helpers.formulas`` load no numpy. ``lsa_helpers.widgets``, ``lsa_helpers.symbolic`` and
``lsa_helpers.invariants`` are imported by name (they load ipywidgets and sympy).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .architecture import NORMALIZATIONS, Architecture
    from .weights import (
        Layer, layer_from_attention, random_inputs, random_weights, vector_to_weights,
        weights_to_vector,
    )
    from .network import ORDERS, column_softmax, forward, layer_forward, multiplication_counts
    from .differential import jacobian, jacobian_along
    from .rank import (
        CLEAR_GAP, PRIME, VERDICTS, FloatRank, exact_rank, float_rank, scaled_singular_values,
    )
    from .symmetries import (
        FIBER_CASES, SymmetryTangents, act_attention, act_width, degenerate_tangents, fiber_kind,
        fiber_tangents, function_distance, is_same_function, rank_one_swap, scale_layers,
        sees_parallel_tokens, symmetry_tangent_groups, symmetry_tangents, width_tangents,
    )
    from .virtual import VirtualWeights, value_free_forward, virtual_jacobian, virtual_weights
    from .formulas import (
        FORMULA_STATUSES, Formula, formula_dimension, monomials_per_entry, span_dimension,
    )
    from .function_space import (
        MAX_MEMORY, METHODS, STOP_REASONS, Dimension, dimension, memory_estimate,
    )
    from .experiments import ConjectureRow, reproduce_softmax_conjecture
    from .identify import Recovery, factor_quadric, quadric_matrices, recover_layer
    from .atlas import atlas_grid, atlas_row
    from .tables import TABLES, data_folder, load_table
    from .softmax import SoftmaxRecovery, recover_attention, recover_softmax_layer, recover_values
    from .singularities import (
        SLICE_POSITIONS, Trajectory, gradient_descent, loss_and_gradient, quadratic_factor,
        rank_one_layers, slice_coordinates, slice_matrix, slice_position, swap_tangent_dimension,
        tangent_dimension, value_map_matrix,
    )
    from .multihead import (
        Head, HeadsDimension, MultiHead, head_symmetry_tangents, multihead_dimension,
        multihead_forward, multihead_jacobian, permute_heads, random_heads,
    )
    from .landscape import (
        FlatDirections, LossMoments, TeacherProblem, TrainingRun, descend_together,
        first_step_below, flat_directions, hessian_at_minimum, hessian_spectrum, loss_along,
        loss_hessian, loss_moments, squared_loss, teacher_problem, train_to_zero_loss,
    )

# The public names, by the module that defines them.
_SOURCES: dict[str, tuple[str, ...]] = {
    "architecture": ("NORMALIZATIONS", "Architecture"),
    "weights": (
        "Layer", "layer_from_attention", "random_inputs", "random_weights", "vector_to_weights",
        "weights_to_vector",
    ),
    "network": ("ORDERS", "column_softmax", "forward", "layer_forward", "multiplication_counts"),
    "differential": ("jacobian", "jacobian_along"),
    "rank": (
        "CLEAR_GAP", "PRIME", "VERDICTS", "FloatRank", "exact_rank", "float_rank",
        "scaled_singular_values",
    ),
    "symmetries": (
        "FIBER_CASES", "SymmetryTangents", "act_attention", "act_width", "degenerate_tangents",
        "fiber_kind", "fiber_tangents", "function_distance", "is_same_function", "rank_one_swap",
        "scale_layers", "sees_parallel_tokens", "symmetry_tangent_groups", "symmetry_tangents",
        "width_tangents",
    ),
    "virtual": ("VirtualWeights", "value_free_forward", "virtual_jacobian", "virtual_weights"),
    "formulas": (
        "FORMULA_STATUSES", "Formula", "formula_dimension", "monomials_per_entry",
        "span_dimension",
    ),
    "function_space": (
        "MAX_MEMORY", "METHODS", "STOP_REASONS", "Dimension", "dimension", "memory_estimate",
    ),
    "experiments": ("ConjectureRow", "reproduce_softmax_conjecture"),
    "identify": ("Recovery", "factor_quadric", "quadric_matrices", "recover_layer"),
    "atlas": ("atlas_grid", "atlas_row"),
    "tables": ("TABLES", "data_folder", "load_table"),
    "softmax": ("SoftmaxRecovery", "recover_attention", "recover_softmax_layer", "recover_values"),
    "singularities": (
        "SLICE_POSITIONS", "Trajectory", "gradient_descent", "loss_and_gradient",
        "quadratic_factor", "rank_one_layers", "slice_coordinates", "slice_matrix",
        "slice_position", "swap_tangent_dimension", "tangent_dimension", "value_map_matrix",
    ),
    "multihead": (
        "Head", "HeadsDimension", "MultiHead", "head_symmetry_tangents", "multihead_dimension",
        "multihead_forward", "multihead_jacobian", "permute_heads", "random_heads",
    ),
    "landscape": (
        "FlatDirections", "LossMoments", "TeacherProblem", "TrainingRun", "descend_together",
        "first_step_below", "flat_directions", "hessian_at_minimum", "hessian_spectrum",
        "loss_along", "loss_hessian", "loss_moments", "squared_loss", "teacher_problem",
        "train_to_zero_loss",
    ),
}
_MODULE = {name: module for module, names in _SOURCES.items() for name in names}

__all__ = [
    "CLEAR_GAP",
    "FIBER_CASES",
    "FORMULA_STATUSES",
    "MAX_MEMORY",
    "METHODS",
    "NORMALIZATIONS",
    "ORDERS",
    "PRIME",
    "SLICE_POSITIONS",
    "STOP_REASONS",
    "TABLES",
    "VERDICTS",
    "Architecture",
    "ConjectureRow",
    "Dimension",
    "FlatDirections",
    "FloatRank",
    "Formula",
    "Head",
    "HeadsDimension",
    "Layer",
    "LossMoments",
    "MultiHead",
    "Recovery",
    "SoftmaxRecovery",
    "SymmetryTangents",
    "TeacherProblem",
    "TrainingRun",
    "Trajectory",
    "VirtualWeights",
    "act_attention",
    "act_width",
    "atlas_grid",
    "atlas_row",
    "column_softmax",
    "data_folder",
    "degenerate_tangents",
    "descend_together",
    "dimension",
    "exact_rank",
    "factor_quadric",
    "fiber_kind",
    "fiber_tangents",
    "first_step_below",
    "flat_directions",
    "float_rank",
    "formula_dimension",
    "forward",
    "function_distance",
    "gradient_descent",
    "head_symmetry_tangents",
    "hessian_at_minimum",
    "hessian_spectrum",
    "is_same_function",
    "jacobian",
    "jacobian_along",
    "layer_forward",
    "layer_from_attention",
    "load_table",
    "loss_along",
    "loss_and_gradient",
    "loss_hessian",
    "loss_moments",
    "memory_estimate",
    "monomials_per_entry",
    "multihead_dimension",
    "multihead_forward",
    "multihead_jacobian",
    "multiplication_counts",
    "permute_heads",
    "quadratic_factor",
    "quadric_matrices",
    "random_heads",
    "random_inputs",
    "random_weights",
    "rank_one_layers",
    "rank_one_swap",
    "recover_attention",
    "recover_layer",
    "recover_softmax_layer",
    "recover_values",
    "reproduce_softmax_conjecture",
    "scale_layers",
    "scaled_singular_values",
    "sees_parallel_tokens",
    "slice_coordinates",
    "slice_matrix",
    "slice_position",
    "span_dimension",
    "squared_loss",
    "swap_tangent_dimension",
    "symmetry_tangent_groups",
    "symmetry_tangents",
    "tangent_dimension",
    "teacher_problem",
    "train_to_zero_loss",
    "value_free_forward",
    "value_map_matrix",
    "vector_to_weights",
    "virtual_jacobian",
    "virtual_weights",
    "weights_to_vector",
    "width_tangents",
]


def __getattr__(name: str) -> Any:
    """The public name ``name``, imported from its module and kept in the package."""
    if name not in _MODULE:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f".{_MODULE[name]}", __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
