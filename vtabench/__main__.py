import sys

from vtabench.cli import main

sys.exit(main())
