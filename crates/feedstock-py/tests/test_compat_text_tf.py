"""compat.v1's text ops against TensorFlow 2.21 (``tensorflow.compat.v1``,
graph mode): ``tf.strings.length``, ``substr`` and ``regex_replace``,
values and errors observed there."""

import pytest

import feedstock.compat.v1 as tf
from feedstock import errors

WORDS = ["hello", "h\u00e9llo", "", "ab"]

def test_string_length_as_tensorflow():
    # Observed with TensorFlow 2.21: bytes by default, UTF-8 characters
    # with unit="UTF8_CHAR" (the second positional argument is the name).
    g = tf.Graph()
    with g.as_default():
        n = tf.strings.length([["a", "bcd"]], name="n")
        assert str(n) == 'Tensor("n:0", shape=(1, 2), dtype=int32)'
        word = tf.constant("h\u00e9llo")
        with tf.Session() as sess:
            assert sess.run(n).tolist() == [[1, 3]]
            assert sess.run(tf.strings.length(word)) == 6
            assert sess.run(tf.strings.length(word, unit="UTF8_CHAR")) == 5
            assert sess.run(tf.strings.join(["a", "b"], separator="-")) == b"a-b"
        with pytest.raises(TypeError, match="Input 'input' of 'StringLength' Op has type int32"):
            tf.strings.length(tf.constant([1, 2]))
        with pytest.raises(ValueError, match="Attr 'unit' of 'StringLength' Op passed string 'X'"):
            tf.strings.length("ab", unit="X")


@pytest.mark.parametrize("pos, length, unit, want", [
    (0, 3, "BYTE", [b"hel", b"h\xc3\xa9", b"", b"ab"]),
    (0, 10, "BYTE", [b"hello", b"h\xc3\xa9llo", b"", b"ab"]),
    (0, -1, "BYTE", [b"hello", b"h\xc3\xa9llo", b"", b"ab"]),
    ([0, 1, 0, 1], [1, 2, 3, 4], "BYTE", [b"h", b"\xc3\xa9", b"", b"b"]),
])
def test_substr_as_tensorflow(pos, length, unit, want):
    with tf.Graph().as_default():
        t = tf.substr(tf.constant(WORDS), pos, length, unit=unit)
        assert str(t) == 'Tensor("Substr:0", shape=(4,), dtype=string)'
        with tf.Session() as sess:
            assert sess.run(t).tolist() == want


@pytest.mark.parametrize("word, pos, length, unit, want", [
    ("hello", 5, 2, "BYTE", b""),
    ("hello", -5, 2, "BYTE", b"he"),
    ("h\u00e9llo", 1, 3, "UTF8_CHAR", "\u00e9ll".encode()),
    ("h\u00e9llo", -2, 5, "UTF8_CHAR", b"lo"),
])
def test_substr_of_one_string(word, pos, length, unit, want):
    with tf.Graph().as_default(), tf.Session() as sess:
        assert sess.run(tf.strings.substr(tf.constant(word), pos, length, unit=unit)) == want


@pytest.mark.parametrize("words, pos, unit, message", [
    (WORDS, -2, "BYTE", "pos -2 out of range for string b'' at index 2"),
    (WORDS, 1, "UTF8_CHAR", "pos 1 out of range for string at index 2"),
    (WORDS, 1, "BYTE", "pos 1 out of range for string b'' at index 2"),
    (["hello"], 6, "BYTE", "pos 6 out of range for string b'hello' at index 0"),
    (["hello"], -6, "BYTE", "pos -6 out of range for string b'hello' at index 0"),
])
def test_a_pos_past_either_end_fails_when_run(words, pos, unit, message):
    with tf.Graph().as_default(), tf.Session() as sess:
        t = tf.strings.substr(tf.constant(words), pos, 2, unit=unit)
        with pytest.raises(errors.InvalidArgumentError, match=message):
            sess.run(t)


@pytest.mark.parametrize("pattern, rewrite, everywhere, want", [
    ("l+", "L", True, [b"heLo", b"h\xc3\xa9Lo", b"", b"ab"]),
    ("(h)(.)", "\\2\\1\\\\", False, [b"eh\\llo", b"\xc3\xa9h\\llo", b"", b"ab"]),
    ("l", "[\\0]", True, [b"he[l][l]o", b"h\xc3\xa9[l][l]o", b"", b"ab"]),
    ("", "-", True, [b"-h-e-l-l-o-", b"-h-\xc3\xa9-l-l-o-", b"-", b"-a-b-"]),
    ("l", "\\3", True, [b"hello", b"h\xc3\xa9llo", b"", b"ab"]),
    ("[[:alpha:]]", "$", True, [b"$$$$$", b"$\xc3\xa9$$$", b"", b"$$"]),
    ("\u00e9", "e", True, [b"hello", b"hello", b"", b"ab"]),
])
def test_regex_replace_as_tensorflow(pattern, rewrite, everywhere, want):
    with tf.Graph().as_default():
        t = tf.strings.regex_replace(tf.constant(WORDS), pattern, rewrite, replace_global=everywhere)
        assert t.name == "StaticRegexReplace:0"
        with tf.Session() as sess:
            assert sess.run(t).tolist() == want


def test_regex_replace_names_and_bad_patterns():
    with tf.Graph().as_default(), tf.Session() as sess:
        t = tf.regex_replace(tf.constant([["a.b", "c"]]), r"\.", "/", name="rr")
        assert str(t) == 'Tensor("rr:0", shape=(1, 2), dtype=string)'
        assert sess.run(t).tolist() == [[b"a/b", b"c"]]
        # TensorFlow 2.21 refuses the pattern when run.
        bad = tf.strings.regex_replace(tf.constant(WORDS), "(", "x")
        with pytest.raises(errors.InvalidArgumentError, match=r"Invalid pattern: \(, error:"):
            sess.run(bad)
