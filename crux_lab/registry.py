"""One way to extend crux_lab: a named registry per kind of plug-in.

Engines, metrics and CLI commands each keep one :class:`Registry`. A plug-in module adds
itself with the registry's decorator where its object is defined, the way simonw/llm's
plug-ins register with a hook; the registry lists its plug-in modules once and imports them
on first lookup, so nothing heavy loads before it is asked for.

>>> shapes = Registry("shape")
>>> @shapes.register("square")
... def square(x: float) -> float:
...     return x * x
>>> shapes.get("square")(3.0), shapes.names()
(9.0, ['square'])
>>> shapes.get("circle")
Traceback (most recent call last):
...
crux_lab.registry.UnknownName: unknown shape 'circle'. Valid shapes: square.

An entry may also be a reference ``"module:attribute"``, imported only by :func:`resolve`
(the CLI's sub-apps: the name is known before the module is imported).

>>> resolve("math:sqrt")(16.0)
4.0
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterator, Sequence
from typing import Any, Generic, TypeVar

T = TypeVar("T")

__all__ = ["DuplicateName", "Registry", "UnknownName", "resolve"]


class UnknownName(LookupError):
    """A name no plug-in registered; the message lists the valid ones."""

    def __str__(self) -> str:  # LookupError would quote the message
        return str(self.args[0])


class DuplicateName(ValueError):
    """Two different plug-ins registered the same name."""


class Registry(Generic[T]):
    """Plug-ins of one kind (``engine``, ``metric``, ``command``), by name, in a stable order.

    ``plugins`` are the modules that register into it; they are imported, in that order, on
    the first lookup. The order of :meth:`names` is the order of ``plugins`` (then of
    registration inside a module), whichever module happened to be imported first; entries
    from other modules (a test's fake) follow.
    """

    def __init__(self, kind: str, plugins: Sequence[str] = ()) -> None:
        self.kind = kind
        self.plugins = tuple(plugins)
        self.entries: dict[str, T] = {}
        self._origin: dict[str, str] = {}
        self._loaded = False

    def register(self, name: str | None = None) -> Callable[[T], T]:
        """Decorator: add the object under ``name`` (default: its ``name`` attribute)."""

        def add(obj: T) -> T:
            self.add(name or _own_name(obj, self.kind), obj)
            return obj

        return add

    def add(self, name: str, obj: T, *, origin: str | None = None) -> None:
        """Add ``obj`` under ``name``. A name taken by another module's object is an error;
        the same module registering it again (a reload) replaces it."""
        where = origin or str(getattr(obj, "__module__", "") or "")
        if name in self.entries and self._origin.get(name, where) != where:
            raise DuplicateName(f"{self.kind} {name!r} is registered by both {self._origin[name]} and {where}")
        self.entries[name] = obj
        self._origin[name] = where

    def load(self) -> None:
        """Import every plug-in module once (an import error propagates, naming the module)."""
        if self._loaded:
            return
        for module in self.plugins:
            importlib.import_module(module)
        self._loaded = True
        rank = {m: i for i, m in enumerate(self.plugins)}
        order = list(self.entries)
        ranked = sorted(order, key=lambda n: (rank.get(self._origin.get(n, ""), len(rank)), order.index(n)))
        reordered = {n: self.entries[n] for n in ranked}
        self.entries.clear()  # in place: whoever holds the dict (a test's monkeypatch) keeps it
        self.entries.update(reordered)

    def names(self) -> list[str]:
        self.load()
        return list(self.entries)

    def items(self) -> list[tuple[str, T]]:
        self.load()
        return list(self.entries.items())

    def get(self, name: str) -> T:
        """The entry called ``name``; an unknown name gets an error listing the valid ones."""
        self.load()
        if name not in self.entries:
            raise UnknownName(f"unknown {self.kind} '{name}'. Valid {self.kind}s: {', '.join(self.entries)}.")
        return self.entries[name]

    def __contains__(self, name: object) -> bool:
        self.load()
        return name in self.entries

    def __iter__(self) -> Iterator[str]:
        return iter(self.names())


def _own_name(obj: Any, kind: str) -> str:
    name = getattr(obj, "name", None)
    if not isinstance(name, str) or not name:
        raise TypeError(f"a {kind} registered without a name needs a `name` attribute: {obj!r}")
    return name


def resolve(ref: str) -> Any:
    """The object a ``"module:attribute"`` reference names (imports the module)."""
    module, _, attr = ref.partition(":")
    return getattr(importlib.import_module(module), attr)
