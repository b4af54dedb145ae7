"""One way to extend crux_lab: a named registry per kind of plug-in.

Engines, backends, metrics and CLI commands each keep one :class:`Registry`. A plug-in module
adds itself with the registry's decorator where its object is defined, the way simonw/llm's
plug-ins register with a hook. The registry finds its plug-in modules through a Python
entry-point group (``crux_lab.engines``, ``crux_lab.backends``, ``crux_lab.metrics``,
``crux_lab.commands``; :mod:`importlib.metadata`), crux_lab's own included (its
``pyproject.toml``), and imports them on first lookup, so nothing heavy loads before it is
asked for. A plug-in that fails to import, or that takes a name already registered, is left
out and described in one line (:attr:`Registry.problems`); the others keep working.

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

import functools
import importlib
from collections.abc import Callable, Iterator, Sequence
from importlib import metadata
from pathlib import Path
from typing import Any, Generic, TypeVar

T = TypeVar("T")

__all__ = ["DuplicateName", "Registry", "UnknownName", "entry_points", "import_modules", "resolve"]

# The distribution whose entry points are crux_lab's own (listed first, in `order`).
OWN_PACKAGE = "crux_lab"


class UnknownName(LookupError):
    """A name no plug-in registered; the message lists the valid ones."""

    def __str__(self) -> str:  # LookupError would quote the message
        return str(self.args[0])


class DuplicateName(ValueError):
    """Two different plug-ins registered the same name."""

    def __init__(self, message: str, name: str = "", first: str = "") -> None:
        super().__init__(message)
        self.name = name
        self.first = first


@functools.cache
def _installed_entry_points(group: str) -> tuple[metadata.EntryPoint, ...]:
    return tuple(metadata.entry_points(group=group))


def _package(ep: metadata.EntryPoint) -> str:
    dist = getattr(ep, "dist", None)
    return str(dist.name) if dist is not None else OWN_PACKAGE


def _own_from_source(group: str) -> list[metadata.EntryPoint]:
    """crux_lab's own entry points from the ``pyproject.toml`` beside the package: a checkout
    whose installed metadata predates them (installed before they were added) still works."""
    pyproject = Path(__file__).resolve().parent.parent / "pyproject.toml"
    if not pyproject.is_file():
        return []
    import tomllib

    try:
        project = tomllib.loads(pyproject.read_text(encoding="utf-8")).get("project", {})
    except (OSError, tomllib.TOMLDecodeError):
        return []
    if project.get("name") != OWN_PACKAGE:
        return []
    table = project.get("entry-points", {}).get(group, {})
    return [metadata.EntryPoint(name, value, group) for name, value in table.items()]


def entry_points(group: str) -> list[metadata.EntryPoint]:
    """The entry points of ``group``: crux_lab's own first, then other packages' by package
    and name (a stable order whatever the install order)."""
    found = list(_installed_entry_points(group))
    own = [ep for ep in found if _package(ep) == OWN_PACKAGE] or _own_from_source(group)
    others = sorted((ep for ep in found if _package(ep) != OWN_PACKAGE), key=lambda ep: (_package(ep), ep.name))
    return [*own, *others]


def import_modules(group: str, *, own_only: bool = False) -> list[str]:
    """Import the module of every entry point of ``group`` (with ``own_only``, crux_lab's own
    only), for what importing it declares besides its entry: an engine module declares its
    purposes and the simulator's answers to them. A module that fails to import is skipped
    (its registry leaves it out and says why when it loads); returns the modules imported.
    """
    done: list[str] = []
    for ep in entry_points(group):
        if own_only and _package(ep) != OWN_PACKAGE:
            continue
        try:
            importlib.import_module(ep.module)
        except Exception:  # a broken plug-in never breaks the rest
            continue
        done.append(ep.module)
    return done


class Registry(Generic[T]):
    """Plug-ins of one kind (``engine``, ``backend``, ``metric``, ``command``), by name, in a
    stable order.

    On the first lookup the registry imports ``plugins`` (modules, in that order), then loads
    every entry point of ``group``. An entry point ``name = "module:attribute"`` imports the
    module, whose decorator registers the object; an object no decorator registered is added
    under the entry point's name (``lazy``: the reference itself is, without importing it). An
    entry point ``name = "module"`` registers whatever that module registers.

    The order of :meth:`names` is ``order`` (crux_lab's own listing order), then the order the
    plug-ins were loaded in (``plugins``, then the entry points: crux_lab's own, then other
    packages'), whichever module happened to be imported first; entries from other modules (a
    test's fake) follow.
    """

    def __init__(
        self, kind: str, plugins: Sequence[str] = (), *, group: str | None = None,
        order: Sequence[str] = (), lazy: bool = False, adopt: Callable[[str, Any], T] | None = None,
    ) -> None:
        self.kind = kind
        self.plugins = tuple(plugins)
        self.group = group
        self.order = tuple(order)
        self.lazy = lazy
        # Turns an entry point's object that no decorator registered into an entry (or raises
        # TypeError saying what it lacks); None adds the object itself.
        self.adopt = adopt
        self.entries: dict[str, T] = {}
        # One line per plug-in left out (failed to import, or took a name already registered).
        self.problems: list[str] = []
        self._origin: dict[str, str] = {}
        self._sources: set[int] = set()
        self._loaded = False
        self._loading = False

    def register(self, name: str | None = None) -> Callable[[T], T]:
        """Decorator: add the object under ``name`` (default: its ``name`` attribute)."""

        def add(obj: T) -> T:
            self.add(name or _own_name(obj, self.kind), obj)
            return obj

        return add

    def add(self, name: str, obj: T, *, origin: str | None = None, source: object = None) -> None:
        """Add ``obj`` under ``name``. A name taken by another module's object is an error;
        the same module registering it again (a reload) replaces it. ``source`` is what a
        decorator decorated, when the entry is built from it (a metric's function)."""
        where = origin or str(getattr(obj, "__module__", "") or "")
        if name in self.entries and self._origin.get(name, where) != where:
            raise DuplicateName(
                f"{self.kind} {name!r} is registered by both {self._origin[name]} and {where}",
                name, self._origin[name],
            )
        self.entries[name] = obj
        self._origin[name] = where
        self._sources.add(id(obj if source is None else source))

    def load(self) -> None:
        """Import every plug-in once. A plug-in module listed in ``plugins`` that fails to
        import raises (naming the module); an entry point that fails, or that takes a name
        already registered, is left out with one line in :attr:`problems`."""
        if self._loaded or self._loading:
            return
        self._loading = True
        rank: dict[str, int] = {}
        try:
            for module in self.plugins:
                importlib.import_module(module)
                self._rank_module(rank, module)
            for ep in entry_points(self.group) if self.group else ():
                self._load_entry_point(ep, rank)
        finally:
            self._loading = False
        self._loaded = True
        own = {n: i for i, n in enumerate(self.order)}
        order = list(self.entries)
        ranked = sorted(order, key=lambda n: (own.get(n, len(own)), rank.get(n, len(rank)), order.index(n)))
        reordered = {n: self.entries[n] for n in ranked}
        self.entries.clear()  # in place: whoever holds the dict (a test's monkeypatch) keeps it
        self.entries.update(reordered)

    def reload(self) -> None:
        """Read the entry points again on the next lookup (after a package was installed)."""
        _installed_entry_points.cache_clear()
        self._loaded = False
        self.problems.clear()

    def _rank_module(self, rank: dict[str, int], module: str, also: str | None = None) -> None:
        for name in self.entries:
            if name not in rank and (self._origin.get(name) == module or name == also):
                rank[name] = len(rank)

    def _load_entry_point(self, ep: metadata.EntryPoint, rank: dict[str, int]) -> None:
        """Load one entry point; a failure is one line in :attr:`problems`."""
        package = _package(ep)
        where = f"{self.kind} plugin {ep.name!r} of package {package}"
        if self.lazy:
            try:
                self.add(ep.name, ep.value, origin=ep.value)  # type: ignore[arg-type]
            except DuplicateName as exc:
                self.problems.append(f"{where}: the name {exc.name!r} is already registered by {exc.first}; left out.")
            else:
                rank.setdefault(ep.name, len(rank))
            return
        try:
            obj = ep.load()
        except DuplicateName as exc:
            self.problems.append(f"{where}: the name {exc.name!r} is already registered by {exc.first}; left out.")
            return
        except Exception as exc:  # a broken plug-in never breaks the rest
            first = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
            self.problems.append(f"{where} failed to import ({ep.value}: {type(exc).__name__}: {first}); left out.")
            return
        if ep.attr and id(obj) not in self._sources:  # an object no decorator registered
            try:
                entry = self.adopt(ep.name, obj) if self.adopt else obj
                self.add(ep.name, entry, origin=ep.module, source=obj)
            except DuplicateName as exc:
                self.problems.append(f"{where}: the name {exc.name!r} is already registered by {exc.first}; left out.")
                return
            except TypeError as exc:
                self.problems.append(f"{where}: {ep.value} {exc}; left out.")
                return
        self._rank_module(rank, ep.module, also=ep.name)

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
