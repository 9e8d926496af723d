"""State one process keeps per database and shares between the stores (connections) of
that database: the in-memory vector index, the notes' mean vectors."""

from __future__ import annotations

import threading
import weakref
from collections.abc import Callable
from typing import Generic, TypeVar

T = TypeVar("T")


class PerDatabase(Generic[T]):
    """One object per database key (its resolved path), made by ``factory`` on first use
    and freed when no store holds it any more. Thread-safe."""

    def __init__(self, factory: Callable[[], T]) -> None:
        self._factory = factory
        self._objects: weakref.WeakValueDictionary[str, T] = weakref.WeakValueDictionary()
        self._lock = threading.Lock()

    def get(self, key: str) -> T:
        with self._lock:
            obj = self._objects.get(key)
            if obj is None:
                obj = self._factory()
                self._objects[key] = obj
            return obj
