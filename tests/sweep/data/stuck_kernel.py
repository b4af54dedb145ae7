"""A kernel that never starts: it says so on stderr and never answers (argv: the connection file)."""

import os
import sys
import time

if __name__ == "__main__":  # (pytest's doctest collection imports this file too)
    print(f"stuck kernel {os.getpid()}: never answering ({sys.argv[1:]})", file=sys.stderr, flush=True)
    while True:
        time.sleep(1)
