"""Which results of the CUDA attention ops the torch.compile backend
replaces by stand-ins (backend._is_attention_extra): the forward ops'
sequence lengths, debug masks and, without dropout, RNG state; never a
gradient of their backward ops (result 2 of the memory-efficient and flash
backwards is the gradient of the values). Graphs built by hand with ops
named as ATen's, so this runs on any torch."""

import operator

import pytest
import torch

from fuse.backend import _is_attention_extra


class NamedOp:
    """A call target whose name is an ATen overload's."""

    def __init__(self, name):
        self.name = name
        self.__name__ = name.split(".")[1]

    def __call__(self, *args):
        raise AssertionError("never run")

    def __str__(self):
        return self.name


def _result(op, index, *arguments):
    graph = torch.fx.Graph()
    inputs = [graph.placeholder(f"x{i}") for i in range(3)]
    call = graph.call_function(NamedOp(op), tuple(inputs) + arguments)
    return graph.call_function(operator.getitem, (call, index))


@pytest.mark.parametrize("op", ["aten._scaled_dot_product_efficient_attention_backward.default",
                                "aten._scaled_dot_product_flash_attention_backward.default"])
def test_the_gradient_of_the_values_is_a_real_result(op):
    assert not _is_attention_extra(_result(op, 2, 0.0))


def test_the_forward_ops_extras_are_stand_ins_and_their_rng_state_is_real_with_dropout():
    efficient = "aten._scaled_dot_product_efficient_attention.default"
    flash = "aten._scaled_dot_product_flash_attention.default"
    assert not _is_attention_extra(_result(efficient, 0, None, True, 0.0))  # the output
    assert not _is_attention_extra(_result(efficient, 1, None, True, 0.0))  # the log-sum-exp
    assert _is_attention_extra(_result(efficient, 2, None, True, 0.0))  # seed, nothing dropped
    assert not _is_attention_extra(_result(efficient, 2, None, True, 0.1))  # seed a backward draws from
    assert _is_attention_extra(_result(flash, 2, 0.1))  # cumulative sequence lengths
    assert _is_attention_extra(_result(flash, 6, 0.0))
    assert not _is_attention_extra(_result(flash, 6, 0.1))
