"""YAML a user wrote, read as `yaml.safe_load` reads it, with what it may expand to bounded.

`safe_load` shares an anchored value among its aliases, so nine lines of aliases to aliases
(a "billion laughs") load in a moment, but the first walk over the value, a `repr` in an
error message or a fingerprint of the setup, visits it 10**9 times (until
`MemoryError`). An alias that refers to itself makes a value no walk ends, and a value
nested 100,000 deep stops the composer with a `RecursionError`. Each is refused here as a
`yaml.YAMLError` with its line, which every reader of YAML already reports in one line.
"""

from __future__ import annotations

from typing import Any

import yaml  # type: ignore[import-untyped,unused-ignore]

#: Values (scalars, lists, mappings) a file may stand for once every alias is written out:
#: far more than a sweep file, a rubric or a config holds.
MAX_VALUES = 100_000


def load_yaml(text: str | bytes, *, max_values: int = MAX_VALUES) -> Any:
    """`yaml.safe_load(text)`, refusing with a `yaml.YAMLError` a document whose aliases
    expand past `max_values` values, one that contains itself, or one nested too deep."""
    loader = yaml.SafeLoader(text)
    try:
        try:
            node = loader.get_single_node()
        except RecursionError:
            raise yaml.composer.ComposerError(
                None, None, "lists or mappings nested too deep to read (hundreds of levels)"
            ) from None
        if node is None:
            return None
        _check_expansion(node, max_values)
        return loader.construct_document(node)
    finally:
        loader.dispose()


def _children(node: yaml.Node) -> list[yaml.Node]:
    if isinstance(node, yaml.SequenceNode):
        return list(node.value)
    if isinstance(node, yaml.MappingNode):
        return [part for pair in node.value for part in pair]
    return []


def _check_expansion(root: yaml.Node, limit: int) -> None:
    """Count the values `root` stands for with its aliases written out, without writing
    them out: each node's count once, from its children's (an iterative walk, so depth
    costs no recursion)."""
    sizes: dict[int, int] = {}
    open_nodes: set[int] = set()  # the nodes being counted: the current one's ancestors
    stack: list[tuple[yaml.Node, bool]] = [(root, False)]
    while stack:
        node, counted_children = stack.pop()
        key = id(node)
        if counted_children:
            open_nodes.discard(key)
            size = 1 + sum(sizes[id(child)] for child in _children(node))
            if size > limit:
                raise yaml.composer.ComposerError(
                    None,
                    None,
                    f"expected at most {limit:,} values once its aliases are written out, "
                    f"found more from this value on (an alias bomb?); write the values out "
                    f"or use fewer aliases",
                    node.start_mark,
                )
            sizes[key] = size
            continue
        if key in sizes:
            continue
        if key in open_nodes:
            raise yaml.composer.ComposerError(
                None,
                None,
                "an alias inside the value it refers to (a value that contains itself); "
                "write the value out",
                node.start_mark,
            )
        open_nodes.add(key)
        stack.append((node, True))
        stack.extend((child, False) for child in _children(node) if id(child) not in sizes)
