"""Worker entry point: run the training script (or `-m module`) with `torch` resolving to
ember, exactly as `ember run` does, so unmodified PyTorch programs train under the launcher."""
import runpy
import sys

from ...cli import install_torch_alias


def main(argv):
    install_torch_alias()
    if argv and argv[0] == "-m":
        sys.argv = argv[1:]
        runpy.run_module(argv[1], run_name="__main__", alter_sys=True)
    else:
        import os
        sys.argv = argv
        sys.path.insert(0, os.path.dirname(os.path.abspath(argv[0])))
        runpy.run_path(argv[0], run_name="__main__")


if __name__ == "__main__":
    main(sys.argv[1:])
