"""``python -m crux_lab`` is the ``crux-lab`` command."""

from crux_lab.cli import main

if __name__ == "__main__":  # guarded: pytest --doctest-modules imports this module
    main()
