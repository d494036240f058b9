"""Frozen view and record classes that cost a tenth of a frozen dataclass to define.

`dataclass(frozen=True)` compiles the source of four to six methods for every class it
decorates (3.5 to 4.5 million instructions each time gpulint starts, more than the class's own
code). `frozen_view` (the typed views: documents, containers, pod templates, workloads) and
`frozen_record` (records callers `dataclasses.replace`) build the same `__init__`, `__repr__`,
immutability and, for records, equality and hashing from shared functions, without compiling
anything.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from dataclasses import MISSING, Field, FrozenInstanceError, dataclass, fields
from operator import attrgetter
from typing import Any, TypeVar

_View = TypeVar("_View", bound=type)


def frozen_view(cls: _View) -> _View:
    """Give `cls` an `__init__` over its annotated fields (in order; a plain default or a
    `field(default=...)` / `field(default_factory=...)` makes a field optional), a `__repr__`
    of them (but those of `field(repr=False)`), and instances whose attributes cannot be
    assigned or deleted.

    Equality and hashing stay those of `object` (identity), as `dataclass(eq=False)` leaves
    them. `functools.cached_property` works: it writes to the instance's `__dict__`.
    """
    names: tuple[str, ...] = tuple(inspect.get_annotations(cls))
    defaults: dict[str, Any] = {}
    factories: dict[str, Callable[[], Any]] = {}
    hidden: set[str] = set()  # field(repr=False)
    for name in names:
        value = cls.__dict__.get(name, MISSING)
        if isinstance(value, Field):
            if not value.repr:
                hidden.add(name)
            if value.default_factory is not MISSING:
                factories[name] = value.default_factory
                delattr(cls, name)
            else:
                defaults[name] = value.default
                setattr(cls, name, value.default)
        elif value is not MISSING:
            defaults[name] = value
        elif defaults or factories:
            raise TypeError(f"{cls.__name__}: field {name!r} without a default follows one with")
    return _install(cls, names, defaults, factories, tuple(n for n in names if n not in hidden))


def frozen_record(cls: _View) -> _View:
    """Make `cls` a frozen dataclass that equals another of its class with equal fields (but
    those of `field(compare=False)`) and hashes alike, as `dataclass(frozen=True)` does, without
    compiling any method: `dataclasses.fields`, `replace` and `asdict` work on it.

    For records callers `dataclasses.replace`: the config, the library's options and results,
    the profile's pools.
    """
    record = dataclass(cls, init=False, repr=False, eq=False)
    names = tuple(f.name for f in fields(record))
    defaults = {f.name: f.default for f in fields(record) if f.default is not MISSING}
    factories = {
        f.name: f.default_factory for f in fields(record) if f.default_factory is not MISSING
    }
    _install(record, names, defaults, factories, tuple(f.name for f in fields(record) if f.repr))
    compared = attrgetter(*(f.name for f in fields(record) if f.compare))
    hashed = attrgetter(
        *(f.name for f in fields(record) if (f.compare if f.hash is None else f.hash))
    )

    def __eq__(self: Any, other: object) -> bool:
        if other.__class__ is self.__class__:
            return compared(self) == compared(other)  # type: ignore[no-any-return]
        return NotImplemented

    def __hash__(self: Any) -> int:
        return hash(hashed(self))

    record.__eq__ = __eq__  # type: ignore[method-assign,assignment]
    record.__hash__ = __hash__  # type: ignore[method-assign,assignment]
    return record


def _install(
    cls: _View,
    names: tuple[str, ...],
    defaults: dict[str, Any],
    factories: dict[str, Callable[[], Any]],
    shown_names: tuple[str, ...],
) -> _View:
    """Give `cls` the `__init__`, `__repr__` and immutability of a frozen record of `names`."""
    known = frozenset(names)
    count = len(names)

    def __init__(self: Any, *args: Any, **kwargs: Any) -> None:
        # The common call gives every field once: two dict updates and no loop.
        state = self.__dict__
        state.update(zip(names, args, strict=False))
        if kwargs:
            if not known.issuperset(kwargs):
                unknown = ", ".join(sorted(set(kwargs) - known))
                raise TypeError(f"{cls.__name__}() got unexpected keyword arguments: {unknown}")
            state.update(kwargs)
        if len(args) + len(kwargs) != count or len(state) != count:
            _complete(cls.__name__, state, len(args) + len(kwargs), names, defaults, factories)

    def __repr__(self: Any) -> str:
        state = self.__dict__
        shown = ", ".join(f"{name}={state[name]!r}" for name in shown_names)
        return f"{type(self).__qualname__}({shown})"

    __init__.__qualname__ = f"{cls.__qualname__}.__init__"
    __repr__.__qualname__ = f"{cls.__qualname__}.__repr__"
    cls.__init__ = __init__  # type: ignore[misc]
    cls.__repr__ = __repr__  # type: ignore[assignment]
    cls.__setattr__ = _frozen_setattr  # type: ignore[assignment]
    cls.__delattr__ = _frozen_delattr  # type: ignore[assignment]
    cls.__match_args__ = names  # type: ignore[attr-defined]
    return cls


def _frozen_setattr(self: object, name: str, value: object) -> None:
    raise FrozenInstanceError(f"cannot assign to field {name!r}")


def _frozen_delattr(self: object, name: str) -> None:
    raise FrozenInstanceError(f"cannot delete field {name!r}")


def _complete(
    name: str,
    state: dict[str, Any],
    given: int,
    names: tuple[str, ...],
    defaults: dict[str, Any],
    factories: dict[str, Callable[[], Any]],
) -> None:
    """Fill the defaults of the fields a call left out, or raise the TypeError of a bad call."""
    if given > len(names):
        raise TypeError(f"{name}() takes at most {len(names)} arguments, {given} given")
    if len(state) < given:
        raise TypeError(f"{name}() got a field both by position and by keyword")
    for field_name, default in defaults.items():
        state.setdefault(field_name, default)
    for field_name, factory in factories.items():
        if field_name not in state:
            state[field_name] = factory()
    if len(state) < len(names):
        missing = ", ".join(n for n in names if n not in state)
        raise TypeError(f"{name}() missing arguments: {missing}")
