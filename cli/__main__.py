from __future__ import annotations

import sys

from skillc import main

sys.exit(main())
