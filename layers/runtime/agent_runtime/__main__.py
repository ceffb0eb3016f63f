"""``python -m agent_runtime`` is the ``agent-runtime`` command."""

from __future__ import annotations

import sys

from .cli import main

sys.exit(main())
