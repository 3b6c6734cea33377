"""The autograd core: the article's machine, and nothing else.

    engine     `Value`: a number (or one number per sample), its gradient, and the
               closure that passes gradient to its inputs; `backward()`
    ops        the one table of op knowledge: each op's forward and local derivative
    nn         `Neuron`, `Layer`, `MLP`: a PyTorch-shaped module library on `Value`
    optim      SGD, momentum, Adam, schedules
    losses     the loss functions, one record each
    phases     the four phases of a training step, by name
    features   input features computed by the engine (x₁², sin x₁, ...)
    gradcheck  gradients against finite differences
    collector  when Python's cyclic garbage collector may run while graphs are built

May import: numpy and the standard library. Never `gradbox.training`, `.files`,
`.teaching`, `.graph` or `.views` (tests/test_architecture.py checks).
"""
