"""gradbox: a scalar autograd engine you can watch run."""

from gradbox.autograd.engine import Value
from gradbox.autograd.nn import MLP, Layer, Module, Neuron

__all__ = ["MLP", "Layer", "Module", "Neuron", "Value"]
__version__ = "0.1.0"
