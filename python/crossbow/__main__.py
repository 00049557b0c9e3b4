import sys

from crossbow.cli import main

sys.exit(main())
