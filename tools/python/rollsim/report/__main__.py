"""python3 -m rollsim.report [SCENARIO ...] -o report.html: the validation report (tools/report)."""
import sys

from . import main

sys.exit(main())
