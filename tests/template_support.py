"""The stack's template.yaml as data (CloudFormation's tags kept as values): for tests of what the stack declares."""

from __future__ import annotations

from typing import Any

import yaml

from tests.conftest import REPO


class _CfnLoader(yaml.SafeLoader):
    pass


def _tagged(loader: yaml.SafeLoader, suffix: str, node: yaml.Node) -> Any:
    if isinstance(node, yaml.ScalarNode):
        return loader.construct_scalar(node)
    if isinstance(node, yaml.SequenceNode):
        return loader.construct_sequence(node, deep=True)
    return loader.construct_mapping(node, deep=True)  # type: ignore[arg-type]


_CfnLoader.add_multi_constructor("!", _tagged)
TEMPLATE = yaml.load((REPO / "template.yaml").read_text(), Loader=_CfnLoader)  # a safe loader, tags kept as data
