import os
import sys

# The bench scripts import each other as plain modules (benchlib), as they do when run.
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
