"""Vector Remap Language: values, the function contract, the standard library.

``value.py`` is the value model every part of the language shares;
``function.py`` is the contract between the compiler and the functions of
``stdlib/``.
"""
