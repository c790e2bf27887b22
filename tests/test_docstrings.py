"""The shared docstring blocks: replaced where named, indented alike, a typo fails at once."""

import pytest

import rbd
from rbd._docstrings import BLOCKS, shared_doc


def test_a_named_block_is_replaced_and_indented_as_its_line():
    def f():
        """Summary.

        Raises
        ------
        {bad_input}
        """

    shared_doc(f)
    expected = "\n".join("        " + line for line in BLOCKS["bad_input"].split("\n"))
    assert expected in f.__doc__
    assert "{" not in f.__doc__


def test_an_unknown_block_fails_at_decoration():
    def f():
        """{no_such_block}"""

    with pytest.raises(KeyError, match="no_such_block"):
        shared_doc(f)


def test_braces_inside_a_line_are_left_alone():
    def f():
        """backend : {None, "kernel"} stays as written."""

    assert shared_doc(f).__doc__ == 'backend : {None, "kernel"} stays as written.'


@pytest.mark.parametrize("func", [getattr(rbd.algorithms, name) for name in rbd.algorithms.__all__])
def test_no_public_docstring_keeps_a_placeholder(func):
    for name in BLOCKS:
        assert "{" + name + "}" not in func.__doc__, func.__name__
