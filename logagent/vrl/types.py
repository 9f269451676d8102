"""What the compiler knows of values before running: kinds, known object fields, scopes.

``Type`` is the set of kinds an expression may have, plus the fields known
to be present when it is an object (from an object literal, an assignment,
or a function's ``TypeDef.fields``). ``TypeState`` follows the event's and
the metadata's paths through assignments in program order, and the local
variables through their scopes (a variable first assigned inside a block
exists only there, as in VRL).
"""

from __future__ import annotations

from typing import Any

from msgspec import Struct

from .runtime import kind_or_none
from .value import Kind

Segments = tuple[str | int, ...]


class Type(Struct, frozen=True):
    kinds: Kind
    fields: dict[str, Type] | None = None  # known fields of an object (exact when kinds is OBJECT)
    items: tuple[Type, ...] | None = None  # known items of an array literal
    #: ``fields`` are the fields known so far of an object that may have others (any type), as VRL
    #: knows ``.x`` after ``.x = "a"`` on an event of unknown shape
    open: bool = False
    #: the type of every item of an array of unknown length (``unnest``'s copies, a function's known items)
    element: Type | None = None

    def union(self, other: Type) -> Type:
        """Either of two types (after branches): known fields and items of both stay known, as in VRL."""
        if self == other:
            return self
        kinds = self.kinds | other.kinds
        if kinds == Kind.OBJECT and self.fields is not None and other.fields is not None:
            fields = {key: self.field(key).union(other.field(key)) for key in {**self.fields, **other.fields}}
            return Type(Kind.OBJECT, fields, open=self.open or other.open)
        if kinds == Kind.ARRAY and self.items is not None and other.items is not None \
                and len(self.items) == len(other.items):
            return Type(Kind.ARRAY, None, tuple(a.union(b) for a, b in zip(self.items, other.items)))
        if kinds == Kind.ARRAY:
            mine, theirs = _known_items(self), _known_items(other)
            if mine is not _UNKNOWN and theirs is not _UNKNOWN:  # an empty literal adds no item kind, as in VRL
                if mine is None or theirs is None:
                    element = theirs if mine is None else mine
                    return Type(Kind.ARRAY, None, ()) if element is None else Type(Kind.ARRAY, element=element)
                return Type(Kind.ARRAY, element=mine.union(theirs))  # type: ignore[union-attr]
        return Type(kinds)

    def field(self, key: str) -> Type:
        """The type of ``key`` of an object of known fields (absent: null, or anything when it is open)."""
        assert self.fields is not None
        found = self.fields.get(key)
        return found if found is not None else ANY if self.open else NULL

    def at(self, segments: Segments) -> Type:
        """The type of the value at ``segments`` below a value of this type."""
        current: Type = self
        for segment in segments:
            if type(segment) is str:
                if current.kinds == Kind.OBJECT and current.fields is not None:
                    inner = current.fields.get(segment)
                    current = inner if inner is not None else ANY if current.open else NULL
                elif not current.kinds & Kind.OBJECT:
                    return NULL
                else:
                    return ANY
            else:
                if current.kinds == Kind.ARRAY and current.items is not None:
                    items = current.items
                    current = items[segment] if -len(items) <= segment < len(items) else NULL
                elif current.kinds == Kind.ARRAY and current.element is not None:
                    current = current.element.union(NULL)  # an index of an array of unknown length may be past its end
                elif not current.kinds & Kind.ARRAY:
                    return NULL
                else:
                    return ANY
        return current


ANY = Type(Kind.ANY)
NULL = Type(Kind.NULL)
BOOLEAN = Type(Kind.BOOLEAN)
BYTES = Type(Kind.BYTES)
OBJECT = Type(Kind.OBJECT)


def type_of_constant(value: Any) -> Type:
    if type(value) is dict:
        return Type(Kind.OBJECT, {key: type_of_constant(item) for key, item in value.items()})
    if type(value) is list:
        return Type(Kind.ARRAY, None, tuple(type_of_constant(item) for item in value))
    return Type(kind_or_none(value))


_UNKNOWN = object()


def _known_items(array: Type) -> Type | None | object:
    """The type of every item of an array type; None for the empty literal; _UNKNOWN when nothing is known."""
    if array.element is not None:
        return array.element
    if array.items is None:
        return _UNKNOWN
    return item_type(array) if array.items else None


def item_type(array: Type) -> Type:
    """What any item of an array of this type is (anything when nothing is known of its items)."""
    if array.kinds != Kind.ARRAY:
        return ANY
    if array.element is not None:
        return array.element
    if not array.items:
        return ANY
    result = array.items[0]
    for item in array.items[1:]:
        result = result.union(item)
    return result


def with_field(base: Type, segments: Segments, value: Type) -> Type:
    """``base`` after ``segments`` was set to ``value``."""
    if not segments:
        return value
    segment = segments[0]
    if type(segment) is str:
        if base.kinds == Kind.OBJECT and base.fields is not None:
            fields = dict(base.fields)
            fields[segment] = with_field(fields.get(segment, ANY if base.open else NULL), segments[1:], value)
            return Type(Kind.OBJECT, fields, open=base.open)
        if base.kinds & Kind.OBJECT:  # an object of unknown fields, or something else replaced by an object
            return Type(Kind.OBJECT, {segment: with_field(ANY, segments[1:], value)}, open=True)
        return Type(Kind.OBJECT, {segment: with_field(NULL, segments[1:], value)})
    return Type(Kind.ARRAY)


def without_field(base: Type, segments: Segments) -> Type:
    """``base`` after ``del`` at ``segments``: null in an object of known fields, unknown in an open one.

    A value of which nothing is known at the path (not an object, or an object of unknown fields) stays
    as it was: a ``del`` makes no object. An index forgets the array's known items.
    """
    segment = segments[0]
    if type(segment) is not str:
        return Type(base.kinds) if base.kinds & Kind.ARRAY else base
    if base.kinds != Kind.OBJECT or base.fields is None:
        return base
    if len(segments) > 1:
        inner = base.fields.get(segment)
        if inner is None:
            return base
        return Type(Kind.OBJECT, {**base.fields, segment: without_field(inner, segments[1:])}, open=base.open)
    if not base.open:
        return with_field(base, segments, NULL)
    return Type(Kind.OBJECT, {k: v for k, v in base.fields.items() if k != segment}, open=True)


def deleted(base: Type, segments: Segments, compact: bool | None) -> Type:
    """``base`` after ``del(path, compact)`` (None: not a constant). As VRL, unless ``compact`` is false the
    containers on the path the delete may have left empty may be gone too."""
    plain = without_field(base, segments)
    if compact is False:
        return plain
    compacted = plain
    for depth in range(len(segments) - 1, 0, -1):
        if not _may_be_empty(compacted.at(segments[:depth])):
            break
        compacted = without_field(compacted, segments[:depth])
    return plain if compacted is plain else plain.union(compacted)


def _may_be_empty(container: Type) -> bool:
    if container.kinds == Kind.OBJECT:
        return container.fields is not None and not container.open and all(
            field == NULL for field in container.fields.values())
    return container.kinds == Kind.ARRAY and container.items == ()


class Scope:
    __slots__ = ("variables", "parent")

    def __init__(self, parent: Scope | None) -> None:
        self.variables: dict[str, tuple[int, Type]] = {}
        self.parent = parent


class TypeState:
    """Types of the event, the metadata and the variables at one point of the program."""

    def __init__(self) -> None:
        self.roots: dict[str, Type] = {".": OBJECT, "%": Type(Kind.OBJECT, {})}
        self.scope = Scope(None)
        self.slots = 0

    # -- event and metadata --------------------------------------------------

    def path_type(self, root: str, segments: Segments) -> Type:
        return self.roots[root].at(segments)

    def assign_path(self, root: str, segments: Segments, value: Type) -> None:
        self.roots[root] = with_field(self.roots[root], segments, value)

    # -- variables -----------------------------------------------------------

    def lookup(self, name: str) -> tuple[int, Type] | None:
        scope: Scope | None = self.scope
        while scope is not None:
            found = scope.variables.get(name)
            if found is not None:
                return found
            scope = scope.parent
        return None

    def assign_variable(self, name: str, value: Type) -> int:
        scope: Scope | None = self.scope
        while scope is not None:
            found = scope.variables.get(name)
            if found is not None:
                scope.variables[name] = (found[0], value)
                return found[0]
            scope = scope.parent
        slot = self.slots
        self.slots += 1
        self.scope.variables[name] = (slot, value)
        return slot

    def declare(self, name: str, value: Type) -> int:
        """A new variable of the current scope (shadowing any outer one of that name): its slot."""
        slot = self.slots
        self.slots += 1
        self.scope.variables[name] = (slot, value)
        return slot

    def enter(self) -> None:
        self.scope = Scope(self.scope)

    def leave(self) -> None:
        assert self.scope.parent is not None
        self.scope = self.scope.parent

    def snapshot(self) -> tuple[dict[str, Type], list[dict[str, tuple[int, Type]]]]:
        scopes = []
        scope: Scope | None = self.scope
        while scope is not None:
            scopes.append(dict(scope.variables))
            scope = scope.parent
        return dict(self.roots), scopes

    def restore(self, state: tuple[dict[str, Type], list[dict[str, tuple[int, Type]]]]) -> None:
        roots, scopes = state
        self.roots = dict(roots)
        scope: Scope | None = self.scope
        for variables in scopes:
            assert scope is not None
            scope.variables = dict(variables)
            scope = scope.parent

    def join(self, states: list[tuple[dict[str, Type], list[dict[str, tuple[int, Type]]]]]) -> None:
        """After branches: every type is the union of the branches' (each a snapshot)."""
        first_roots, first_scopes = states[0]
        roots = dict(first_roots)
        for other_roots, _ in states[1:]:
            for root, kind in other_roots.items():
                roots[root] = roots[root].union(kind)
        self.roots = roots
        scope: Scope | None = self.scope
        depth = 0
        while scope is not None:
            for name in list(scope.variables):
                slot, kind = first_scopes[depth].get(name, scope.variables[name])
                for _, other_scopes in states[1:]:
                    kind = kind.union(other_scopes[depth].get(name, (slot, kind))[1])
                scope.variables[name] = (slot, kind)
            scope = scope.parent
            depth += 1
