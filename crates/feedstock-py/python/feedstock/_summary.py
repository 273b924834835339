"""``tf.summary`` for ``feedstock.compat.v1``: summaries are accepted and
named as TensorFlow names them, and nothing is written for TensorBoard.

Each summary op is a string scalar in ``tf.GraphKeys.SUMMARIES`` (empty;
TensorFlow's holds a serialized ``Summary``). The producers and batching
stages add the queue-fullness summaries TensorFlow adds
(``<stage>/fraction_of_<capacity>_full``). ``tf.summary.merge`` /
``merge_all`` give a tensor whose fetched value is every queue's fullness,
``{tag: fraction}``; ``tf.summary.FileWriter`` writes no event files.
"""

from ._graph import (
    SUMMARIES,
    _graph_of,
    _name_scope,
    _under,
    constant,
    convert_to_tensor,
    get_default_graph,
)
from ._session import _SummaryFetch


def _summary_op(g, name, collections):
    """A summary op of ``g`` named ``name`` (made unique in the current
    name scope): an empty string scalar added to ``collections`` (default
    ``tf.GraphKeys.SUMMARIES``), as TensorFlow adds its summaries."""
    with g.as_default():
        out = constant(b"", name=name)
    for key in collections if collections is not None else [SUMMARIES]:
        g.add_to_collection(key, out)
    return out


def _queue_summary(g, scope, tag):
    """The fullness summary TensorFlow adds for the queue of the producer
    or batching stage named ``scope``: ``<scope>/<tag>``, in SUMMARIES."""
    with _under(g, scope):
        return _summary_op(g, tag, None)


def scalar(name, tensor, collections=None, family=None):
    """``tf.summary.scalar``: accepted, writes nothing (see the module)."""
    return _summary_op(convert_to_tensor(tensor).graph, name, collections)


def image(name, tensor, max_outputs=3, collections=None, family=None):
    """``tf.summary.image``: accepted, writes nothing (see the module)."""
    return _summary_op(convert_to_tensor(tensor).graph, name, collections)


def histogram(name, values, collections=None, family=None):
    """``tf.summary.histogram``: accepted, writes nothing (see the module)."""
    return _summary_op(convert_to_tensor(values).graph, name, collections)


def _merged(g, collections, name):
    """The merged summary of ``g``: named ``Merge/MergeSummary`` (``name``
    gives ``<name>/<name>``), as TensorFlow names it, and added to
    ``collections``."""
    with _name_scope(g, name, "Merge"):
        out = constant(b"", name=name or "MergeSummary")
    fetch = _SummaryFetch(g, out._o)
    for key in collections or []:
        g.add_to_collection(key, fetch)
    return fetch


def merge(inputs, collections=None, name=None):
    """``tf.summary.merge``: one tensor for the summaries ``inputs`` (a
    non-empty list); fetching it gives every queue's fullness,
    ``{tag: fraction}``, as :func:`merge_all`."""
    if not inputs:
        raise ValueError("List argument 'inputs' to 'MergeSummary' Op with length 0 shorter than minimum length 1.")
    return _merged(_graph_of(*inputs), collections, name)


def merge_all(key=SUMMARIES, scope=None, name=None):
    """``tf.summary.merge_all``: the summaries of collection ``key``
    merged, as :func:`merge`; fetching it gives the queue-fullness
    summaries, ``{tag: fraction}`` (TensorFlow's
    ``queue/<name>/fraction_of_<capacity>_full``). Unlike TensorFlow's
    (``None`` then), it is a tensor even when the collection is empty."""
    return _merged(get_default_graph(), None, name)


class FileWriter:
    """``tf.summary.FileWriter``: accepted for compatibility and inert.
    feedstock writes no event files: it creates no ``logdir`` and
    ``add_summary``, ``add_graph`` and the rest write nothing."""

    def __init__(self, logdir, graph=None, max_queue=10, flush_secs=120, graph_def=None, filename_suffix=None,
                 session=None):
        self._logdir = logdir

    def get_logdir(self):
        """The ``logdir`` it was made with."""
        return self._logdir

    def add_summary(self, summary, global_step=None):
        """Writes nothing."""

    def add_graph(self, graph, global_step=None, graph_def=None):
        """Writes nothing."""

    def add_meta_graph(self, meta_graph_def, global_step=None):
        """Writes nothing."""

    def add_session_log(self, session_log, global_step=None):
        """Writes nothing."""

    def add_event(self, event):
        """Writes nothing."""

    def add_run_metadata(self, run_metadata, tag, global_step=None):
        """Writes nothing."""

    def flush(self):
        """Nothing to flush."""

    def close(self):
        """Nothing to close."""

    def reopen(self):
        """Nothing to reopen."""

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


class FileWriterCache:
    """``tf.summary.FileWriterCache``: one (inert) :class:`FileWriter`
    per ``logdir``."""

    _cache = {}

    @staticmethod
    def get(logdir):
        """The writer of ``logdir``, made on first use."""
        if logdir not in FileWriterCache._cache:
            FileWriterCache._cache[logdir] = FileWriter(logdir)
        return FileWriterCache._cache[logdir]

    @staticmethod
    def clear():
        """Forgets the writers."""
        FileWriterCache._cache.clear()
