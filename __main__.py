import sys

from .cli import main

# Guarded: batch workers are spawned processes that import this module again.
if __name__ == "__main__":
    sys.exit(main())
