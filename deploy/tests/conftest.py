import sys
from pathlib import Path

# deploy/tools is not a package: its scripts are run by path, and imported here.
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tools"))
