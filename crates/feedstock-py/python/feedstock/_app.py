"""``tf.app`` (``run`` and ``flags``) and ``tf.logging`` of TensorFlow 1,
for input scripts written around them.

``tf.app.flags`` follows absl's flags as TensorFlow 1 re-exported them:
``DEFINE_*`` registers a flag with its default, ``FLAGS.<name>`` reads it,
and ``tf.app.run`` parses ``--name=value`` (``--name value``, ``--flag`` /
``--noflag`` for booleans) from ``sys.argv`` before calling ``main`` with
the arguments left over, then exits with its return value.
"""

import logging as _logging
import sys

_BOOL_TRUE = ("true", "t", "1", "yes", "y")
_BOOL_FALSE = ("false", "f", "0", "no", "n")


def _parse_bool(text):
    low = str(text).lower()
    if low in _BOOL_TRUE:
        return True
    if low in _BOOL_FALSE:
        return False
    raise ValueError(f"Non-boolean argument to boolean flag: {text!r}")


class _Flag:
    def __init__(self, name, default, help, parse):  # noqa: A002 (absl's name)
        self.name, self.default, self.help, self.parse = name, default, help, parse
        self.value = default


class _FlagValues:
    """``tf.app.flags.FLAGS``: the registered flags by name."""

    def __init__(self):
        object.__setattr__(self, "_flags", {})
        object.__setattr__(self, "_parsed", False)

    def _define(self, name, default, help, parse):  # noqa: A002
        if name in self._flags:
            raise DuplicateFlagError(f"The flag '{name}' is defined twice.")
        value = parse(default) if default is not None and isinstance(default, str) else default
        self._flags[name] = _Flag(name, value, help, parse)

    def __getattr__(self, name):
        flags = object.__getattribute__(self, "_flags")
        if name not in flags:
            raise AttributeError(name)
        return flags[name].value

    def __setattr__(self, name, value):
        if name not in self._flags:
            raise AttributeError(name)
        self._flags[name].value = value

    def __contains__(self, name):
        return name in self._flags

    def is_parsed(self):
        return self._parsed

    def mark_as_parsed(self):
        object.__setattr__(self, "_parsed", True)

    def __call__(self, argv, known_only=False):
        """Parses the flags in ``argv`` (``argv[0]`` is the program);
        the arguments that are not flags, with the program first."""
        rest, args = [argv[0]], list(argv[1:])
        while args:
            arg = args.pop(0)
            if arg == "--":
                rest.extend(args)
                break
            if not arg.startswith("-") or arg == "-":
                rest.append(arg)
                continue
            name, eq, value = arg.lstrip("-").partition("=")
            flag = self._flags.get(name)
            if flag is None and not eq and name.startswith("no") and name[2:] in self._flags:
                flag, value, eq = self._flags[name[2:]], "false", "="
                if flag.parse is not _parse_bool:
                    flag = None
            if flag is None:
                if known_only:
                    rest.append(arg)
                    continue
                raise UnrecognizedFlagError(f"Unknown command line flag '{name}'")
            if not eq:
                if flag.parse is _parse_bool:
                    value = "true"
                elif args:
                    value = args.pop(0)
                else:
                    raise IllegalFlagValueError(f"Missing value for flag --{name}")
            try:
                flag.value = flag.parse(value)
            except ValueError as e:
                raise IllegalFlagValueError(f"flag --{name}={value}: {e}") from None
        self.mark_as_parsed()
        return rest


class Error(Exception):
    """absl's ``flags.Error``."""


class DuplicateFlagError(Error):
    pass


class UnrecognizedFlagError(Error):
    pass


class IllegalFlagValueError(Error):
    pass


FLAGS = _FlagValues()


def _definer(parse):
    def define(name, default, help=None, flag_values=FLAGS, **_ignored):  # noqa: A002
        flag_values._define(name, default, help, parse)

    return define


def _parse_list(text):
    if isinstance(text, (list, tuple)):
        return list(text)
    return [s for s in str(text).split(",") if s] if text else []


DEFINE_string = _definer(str)
DEFINE_integer = _definer(int)
DEFINE_float = _definer(float)
DEFINE_boolean = _definer(_parse_bool)
DEFINE_bool = DEFINE_boolean
DEFINE_list = _definer(_parse_list)


def DEFINE_enum(name, default, enum_values, help=None, flag_values=FLAGS, **_ignored):  # noqa: A002, N802
    def parse(text):
        if text not in enum_values:
            raise ValueError(f"value should be one of <{'|'.join(enum_values)}>")
        return text

    flag_values._define(name, default, help, parse)


def run(main=None, argv=None):
    """``tf.app.run``: parses the flags in ``argv`` (``sys.argv``) and
    exits with ``main(remaining_argv)`` (``__main__.main`` by default)."""
    args = FLAGS(sys.argv if argv is None else argv, known_only=True)
    main = main or sys.modules["__main__"].main
    sys.exit(main(args))


# ---------------------------------------------------------------- tf.logging

DEBUG, INFO, WARN, ERROR, FATAL = 10, 20, 30, 40, 50
_logger = _logging.getLogger("tensorflow")


def log(level, msg, *args, **kwargs):
    _logger.log(level, msg, *args, **kwargs)


def debug(msg, *args, **kwargs):
    _logger.debug(msg, *args, **kwargs)


def info(msg, *args, **kwargs):
    _logger.info(msg, *args, **kwargs)


def warning(msg, *args, **kwargs):
    _logger.warning(msg, *args, **kwargs)


warn = warning


def error(msg, *args, **kwargs):
    _logger.error(msg, *args, **kwargs)


def fatal(msg, *args, **kwargs):
    """Logs at FATAL, as TensorFlow's ``tf.logging.fatal`` (it does not
    exit)."""
    _logger.log(FATAL, msg, *args, **kwargs)


def vlog(level, msg, *args, **kwargs):
    _logger.log(level, msg, *args, **kwargs)


def set_verbosity(v):
    _logger.setLevel(v)


def get_verbosity():
    return _logger.getEffectiveLevel()


_counts = {}


def log_every_n(level, msg, n, *args):
    """Logs ``msg`` the first time and every ``n``-th time after, per call
    site."""
    site = sys._getframe(1).f_code, sys._getframe(1).f_lineno
    count = _counts.get(site, 0)
    _counts[site] = count + 1
    if count % max(n, 1) == 0:
        log(level, msg, *args)


def log_first_n(level, msg, n, *args):
    """Logs ``msg`` its first ``n`` times, per call site."""
    site = sys._getframe(1).f_code, sys._getframe(1).f_lineno
    count = _counts.get(site, 0)
    _counts[site] = count + 1
    if count < n:
        log(level, msg, *args)
