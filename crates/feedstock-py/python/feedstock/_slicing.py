"""Python indexing of a tensor with slice bounds computed when run
(``data[:, i * n:(i + 1) * n]``, PTB-style readers): one ``strided_slice``
of bounds made when run, then the constant indices taken as usual.

Imported when such an index is first met, after ``_graph`` and
``_math_ops`` are loaded."""

import builtins

from ._dtypes import int32
from ._graph import Tensor, _scope, _under, strided_slice
from ._math_ops import cast, shape, stack


def index_when_run(x, dims):
    """``x[...]`` for the entries ``dims`` of ``Tensor.__getitem__`` where
    some slice bound is a tensor computed when run: the slices' bounds are
    stacked into begin/end vectors (an omitted start is 0, an omitted stop
    the dimension's size when run), then the ``at`` entries shrink their
    dimensions. Steps must be positive constants; ``None`` and ``...``
    are not supported with such bounds. Named as TensorFlow's: the
    helpers under ``strided_slice/``, the slice ``strided_slice``."""
    if any(d[0] in ("newaxis", "ellipsis") for d in dims):
        raise TypeError("indexing with bounds computed when run: None and ... are not supported with them")
    g = x.graph
    scope = _scope(g, None, "strided_slice")
    with _under(g, scope):
        sizes = shape(x)
        begin, end, strides, then = [], [], [], []
        for k, d in enumerate(dims):
            if d[0] == "at":
                begin.append(0)
                end.append(sizes[k])
                strides.append(1)
                then.append(d[1])
                continue
            _, start, stop, step = d
            if step is None or step <= 0:
                raise TypeError("indexing with bounds computed when run needs a positive constant step")
            begin.append(0 if start is None else start)
            end.append(sizes[k] if stop is None else stop)
            strides.append(step)
            then.append(builtins.slice(None))

        def vector(values):
            return stack([cast(v, int32) if isinstance(v, Tensor) else v for v in values])

        out = strided_slice(x, vector(begin), vector(end), vector(strides), name=f"{scope}/")
    if any(t != builtins.slice(None) for t in then):
        out = out[tuple(then)]
    return out
