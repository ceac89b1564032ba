"""`python -m ember run script.py` (same as the `ember` console script)."""
import sys

from .cli import main

sys.exit(main())
