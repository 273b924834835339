from typing import Any, Callable, Iterator, Literal, Mapping, Optional, Sequence, Union

from ._graph import Graph

__all__ = ["Pipeline"]

_Batch = Union[dict[str, Any], tuple[Any, ...]]

class Pipeline:
    batch_size: int
    num_epochs: Optional[int]
    batches: int
    examples: int
    @property
    def graph(self) -> Graph: ...
    def __init__(
        self,
        files: Union[str, Sequence[str], None] = ...,
        *,
        arrays: Union[Mapping[str, Any], Sequence[Any], None] = ...,
        format: str = ...,
        compression: Optional[str] = ...,
        reader_options: Optional[Mapping[str, Any]] = ...,
        features: Optional[Mapping[str, Any]] = ...,
        map: Optional[Callable[[Any], Any]] = ...,
        py_map: Optional[Callable[[_Batch], _Batch]] = ...,
        batch_size: int = ...,
        num_epochs: Optional[int] = ...,
        shuffle: Union[bool, Literal["global"]] = ...,
        shuffle_buffer: Optional[int] = ...,
        seed: Optional[int] = ...,
        num_threads: Optional[int] = ...,
        capacity: Optional[int] = ...,
        drop_remainder: bool = ...,
        keys: bool = ...,
    ) -> None: ...
    def shard(self, index: int, count: int, remainder: str = ..., elastic: bool = ...) -> "Pipeline": ...
    @property
    def shard_stats(self) -> Optional[dict[str, int]]: ...
    def state_dict(self) -> dict[str, Any]: ...
    def load_state_dict(self, state: Mapping[str, Any]) -> None: ...
    def start(self) -> "Pipeline": ...
    def stop(self) -> None: ...
    def __enter__(self) -> "Pipeline": ...
    def __exit__(self, *exc: Any) -> bool: ...
    def __iter__(self) -> Iterator[_Batch]: ...
    @property
    def stats(self) -> list[dict[str, Any]]: ...
    @property
    def skip_stats(self) -> Optional[dict[str, Any]]: ...
    @property
    def queue_fullness(self) -> dict[str, float]: ...
    @property
    def output_shapes(self) -> Union[dict[str, Any], tuple[Any, ...]]: ...
    def as_numpy_iterator(self) -> Iterator[_Batch]: ...

def jax_iterator(pipeline: Pipeline) -> Iterator[_Batch]: ...
