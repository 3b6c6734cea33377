"""gradbox: a scalar autograd engine you can watch run."""

from pathlib import Path

from gradbox.autograd.engine import Value
from gradbox.autograd.nn import MLP, Layer, Module, Neuron

__all__ = ["MLP", "Layer", "Module", "Neuron", "Value"]
__version__ = "0.1.0"


def resource(name: str) -> Path:
    """A file of resources/ (the icon, the fonts): inside the installed package, or beside
    the sources in a checkout (an editable install)."""
    installed = Path(__file__).resolve().parent / "resources" / name
    return installed if installed.exists() else Path(__file__).resolve().parents[2] / \
        "resources" / name
