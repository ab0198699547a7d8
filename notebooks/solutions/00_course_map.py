# Solution to the warm-up exercise of 00_course_map: load it with  %load solutions/00_course_map.py
from lsa_helpers import Architecture, formula_dimension


def fiber_dimension(d, d_out, a):
    # Parameters minus dimension of one lightning layer with widths (d, d_out) and rank a.
    arch = Architecture((d, d_out), (a,))
    return arch.parameter_count - formula_dimension(arch).value


for d, d_out, a in [(3, 3, 3), (3, 2, 2), (4, 1, 1), (2, 3, 5)]:
    expected = a * a + 1 if a <= d else 2 * a * d - d * d + 1
    assert fiber_dimension(d, d_out, a) == expected, f"wrong for (d, d', a) = {(d, d_out, a)}"
print("all checks passed")
