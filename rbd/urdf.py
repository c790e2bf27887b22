"""URDF reader and writer (in progress)."""


def load_urdf(source, floating_base=False):
    raise NotImplementedError


def to_urdf(model):
    raise NotImplementedError


def write_urdf(model, path):
    raise NotImplementedError
