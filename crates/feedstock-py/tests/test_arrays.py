import numpy as np
import pytest

from feedstock import _native


@pytest.mark.parametrize(
    "dtype", ["bool", "uint8", "int8", "uint16", "int16", "uint32", "int32", "uint64", "int64", "float32", "float64"]
)
def test_numeric_tensors_round_trip_with_shape_and_dtype(dtype):
    src = (np.arange(24) % 7).astype(dtype).reshape(2, 3, 4)
    got = _native.roundtrip(src, dtype)
    assert got.dtype == np.dtype(dtype)
    assert got.shape == (2, 3, 4)
    np.testing.assert_array_equal(got, src)


def test_arrays_reference_the_rust_buffer_without_a_copy():
    got = _native.roundtrip(np.arange(12, dtype=np.float32), "float32").reshape(3, 4)
    # The array is a view over a buffer numpy did not allocate: its base
    # chain ends in the object that owns the Rust Vec.
    base = got
    while isinstance(base.base, np.ndarray):
        base = base.base
    assert base.base is not None and not isinstance(base.base, np.ndarray)
    assert got.flags["C_CONTIGUOUS"]


def test_strings_are_object_arrays_of_bytes():
    got = _native.roundtrip(np.array([[b"a", b""], [b"\xff\x00", "é"]], dtype=object), "string")
    assert got.dtype == object and got.shape == (2, 2)
    assert got.tolist() == [[b"a", b""], [b"\xff\x00", "é".encode()]]


def test_scalars_are_zero_dimensional():
    got = _native.roundtrip(np.float64(2.5), "float64")
    assert got.shape == () and got[()] == 2.5


def test_non_bytes_in_a_string_tensor_is_a_type_error():
    with pytest.raises(TypeError, match="expected bytes or str"):
        _native.roundtrip(np.array([1, 2], dtype=object), "string")


# ------------------------------------------------ float16, bfloat16, complex

ml_dtypes = pytest.importorskip("ml_dtypes")

NEW_DTYPES = {
    "float16": np.array([[0.5, -2.0, 65504.0], [np.inf, -0.0, 1e-7]], dtype=np.float16),
    "bfloat16": np.array([[0.5, -2.0, 3.0e38], [np.inf, -0.0, 1.0e-30]], dtype=ml_dtypes.bfloat16),
    "complex64": np.array([[1 + 2j, -0.5j, 3], [np.inf, 0, 1e-3 - 1e3j]], dtype=np.complex64),
    "complex128": np.array([[1 + 2j, -0.5j, 3], [np.inf, 0, 1e-300 - 1e300j]], dtype=np.complex128),
}


def _owner(a):
    """The object at the end of an array's base chain."""
    while isinstance(a.base, np.ndarray):
        a = a.base
    return a.base


@pytest.mark.parametrize("dtype", sorted(NEW_DTYPES))
def test_half_bfloat16_and_complex_round_trip_without_a_copy(dtype):
    src = NEW_DTYPES[dtype]
    got = _native.roundtrip(src, dtype)
    assert got.dtype == src.dtype and got.shape == (2, 3)
    # Bit for bit (0.0 and -0.0 differ; inf stays inf).
    assert got.tobytes() == src.tobytes()
    owner = _owner(got)
    assert owner is not None and not isinstance(owner, np.ndarray)


def test_values_convert_to_the_tensor_dtype():
    # Python floats into a float16 tensor and ints into a complex one,
    # with numpy's conversion rules.
    np.testing.assert_array_equal(_native.roundtrip([1.0, 0.1], "float16"), np.array([1.0, 0.1], np.float16))
    got = _native.roundtrip([1, 2], "complex64")
    assert got.dtype == np.complex64 and got.tolist() == [1 + 0j, 2 + 0j]
