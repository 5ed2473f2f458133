# The package's version, in one place: setup.py reads it from this file
# (without importing the package), and reduce_op.__version__ is this.
__version__ = "0.1.0"
