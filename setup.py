"""The optional compiled core (``tokstream._native``); everything else is in pyproject.toml.

``optional=True``: where the C compiler is missing or fails, setuptools warns and the
install goes on without it, and tokstream runs its pure-Python path
(``tokstream.native_available()`` says which one runs).
"""

from setuptools import Extension, setup

setup(
    ext_modules=[
        Extension(
            "tokstream._native",
            ["tokstream/_native.c", "tokstream/_native_text.c", "tokstream/_native_keys.c", "tokstream/_native_walk.c"],
            depends=["tokstream/_native.h"],
            optional=True,
            extra_compile_args=["-O3", "-std=c99"],
        )
    ]
)
