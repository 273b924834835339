"""``tf.app`` (``run``, ``flags``) and ``tf.logging`` of TensorFlow 1,
for input scripts written around them.

``tf.app.flags`` follows absl's flags as TensorFlow 1 re-exported them
(TensorFlow 2.21's ``tf.compat.v1.flags`` observed): ``DEFINE_*``
registers a flag with its default; the first read of a flag value
(``FLAGS.name``, ``hasattr(FLAGS, ...)``) before anything parsed parses
``sys.argv`` in full, so an unknown flag there raises
``UnrecognizedFlagError`` (with absl's "Did you mean" suggestions), a bad
value ``IllegalFlagValueError``, a missing one ``Error``, and the flags
stay unparsed (the next read tries again). ``tf.app.run`` parses
``sys.argv`` (or ``argv``) tolerating unknown flags, which it passes on to
``main`` with the other arguments; ``--help`` / ``--helpshort`` /
``--helpfull`` / ``-?`` print the flags and exit 1, as absl's ``app.run``.
``--name=value``, ``--name value``, ``--flag`` / ``--noflag`` for
booleans, one or two dashes; ``--`` ends the flags. absl's own flags that
TensorFlow scripts are run with (``--logtostderr``, ``--v``...) are
defined, and have no effect.
"""

import logging as _logging
import sys
import textwrap

_BOOL_TRUE = ("true", "t", "1", "yes", "y")
_BOOL_FALSE = ("false", "f", "0", "no", "n")


def _parse_bool(text):
    if isinstance(text, bool):
        return text
    low = str(text).lower()
    if low in _BOOL_TRUE:
        return True
    if low in _BOOL_FALSE:
        return False
    # absl's message, a tuple's str: ('Non-boolean argument to boolean flag', 'x')
    raise ValueError("Non-boolean argument to boolean flag", text)


class _Flag:
    """One flag: ``value`` and ``default`` as absl's ``Flag`` has them."""

    def __init__(self, name, default, help, parse, kind, module):  # noqa: A002 (absl's name)
        self.name, self.default, self.help, self.parse = name, default, help, parse
        self.kind, self.module = kind, module
        self.value = default
        self.present = 0


def _damerau_levenshtein(a, b):
    """absl's edit distance for its flag suggestions (optimal string
    alignment: insert, delete, substitute, swap two neighbours)."""
    d = [[0] * (len(b) + 1) for _ in range(len(a) + 1)]
    for i in range(len(a) + 1):
        d[i][0] = i
    for j in range(len(b) + 1):
        d[0][j] = j
    for i in range(1, len(a) + 1):
        for j in range(1, len(b) + 1):
            cost = 0 if a[i - 1] == b[j - 1] else 1
            d[i][j] = min(d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost)
            if i > 1 and j > 1 and a[i - 1] == b[j - 2] and a[i - 2] == b[j - 1]:
                d[i][j] = min(d[i][j], d[i - 2][j - 2] + 1)
    return d[len(a)][len(b)]


def _suggestions(attempt, names):
    """absl's ``get_flag_suggestions``: the flags whose prefix of the
    attempt's length is nearest, if fewer than half its letters differ."""
    if len(attempt) <= 2 or not names:
        return []
    distances = sorted((_damerau_levenshtein(attempt, n[: len(attempt)]), n) for n in names)
    least = distances[0][0]
    if least >= 0.5 * len(attempt):
        return []
    return [n for d, n in distances if d == least]


class _FlagValues:
    """``tf.app.flags.FLAGS``: the registered flags by name."""

    def __init__(self):
        object.__setattr__(self, "_flags", {})
        object.__setattr__(self, "_parsed", False)

    def _define(self, name, default, help, parse, kind="", module=None):  # noqa: A002
        if name in self._flags:
            raise DuplicateFlagError(f"The flag '{name}' is defined twice.")
        value = parse(default) if default is not None and isinstance(default, str) else default
        self._flags[name] = _Flag(name, value, help, parse, kind, module or _caller_module())

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        # As TensorFlow's FLAGS (not absl's, which raises): a value read
        # before anything parsed parses sys.argv, every flag known.
        if not object.__getattribute__(self, "_parsed"):
            self(sys.argv)
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

    def __iter__(self):
        return iter(list(self._flags))

    def __len__(self):
        return len(self._flags)

    def __getitem__(self, name):
        """The flag object (``.value``, ``.default``, ``.help``)."""
        return self._flags[name]

    def is_parsed(self):
        return self._parsed

    def mark_as_parsed(self):
        object.__setattr__(self, "_parsed", True)

    def unparse_flags(self):
        """Every flag back to its default, and unparsed."""
        for f in self._flags.values():
            f.value, f.present = f.default, 0
        object.__setattr__(self, "_parsed", False)

    def flag_values_dict(self):
        return {name: f.value for name, f in self._flags.items()}

    def __call__(self, argv, known_only=False):
        """Parses the flags in ``argv`` (``argv[0]`` is the program);
        the arguments that are not flags, with the program first. Unknown
        flags raise ``UnrecognizedFlagError`` unless ``known_only``, which
        leaves them among the arguments."""
        if isinstance(argv, str):
            raise TypeError("argv should be a tuple/list of strings, not bytes or string.")
        if not argv:
            raise ValueError("argv cannot be an empty list, and must contain the program name as the first element.")
        rest, args = [argv[0]], list(argv[1:])
        unknown = []
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
                else:
                    unknown.append((name, arg))
                continue
            if not eq:
                if flag.parse is _parse_bool:
                    value = "true"
                elif args:
                    value = args.pop(0)
                else:
                    raise Error(f"Missing value for flag {arg}")
            try:
                flag.value = flag.parse(value)
            except ValueError as e:
                raise IllegalFlagValueError(f"flag --{name}={value}: {e}") from None
            flag.present += 1
        for name, arg in unknown:
            raise UnrecognizedFlagError(name, arg, _suggestions(name, list(self._flags)))
        self.mark_as_parsed()
        return rest

    def _help(self, program):
        """The text absl's ``--help`` prints: the flags by defining module
        (the main script under its file name)."""
        main = sys.modules.get("__main__")
        doc = getattr(main, "__doc__", None)
        lines = [doc.replace("%s", program) if doc else f"\n       USAGE: {program} [flags]", "flags:"]
        modules = {}
        for f in self._flags.values():
            if f.module != "absl":
                modules.setdefault(program if f.module == "__main__" else f.module, []).append(f)
        for module in sorted(modules):
            lines.append(f"\n{module}:")
            for f in sorted(modules[module], key=lambda f: f.name):
                head = f"  --[no]{f.name}: " if f.parse is _parse_bool else f"  --{f.name}: "
                if f.kind.startswith("<"):
                    head += f.kind + ": "
                body = textwrap.wrap(head + (f.help or "(no help available)"), 80, subsequent_indent="    ",
                                     break_on_hyphens=False) if "\n" not in (f.help or "") else [
                    head + (f.help or "").replace("\n", "\n    ")]
                lines.extend(body)
                if f.default is not None:
                    lines.append(f"    (default: '{_unparse(f.default)}')")
                if f.kind and not f.kind.startswith("<"):
                    lines.append(f"    ({f.kind})")
        lines.append("\nTry --helpfull to get a list of all flags.")
        return "\n".join(lines)


def _unparse(value):
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list):
        return ",".join(str(v) for v in value)
    return str(value)


def _caller_module():
    """The module that called ``DEFINE_*`` (the first frame outside this
    one)."""
    frame = sys._getframe(1)
    while frame is not None and frame.f_globals.get("__name__") == __name__:
        frame = frame.f_back
    return frame.f_globals.get("__name__", "__main__") if frame is not None else "__main__"


class Error(Exception):
    """absl's ``flags.Error``."""


class DuplicateFlagError(Error):
    pass


class UnrecognizedFlagError(Error):
    """A flag not defined, with absl's attributes and message."""

    def __init__(self, flagname, flagvalue="", suggestions=()):
        self.flagname, self.flagvalue = flagname, flagvalue
        tip = f". Did you mean: {', '.join(suggestions)} ?" if suggestions else ""
        super().__init__(f"Unknown command line flag '{flagname}'{tip}")


class IllegalFlagValueError(Error):
    pass


FLAGS = _FlagValues()

# absl's old keyword names, which TensorFlow's DEFINE_* still took.
_RENAMED = {"flag_name": "name", "default_value": "default", "docstring": "help"}


def _definer(parse, kind):
    def define(*args, **kwargs):
        for old, new in _RENAMED.items():
            if old in kwargs:
                kwargs[new] = kwargs.pop(old)
        return _define(parse, kind, *args, **kwargs)

    return define


def _define(parse, kind, name, default, help=None, flag_values=FLAGS, **_ignored):  # noqa: A002
    flag_values._define(name, default, help, parse, kind, _caller_module())


def _parse_list(text):
    if isinstance(text, (list, tuple)):
        return list(text)
    return [s for s in str(text).split(",") if s] if text else []


DEFINE_string = _definer(str, "")
DEFINE_integer = _definer(int, "an integer")
DEFINE_float = _definer(float, "a number")
DEFINE_boolean = _definer(_parse_bool, "")
DEFINE_bool = DEFINE_boolean
DEFINE_list = _definer(_parse_list, "a comma separated list")


def DEFINE_enum(name, default, enum_values, help=None, flag_values=FLAGS, **_ignored):  # noqa: A002, N802
    def parse(text):
        if text not in enum_values:
            raise ValueError(f"value should be one of <{'|'.join(enum_values)}>")
        return text

    flag_values._define(name, default, help, parse, f"<{'|'.join(enum_values)}>", _caller_module())


# absl's own flags, defined in TensorFlow's FLAGS when it is imported (the
# ones scripts are run with): accepted, with no effect in feedstock.
for _name, _default in (("logtostderr", False), ("alsologtostderr", False), ("showprefixforinfo", True),
                        ("only_check_args", False), ("run_with_pdb", False), ("pdb_post_mortem", False),
                        ("pdb", False), ("run_with_profiling", False), ("use_cprofile_for_profiling", True)):
    FLAGS._define(_name, _default, "absl's flag (no effect in feedstock)", _parse_bool, "", "absl")
for _name, _default, _parse in (("log_dir", "", str), ("stderrthreshold", "fatal", str), ("profile_file", None, str),
                                ("verbosity", -1, int), ("v", -1, int), ("logger_levels", None, str)):
    FLAGS._define(_name, _default, "absl's flag (no effect in feedstock)", _parse, "", "absl")

_HELP = ("help", "helpshort", "helpfull", "?")


def run(main=None, argv=None):
    """``tf.app.run``: parses the flags in ``argv`` (``sys.argv``),
    passing unknown ones on, and exits with ``main(remaining_argv)``
    (``__main__.main`` by default). ``--help`` and its kin print the
    flags and exit 1, as absl does."""
    argv = sys.argv if argv is None else argv
    args = FLAGS(argv, known_only=True)
    before_end = args[1:args.index("--")] if "--" in args else args[1:]
    if any(a.startswith("-") and a.lstrip("-") in _HELP for a in before_end):
        print(FLAGS._help(argv[0]))
        sys.exit(1)
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
