"""rollsim's Python tools: read result files, plot them, convert them to MATLAB .mat, and the validation report.

    import rollsim
    r = rollsim.load("run.h5")          # rollsim.h5.load: a RollsimResult
    figs = rollsim.plot.figures(r)      # matplotlib figures (import rollsim.plot first)

Modules: ``h5`` (the loader), ``plot`` (figures; tools/plot), ``mat`` (.mat export; tools/h5tomat),
``report`` (the validation report; tools/report), ``disk_closed_form`` (the rolling disk's closed form, the
report's independent reference).  Only ``h5`` is imported here: matplotlib and scipy load on first use.
"""

__all__ = ["load", "swept_keys", "energy_ledger", "energy_scale", "EnergyLedger", "RollsimResult", "Table",
           "RollsimFileError", "IncompleteFileError", "FORMAT_NAME", "SUPPORTED_FORMAT_VERSION"]

from .h5 import (
    FORMAT_NAME,
    SUPPORTED_FORMAT_VERSION,
    EnergyLedger,
    IncompleteFileError,
    RollsimFileError,
    RollsimResult,
    Table,
    energy_ledger,
    energy_scale,
    load,
    swept_keys,
)

__version__ = "0.1.0"
