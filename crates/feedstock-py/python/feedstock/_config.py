"""TensorFlow 1's session and run options: ``tf.ConfigProto``,
``tf.GPUOptions``, ``tf.GraphOptions``, ``tf.OptimizerOptions``,
``tf.RunOptions`` and ``tf.RunMetadata``.

In TensorFlow these are protocol-buffer messages; TF1 programs build them
by keyword and by assigning fields (``config.gpu_options.allow_growth =
True``). feedstock keeps their fields so that such programs run, and acts
on the two that concern an input pipeline: a run's deadline
(``RunOptions.timeout_in_ms``) and a session's default deadline
(``ConfigProto.operation_timeout_in_ms``). The others (devices, thread
pools, GPU memory, graph optimisation) have no meaning here and are kept
only to be read back.
"""


class _Message:
    """Fields by name with protocol-buffer defaults, as TensorFlow's
    messages: a field never set reads as its default, an unknown field is
    refused in protobuf's words. A nested message is made on first read,
    so ``config.gpu_options.allow_growth = True`` works."""

    _FIELDS = {}

    def __init__(self, **fields):
        for name, value in fields.items():
            if name not in self._FIELDS:
                raise ValueError(f'Protocol message {type(self).__name__} has no "{name}" field.')
            object.__setattr__(self, name, value)

    def __getattr__(self, name):
        # Called only for a field not set yet: its default, kept so that
        # a nested message or a map assigned into stays.
        fields = type(self)._FIELDS
        if name not in fields:
            raise AttributeError(name)
        default = fields[name]
        value = default() if callable(default) else default
        object.__setattr__(self, name, value)
        return value

    def __setattr__(self, name, value):
        if name not in self._FIELDS:
            raise AttributeError(f'Assignment not allowed (no field "{name}" in protocol message object).')
        object.__setattr__(self, name, value)

    def __repr__(self):
        set_fields = ", ".join(f"{k}={v!r}" for k, v in vars(self).items())
        return f"{type(self).__name__}({set_fields})"


class OptimizerOptions(_Message):
    """``tf.OptimizerOptions``: graph optimisation settings, kept and
    ignored (feedstock compiles its graph its own way)."""

    L1, L0 = 0, -1
    DEFAULT, OFF, ON_1, ON_2 = 0, -1, 1, 2
    _FIELDS = {
        "do_common_subexpression_elimination": False,
        "do_constant_folding": False,
        "do_function_inlining": False,
        "opt_level": 0,
        "global_jit_level": 0,
        "max_folded_constant_in_bytes": 0,
    }


class GraphOptions(_Message):
    """``tf.GraphOptions``: kept and ignored."""

    _FIELDS = {
        "optimizer_options": OptimizerOptions,
        "enable_recv_scheduling": False,
        "enable_bfloat16_sendrecv": False,
        "build_cost_model": 0,
        "build_cost_model_after": 0,
        "infer_shapes": False,
        "place_pruned_graph": False,
        "timeline_step": 0,
    }


class GPUOptions(_Message):
    """``tf.GPUOptions``: kept and ignored (feedstock runs on the CPU)."""

    _FIELDS = {
        "per_process_gpu_memory_fraction": 0.0,
        "allow_growth": False,
        "allocator_type": "",
        "deferred_deletion_bytes": 0,
        "visible_device_list": "",
        "polling_active_delay_usecs": 0,
        "polling_inactive_delay_msecs": 0,
        "force_gpu_compatible": False,
    }


class ConfigProto(_Message):
    """``tf.ConfigProto``: a session's settings. ``operation_timeout_in_ms``
    (when positive) is the deadline of every run of the session that
    gives no ``RunOptions.timeout_in_ms``, as in TensorFlow; the other
    fields are kept and ignored."""

    _FIELDS = {
        "device_count": dict,
        "intra_op_parallelism_threads": 0,
        "inter_op_parallelism_threads": 0,
        "use_per_session_threads": False,
        "placement_period": 0,
        "device_filters": list,
        "gpu_options": GPUOptions,
        "allow_soft_placement": False,
        "log_device_placement": False,
        "graph_options": GraphOptions,
        "operation_timeout_in_ms": 0,
        "isolate_session_state": False,
        "share_cluster_devices_in_session": False,
    }


class RunOptions(_Message):
    """``tf.RunOptions``: ``timeout_in_ms`` bounds how long a run waits
    (``DeadlineExceededError`` past it); tracing is kept and ignored."""

    NO_TRACE, SOFTWARE_TRACE, HARDWARE_TRACE, FULL_TRACE = 0, 1, 2, 3
    _FIELDS = {
        "trace_level": 0,
        "timeout_in_ms": 0,
        "inter_op_thread_pool": 0,
        "output_partition_graphs": False,
        "report_tensor_allocations_upon_oom": False,
    }


class RunMetadata(_Message):
    """``tf.RunMetadata``: accepted by ``Session.run`` and left empty
    (feedstock records no step statistics)."""

    _FIELDS = {"step_stats": None, "cost_graph": None, "partition_graphs": list}


def run_timeout(options, config):
    """A run's deadline in seconds, or None: the run's own
    ``timeout_in_ms`` if positive, else the session's
    ``operation_timeout_in_ms`` if positive, as TensorFlow takes them."""
    for ms in (getattr(options, "timeout_in_ms", 0), getattr(config, "operation_timeout_in_ms", 0)):
        if ms and ms > 0:
            return ms / 1000.0
    return None
